#!/usr/bin/python3
"""Summarise a `meson test` run: one line per test case, counting each TAP
subtest of a TAP test, then the last lines of each failed test's output (CI shows only the tail
of the run), then "N passed, N failed[, N skipped]".
Exit status 1 when anything failed or nothing ran.

usage: test-summary.py MESON_TESTLOG_JSON
"""
import json
import re
import sys

TAP = re.compile(r"^(not ok|ok)\b\s*\d*\s*-?\s*(.*?)(\s+#\s*(SKIP|TODO)\b.*)?$",
                 re.IGNORECASE)
TAIL_LINES = 15


def main():
    passed = failed = skipped = 0
    tails = []
    for line in open(sys.argv[1]):
        t = json.loads(line)
        cases = []
        stdout = (t.get("stdout") or "").splitlines()
        if any(re.match(r"^1\.\.\d+", out.strip()) for out in stdout):
            for out in stdout:
                m = TAP.match(out.strip())
                if m:
                    cases.append((m.group(1).lower(), m.group(2),
                                  (m.group(4) or "").upper()))
        if not cases:
            ok = t["result"] in ("OK", "EXPECTEDFAIL")
            skip = t["result"] == "SKIP"
            cases.append(("skip" if skip else "ok" if ok else "not ok", "", ""))
        elif t["result"] not in ("OK", "SKIP", "EXPECTEDFAIL"):
            # A crash or timeout after some subtests passed still fails.
            cases.append(("not ok", "test exited with " + t["result"], ""))
        for state, name, directive in cases:
            label = "%s: %s" % (t["name"], name) if name else t["name"]
            if state == "skip" or directive == "SKIP":
                skipped += 1
                print("SKIP  " + label)
            elif state == "ok":
                passed += 1
                print("PASS  " + label)
            else:
                failed += 1
                print("FAIL  " + label)
        if t["result"] not in ("OK", "SKIP", "EXPECTEDFAIL"):
            tails.append((t["name"], t["result"], t.get("returncode"),
                          t.get("stdout") or "", t.get("stderr") or ""))
    for name, result, rc, out, err in tails:
        print("# %s: %s (exit status %s); its last output lines:"
              % (name, result, rc))
        for text in (out, err):
            for out_line in text.splitlines()[-TAIL_LINES:]:
                print("#   " + out_line)
    line = "%d passed, %d failed" % (passed, failed)
    if skipped:
        line += ", %d skipped" % skipped
    print(line)
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
