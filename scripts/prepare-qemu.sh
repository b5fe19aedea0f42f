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
CONFIGURE_ARGS=(
    --target-list=x86_64-softmmu
    --without-default-devices
    --with-devices-x86_64=ernic
    --python="$ERNIC_PYTHON"
    --enable-slirp
    --disable-docs --disable-tools --disable-guest-agent --disable-user
    --disable-install-blobs --disable-werror
    # Never fetch a subproject from the internet: a missing library fails
    # configure at once and names itself (add its -dev package above).
    --disable-download
    # The Debian source has no firmware blobs: use the seabios and
    # qemu-system-data packages' files in place.
    --firmwarepath=/usr/share/seabios:/usr/share/qemu
)
want="${CONFIGURE_ARGS[*]}"
if [ ! -f "$bld/build.ninja" ] || [ "$(cat "$bld/.ernic-configure" 2>/dev/null)" != "$want" ]; then
    rm -rf "$bld"
    mkdir -p "$bld"
    log "configuring QEMU (x86_64-softmmu, devices: configs/ernic-devices.mak)"
    if ! (cd "$bld" && "$src/configure" "${CONFIGURE_ARGS[@]}" >configure.log 2>&1); then
        tail -n 30 "$bld/configure.log" >&2
        die "QEMU configure failed; see $bld/configure.log"
    fi
    echo "$want" >"$bld/.ernic-configure"
fi
# Run from its build tree, QEMU relocates the firmware path into
# qemu-bundle/: point that at the packages' files too.
for fw in /usr/share/seabios /usr/share/qemu; do
    mkdir -p "$bld/qemu-bundle$(dirname "$fw")"
    ln -sfn "$fw" "$bld/qemu-bundle$fw"
done
log "QEMU configured in $bld"
