#!/usr/bin/env bash
# Build qemu-system-x86_64 with AddressSanitizer and UndefinedBehaviorSanitizer
# from the same overlaid source as the main build, in a build folder of its
# own (the fuzzer and the wire-fault soak run it). Idempotent: ninja rebuilds
# only what an edit touched.
# usage: build-qemu-asan.sh WORKDIR [STAMP]   (WORKDIR: the main build's
#        folder, e.g. build; STAMP: a file touched once built)
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(mkdir -p "$1" && cd "$1" && pwd)
src=$work/qemu-src
bld=$work/qemu-asan

"$ERNIC_ROOT/scripts/prepare-qemu.sh" "$work" accel >&2
qemu_configure "$src" "$bld" "the sanitizer build of QEMU" \
    "${ERNIC_QEMU_ARGS[@]}" --enable-asan --enable-ubsan --enable-debug-info
use_ccache
log "building the ASan+UBSan qemu-system-x86_64 (ninja -C $bld)"
ninja -C "$bld" qemu-system-x86_64 >&2
if [ -n "${2:-}" ]; then
    touch "$2"
fi
