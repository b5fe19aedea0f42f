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
CONFIGURE_ARGS=(
    --cc=clang --cxx=clang++
    --target-list=x86_64-softmmu
    --without-default-devices
    --with-devices-x86_64=ernic
    --python="$ERNIC_PYTHON"
    --enable-slirp
    --disable-docs --disable-tools --disable-guest-agent --disable-user
    --disable-install-blobs --disable-werror --disable-download
    --enable-fuzzing --enable-asan --enable-ubsan
    --firmwarepath=/usr/share/seabios:/usr/share/qemu
)
want="${CONFIGURE_ARGS[*]}"
if [ ! -f "$bld/build.ninja" ] || [ "$(cat "$bld/.ernic-configure" 2>/dev/null)" != "$want" ]; then
    rm -rf "$bld"
    mkdir -p "$bld"
    log "configuring QEMU's libFuzzer build in $bld"
    if ! (cd "$bld" && "$src/configure" "${CONFIGURE_ARGS[@]}" >configure.log 2>&1); then
        tail -n 30 "$bld/configure.log" >&2
        die "QEMU configure (libFuzzer) failed; see $bld/configure.log"
    fi
    echo "$want" >"$bld/.ernic-configure"
fi
log "building qemu-fuzz-x86_64 (ninja -C $bld)"
ninja -C "$bld" qemu-fuzz-x86_64 >&2
