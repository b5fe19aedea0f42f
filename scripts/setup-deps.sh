#!/usr/bin/env bash
# Install what building and testing the project needs, from Debian's
# packages only. Idempotent: a second run changes nothing and installs
# nothing.
#
# Extra apt sources (deb-src for bookworm, trixie and the newer suites,
# bookworm-backports) are derived from the machine's own Debian source
# entry: the same mirror and keyring, only other suites. No mirror host
# name is written here. The newer suites are source entries only: the
# host's packages stay bookworm's (trixie's kernel headers are built in a
# trixie root, scripts/trixie-root.sh).
set -euo pipefail
. "$(dirname "$0")/common.sh"

EXTRA=/etc/apt/sources.list.d/ernic-extra.sources

write_extra_sources() {
    local src uri key tmp
    src=$(debian_source | head -n 1)
    [ -n "$src" ] || die "no apt source for Debian bookworm found in /etc/apt"
    uri=${src%%|*}
    key=${src#*|}
    [ -n "$key" ] || key=/usr/share/keyrings/debian-archive-keyring.gpg
    tmp=$(mktemp)
    cat >"$tmp" <<EOS
# Written by ernic scripts/setup-deps.sh from this machine's bookworm entry.
Types: deb deb-src
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: $key

Types: deb-src
URIs: $uri
Suites: bookworm trixie trixie-backports forky sid
Components: main
Signed-By: $key
EOS
    if ! cmp -s "$tmp" "$EXTRA"; then
        log "adding apt sources (deb-src, bookworm-backports) from $uri"
        as_root install -m 0644 "$tmp" "$EXTRA"
        rm -f "$tmp"
        return 0
    fi
    rm -f "$tmp"
    return 1
}

# Packages: name, or name/suite for backports.
PKGS=(
    # QEMU build (meson >= 1.5 comes from bookworm-backports)
    meson/bookworm-backports ninja-build gcc ccache pkgconf libglib2.0-dev
    zlib1g-dev libpixman-1-dev libslirp-dev libfdt-dev python3-venv flex bison
    # Debian source package handling
    dpkg-dev patch xz-utils
    # Firmware the Debian QEMU source omits (bios-256k.bin; pvh.bin,
    # linuxboot_dma.bin, kvmvapic.bin)
    seabios qemu-system-data/bookworm-backports
    # Guest image, and the guest driver built against the guest kernel's
    # headers
    busybox-static cpio linux-headers-amd64 make
    # rdma-core with the ernic provider, for the guests' user space
    # (scripts/build-rdma-core.sh)
    cmake libnl-3-dev libnl-route-3-dev libudev-dev cython3 python3-dev
    # guest-mpi's segment: a bridge and taps in a network namespace
    # (scripts/guest-mpi-test.sh)
    iproute2 util-linux
    # The shape of the device's code (scripts/check-device.py)
    universal-ctags
    # QEMU's manual with the device's page (the stock build, --enable-docs)
    python3-sphinx python3-sphinx-rtd-theme
    # The Debian 13 build root (scripts/trixie-root.sh)
    debootstrap
)

missing=()
for p in "${PKGS[@]}"; do
    name=${p%%/*}
    if ! dpkg-query -W -f='${Status}' "$name" 2>/dev/null |
            grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
# The backports versions are required, not just any version.
meson_ok() {
    local v
    v=$(dpkg-query -W -f='${Version}' meson 2>/dev/null || true)
    [ -n "$v" ] && dpkg --compare-versions "$v" ge 1.5
}
qemu_data_ok() {
    [ -f /usr/share/qemu/pvh.bin ]
}
meson_ok || missing+=(meson/bookworm-backports)
qemu_data_ok || missing+=(qemu-system-data/bookworm-backports)

sources_changed=0
write_extra_sources && sources_changed=1

stamp=/var/lib/apt/lists/ernic-updated
if [ "$sources_changed" = 1 ] || [ ${#missing[@]} -gt 0 ] || [ ! -e "$stamp" ]; then
    log "apt-get update"
    as_root apt-get update -q >/dev/null
    as_root touch "$stamp"
fi
if [ ${#missing[@]} -gt 0 ]; then
    log "installing: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends "${missing[@]}" >/dev/null
fi
meson_ok || die "meson >= 1.5 is not installed"
qemu_data_ok || die "qemu-system-data with pvh.bin is not installed"
log "dependencies present"
