#!/usr/bin/env bash
# Fetch QEMU 10.0.x from Debian's `qemu` source package, overlay the ernic
# device onto it and configure it. Idempotent: each step is skipped when its
# result is already there.
#
# usage: prepare-qemu.sh WORKDIR
#   WORKDIR/qemu-dl     downloaded .dsc, .orig and .debian tarballs
#   WORKDIR/qemu-src    unpacked source with Debian's patches applied
#   WORKDIR/qemu-build  QEMU's build directory
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(mkdir -p "$1" && cd "$1" && pwd)
dl=$work/qemu-dl
src=$work/qemu-src
bld=$work/qemu-build

# --- 1. Source: the newest 10.0.x that the configured sources offer -----
if [ ! -f "$src/.ernic-unpacked" ]; then
    mkdir -p "$dl"
    versions=$(apt-cache showsrc qemu 2>/dev/null |
               awk '/^Version: /{print $2}' | grep -E '^1:10\.0\.' |
               sort -u -r -V)
    [ -n "$versions" ] || die "no qemu 10.0.x source package in apt (run scripts/setup-deps.sh)"
    dsc=
    for v in $versions; do
        log "downloading Debian source qemu=$v"
        if (cd "$dl" && apt-get source -q --download-only \
                -o APT::Sandbox::User=root "qemu=$v" >/dev/null 2>&1); then
            dsc=$(ls "$dl"/qemu_"${v#1:}".dsc)
            break
        fi
        log "qemu=$v is not downloadable here, trying the next version"
    done
    [ -n "$dsc" ] || die "could not download any qemu 10.0.x source package"
    rm -rf "$src"
    log "unpacking $(basename "$dsc") with Debian's patch series"
    # apt-get verified the files against the signed Sources index; dpkg-source
    # cannot check the .dsc signature without debian-keyring, so it is quiet.
    dpkg-source -q -x "$dsc" "$src" >"$dl/unpack.log" 2>&1 ||
        { cat "$dl/unpack.log" >&2; die "dpkg-source failed"; }
    basename "$dsc" >"$src/.ernic-unpacked"
fi
log "QEMU source: $(cat "$src/.ernic-unpacked") ($(cat "$src/VERSION"))"

# --- 2. Overlay: symlinks plus one line in each parent build file --------
"$ERNIC_ROOT/scripts/overlay-qemu.sh" "$src"

# --- 3. Configure (again only if the options changed) -------------------
qemu_configure "$src" "$bld" "QEMU (x86_64-softmmu, devices: configs/ernic-devices.mak)" \
    "${ERNIC_QEMU_ARGS[@]}"
log "QEMU configured in $bld"
