#!/usr/bin/env bash
# The vmstate static check (docs/migration.md): QEMU's own
# scripts/vmstate-static-checker.py compares the ernic section of
# -dump-vmstate with the reference in qtest/vmstate/ernic.json, so that a
# change to the migrated state that an older stream could not be loaded
# with (a field added, removed or resized without a new version or
# subsection) fails the tests.
# usage: vmstate-check.sh QEMU_BUILD_DIR [--update]
set -euo pipefail
. "$(dirname "$0")/common.sh"

bld=$1
ref=$ERNIC_ROOT/qtest/vmstate/ernic.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bld/qemu-system-x86_64" -M q35 -nodefaults -device ernic \
    -dump-vmstate "$tmp/all.json"
# Only what ernic owns: the machine's other devices are QEMU's business.
"$ERNIC_PYTHON" - "$tmp/all.json" "$tmp/ernic.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
json.dump({k: d[k] for k in ("vmschkmachine", "ernic")},
          open(sys.argv[2], "w"), indent=1, sort_keys=True)
PY
if [ "${2:-}" = --update ]; then
    cp "$tmp/ernic.json" "$ref"
    log "vmstate reference updated: $ref"
    exit 0
fi
checker=$(dirname "$bld")/qemu-src/scripts/vmstate-static-checker.py
rc=0
"$ERNIC_PYTHON" "$checker" -s "$ref" -d "$tmp/ernic.json" || rc=$?
if [ "$rc" != 0 ]; then
    echo "vmstate-check: the ernic state changed incompatibly ($rc errors)"
    exit 1
fi
echo "vmstate-check: ernic state compatible with $ref"
