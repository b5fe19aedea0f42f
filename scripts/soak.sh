#!/usr/bin/env bash
# The long wire-fault soak (docs/fuzzing.md, "Soak"): 10^5 messages of mixed
# SEND/WRITE/READ through the fault-injecting relay at 1 %, 5 % and 10 % of
# each fault, against the sanitizer build, guest RAM checked for stray DMA.
# usage: scripts/soak.sh [MESSAGES] [RATES...]   (default: 100000 1 5 10)
set -euo pipefail
. "$(dirname "$0")/common.sh"

messages=${1:-100000}
shift || true
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(1 5 10)
work=$ERNIC_ROOT/build
"$ERNIC_ROOT/scripts/build.sh" "$work" >&2
rc=0
for r in "${rates[@]}"; do
    log "soak: $messages messages at $r % of each fault"
    "$ERNIC_ROOT/scripts/run-qtool.sh" "$work/qemu-asan" "$work/qemu-build" \
        ernic-soak --messages "$messages" --rate "$r" --seed "$r" \
        --check-dma | grep --line-buffered -v '^# starting QEMU' || rc=1
done
exit "$rc"
