#!/usr/bin/env bash
# The project's test command (README): build everything, run the whole test
# suite (qtests, documentation check, guest boot) and print a summary that
# ends with "N passed, N failed".
set -euo pipefail
. "$(dirname "$0")/common.sh"

bdir=$ERNIC_ROOT/build
"$ERNIC_ROOT/scripts/build.sh" "$bdir"
rc=0
meson test -C "$bdir" --print-errorlogs || rc=$?
"$ERNIC_PYTHON" "$ERNIC_ROOT/scripts/test-summary.py" \
    "$bdir/meson-logs/testlog.json" || rc=1
exit "$rc"
