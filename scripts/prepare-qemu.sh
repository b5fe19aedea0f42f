#!/usr/bin/env bash
# Fetch QEMU from Debian's `qemu` source package, overlay the ernic device
# onto it and configure it. Idempotent: each step is skipped when its
# result is already there.
#
# usage: prepare-qemu.sh WORKDIR [FLAVOUR]
#   FLAVOUR (scripts/common.sh, qemu_flavour):
#     accel  QEMU 10.0.x with the optional patches (patches/qemu/), the
#            default: netdev polling (docs/engine.md, "Busy polling")
#     stock  QEMU 10.0.x as Debian ships it, no patch
#     next   the newest QEMU newer than 10.0 whose source apt can
#            download (ERNIC_QEMU_NEXT=10.2: the newest 10.2.x), no patch
#   WORKDIR/qemu-dl          downloaded .dsc, .orig and .debian tarballs
#   WORKDIR/<flavour's src>  unpacked source, Debian's patches applied
#   WORKDIR/<flavour's bld>  QEMU's build directory
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(mkdir -p "$1" && cd "$1" && pwd)
qemu_flavour "${2:-accel}"
dl=$work/qemu-dl
src=$work/$QEMU_SRC
bld=$work/$QEMU_BLD

# --- 1. Source: the newest version of the series that apt offers --------
if [ ! -f "$src/.ernic-unpacked" ]; then
    mkdir -p "$dl"
    versions=$(apt-cache showsrc qemu 2>/dev/null |
               awk '/^Version: /{print $2}' | sort -u -r -V)
    if [ "$QEMU_SERIES" = newest ]; then
        # Newer than 10.0; a version a mirror lists but does not serve is
        # skipped below.
        versions=$(for v in $versions; do
                       if dpkg --compare-versions "$v" ge 1:10.1; then
                           echo "$v"
                       fi
                   done)
    else
        versions=$(grep -E "^1:${QEMU_SERIES//./\\.}\\." <<<"$versions" || true)
    fi
    [ -n "$versions" ] ||
        die "no qemu $QEMU_SERIES.x source package in apt (run scripts/setup-deps.sh)"
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
    [ -n "$dsc" ] || die "could not download any qemu $QEMU_SERIES.x source package"
    rm -rf "$src"
    log "unpacking $(basename "$dsc") with Debian's patch series into $src"
    # apt-get verified the files against the signed Sources index; dpkg-source
    # cannot check the .dsc signature without debian-keyring, so it is quiet.
    dpkg-source -q -x "$dsc" "$src" >"$dl/unpack.log" 2>&1 ||
        { cat "$dl/unpack.log" >&2; die "dpkg-source failed"; }
    basename "$dsc" >"$src/.ernic-unpacked"
fi
log "QEMU source ($QEMU_FLAVOUR): $(cat "$src/.ernic-unpacked") ($(cat "$src/VERSION"))"

# --- 2. Overlay: symlinks plus one line in each parent build file --------
overlay=("$src")
[ "$QEMU_PATCHES" = yes ] || overlay=(--no-patches "$src")
"$ERNIC_ROOT/scripts/overlay-qemu.sh" "${overlay[@]}"

# --- 3. Configure (again only if the options changed) -------------------
qemu_configure "$src" "$bld" "QEMU $QEMU_FLAVOUR (x86_64-softmmu, devices: configs/ernic-devices.mak)" \
    "${ERNIC_QEMU_ARGS[@]}" $QEMU_EXTRA
log "QEMU ($QEMU_FLAVOUR) configured in $bld"
