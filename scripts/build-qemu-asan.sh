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

"$ERNIC_ROOT/scripts/prepare-qemu.sh" "$work" >&2
CONFIGURE_ARGS=(
    --target-list=x86_64-softmmu
    --without-default-devices
    --with-devices-x86_64=ernic
    --python="$ERNIC_PYTHON"
    --enable-slirp
    --disable-docs --disable-tools --disable-guest-agent --disable-user
    --disable-install-blobs --disable-werror --disable-download
    --enable-asan --enable-ubsan --enable-debug-info
    --firmwarepath=/usr/share/seabios:/usr/share/qemu
)
want="${CONFIGURE_ARGS[*]}"
if [ ! -f "$bld/build.ninja" ] || [ "$(cat "$bld/.ernic-configure" 2>/dev/null)" != "$want" ]; then
    rm -rf "$bld"
    mkdir -p "$bld"
    log "configuring the sanitizer build of QEMU in $bld"
    if ! (cd "$bld" && "$src/configure" "${CONFIGURE_ARGS[@]}" >configure.log 2>&1); then
        tail -n 30 "$bld/configure.log" >&2
        die "QEMU configure (ASan+UBSan) failed; see $bld/configure.log"
    fi
    echo "$want" >"$bld/.ernic-configure"
fi
for fw in /usr/share/seabios /usr/share/qemu; do
    mkdir -p "$bld/qemu-bundle$(dirname "$fw")"
    ln -sfn "$fw" "$bld/qemu-bundle$fw"
done
log "building the ASan+UBSan qemu-system-x86_64 (ninja -C $bld)"
ninja -C "$bld" qemu-system-x86_64 >&2
if [ -n "${2:-}" ]; then
    touch "$2"
fi
