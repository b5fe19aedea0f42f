#!/usr/bin/env bash
# Build QEMU's own libFuzzer target, qemu-fuzz-x86_64, with clang, ASan and
# UBSan, from the same overlaid source (its generic fuzzer has an "ernic"
# configuration: generic-fuzz-ernic). Installs clang and LLVM's libFuzzer
# runtime from Debian if they are missing. Idempotent.
# usage: build-qemu-fuzz.sh WORKDIR     (the main build's folder, e.g. build)
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(mkdir -p "$1" && cd "$1" && pwd)
src=$work/qemu-src
bld=$work/qemu-fuzz

if ! command -v clang >/dev/null ||
   ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
        >/dev/null 2>&1; then
    log "installing clang and libFuzzer (clang, libclang-rt-dev)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends clang libclang-rt-dev >/dev/null ||
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends clang libclang-rt-14-dev >/dev/null
fi
"$ERNIC_ROOT/scripts/prepare-qemu.sh" "$work" >&2
qemu_configure "$src" "$bld" "QEMU's libFuzzer build" --cc=clang --cxx=clang++ \
    "${ERNIC_QEMU_ARGS[@]}" --enable-fuzzing --enable-asan --enable-ubsan
log "building qemu-fuzz-x86_64 (ninja -C $bld)"
ninja -C "$bld" qemu-fuzz-x86_64 >&2
