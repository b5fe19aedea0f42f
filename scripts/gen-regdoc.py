#!/usr/bin/python3
"""Generate the register tables of docs/registers.md (from the register lists
of include/hw/rdma/ernic_regs.h) and of docs/extension.md (from
include/hw/rdma/ernic_ext_regs.h): the lists the device and the qtests use.

usage: gen-regdoc.py [--check] HEADER DOC
  Rewrites the part of DOC between the BEGIN/END markers; with --check,
  changes nothing and fails when DOC is out of date.
"""
import re
import sys

BEGIN = "<!-- BEGIN REGISTER TABLE (scripts/gen-regdoc.py) -->"
END = "<!-- END REGISTER TABLE -->"
ENTRY = re.compile(
    r"X\(\s*(\w+),\s*(0x[0-9a-fA-F]+),\s*(RW|RO|W1C),\s*([^,]+),"
    r"\s*([^,]+),\s*([^,]+),\s*([^,]+),\s*(\d+)\s*\)")


def macro_body(text, name):
    m = re.search(r"#define %s\(X\)\s*\\\n((?:.*\\\n)*.*\n)" % name, text)
    if not m:
        sys.exit("gen-regdoc: %s not found" % name)
    return m.group(1).replace("\\\n", " ")


def parse(text, name):
    regs = []
    for m in ENTRY.finditer(macro_body(text, name)):
        name_, off, acc, reset, mask, wmask, flags, page = m.groups()
        regs.append(dict(name=name_, off=int(off, 16), acc=acc,
                         reset=int(reset, 0), mask=int(mask, 0),
                         wmask=int(wmask, 0), flags=flags.strip(),
                         page=int(page)))
    if not regs:
        sys.exit("gen-regdoc: no entries in %s" % name)
    return regs


def bits(mask):
    """0xffff07fd -> '[31:16] [10:0] except 1'-style field list."""
    out, i = [], 31
    while i >= 0:
        if mask >> i & 1:
            j = i
            while j > 0 and mask >> (j - 1) & 1:
                j -= 1
            out.append("[%d]" % i if i == j else "[%d:%d]" % (i, j))
            i = j - 1
        else:
            i -= 1
    return " ".join(out)


def access(r):
    if r["acc"] == "W1C":
        return "W1C"
    if r["acc"] == "RW":
        ro = r["mask"] & ~r["wmask"]
        return "RW (%s RO)" % bits(ro) if ro else "RW"
    parts = ["RO"]
    if r["wmask"]:
        parts.append("(%s RW)" % bits(r["wmask"]))
    if "SWO" in r["flags"]:
        parts.append("(RW under SW override)")
    return " ".join(parts)


def table(title, regs, offset_fmt, qp):
    lines = ["### " + title, "",
             "| Offset | Register | Access | Reset | Defined bits | PG332 |"
             + (" QP1 |" if qp else ""),
             "|---|---|---|---|---|---|" + ("---|" if qp else "")]
    for r in regs:
        reset = "0x%x" % r["reset"]
        if r["name"] in ("MACXADDLSB", "MACXADDMSB"):
            reset = "`mac` property"
        row = "| %s | %s | %s | %s | %s | %s |" % (
            offset_fmt % r["off"], r["name"], access(r), reset,
            bits(r["mask"]), "p.%d" % r["page"] if r["page"] else "—")
        if qp:
            row += " %s |" % ("no" if "NOQP1" in r["flags"] else "yes")
        lines.append(row)
    return "\n".join(lines) + "\n"


def main():
    args = sys.argv[1:]
    check = args[:1] == ["--check"]
    if check:
        args = args[1:]
    header, doc = args
    text = open(header).read()
    if "ERNIC_EXT_REGS(X)" in text:
        tables = [table("ERNIC-X global registers (BAR0)",
                        parse(text, "ERNIC_EXT_REGS"), "0x%05X", False),
                  table("ERNIC-X per-QP registers (QP i at 0x3A000 + "
                        "(i−1) × 0x20)",
                        parse(text, "ERNIC_EXT_QP_REGS"), "+0x%02X", False),
                  table("ERNIC-X per-SRQ registers (SRQ n at 0x3C000 + "
                        "n × 0x20, n = 0..255)",
                        parse(text, "ERNIC_EXT_SRQ_REGS"), "+0x%02X", False),
                  table("ERNIC-X address handle window (BAR0)",
                        parse(text, "ERNIC_EXT_AH_REGS"), "0x%05X", False),
                  table("ERNIC-X multicast group window (BAR0)",
                        parse(text, "ERNIC_EXT_MC_REGS"), "0x%05X", False)]
    else:
        tables = [
            table("PD / MR table (entry i at i × 0x100, i = 0..255)",
                  parse(text, "ERNIC_PDT_REGS"), "i×0x100 + 0x%02X", False),
            table("Global registers",
                  parse(text, "ERNIC_GCSR_REGS"), "0x%05X", False),
            table("Per-QP registers (QP i at 0x20200 + (i−1) × 0x100)",
                  parse(text, "ERNIC_QP_REGS"), "+0x%02X", True),
        ]
    gen = "\n".join([BEGIN, ""] + tables + [END])
    old = open(doc).read()
    if BEGIN not in old or END not in old:
        sys.exit("gen-regdoc: markers missing in " + doc)
    new = old[:old.index(BEGIN)] + gen + old[old.index(END) + len(END):]
    if check:
        print("1..1")
        if new != old:
            print("not ok 1 - %s is out of date: run scripts/gen-regdoc.py %s %s"
                  % (doc, header, doc))
            return 1
        print("ok 1 - %s matches %s" % (doc, header))
        return 0
    open(doc, "w").write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
