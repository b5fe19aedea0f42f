#!/usr/bin/env bash
# Build the guest driver (guest-driver/ernic.ko) out of tree against
# Debian's linux-headers of a guest kernel's ABI.
# usage: build-guest-driver.sh WORKDIR [SUITE]
#   no SUITE: the host's linux-headers-amd64 (Debian 12, the kernel
#     scripts/guest-image.sh boots), with the host's compiler;
#   trixie, trixie-backports: that suite's linux-headers-amd64, built
#     in a Debian 13 root with its compiler (scripts/trixie-root.sh):
#     Debian 13's kernel and the newest Debian serves.
# prints: path of ernic.ko, then of ernic_test.ko (the test client), then
#   of reconic_mm.ko (card memory of layout=reconic, docs/boards.md)
set -euo pipefail
. "$(dirname "$0")/common.sh"

suite=${2:-}
work=$(mkdir -p "$1/guest-driver${suite:+-$suite}" &&
       cd "$1/guest-driver${suite:+-$suite}" && pwd)

# Guest tests run in parallel (meson test): one build at a time.
exec 9>"$work/.lock"
flock 9

# Kbuild writes its objects next to the sources: build in a copy.
copy_sources() {
    mkdir -p "$1/guest-driver"
    cp -a "$ERNIC_ROOT"/guest-driver/*.[ch] "$ERNIC_ROOT/guest-driver/Kbuild" \
          "$ERNIC_ROOT/guest-driver/Makefile" "$1/guest-driver/"
    rm -rf "$1/include"
    cp -a "$ERNIC_ROOT/include" "$1/include"
}

if [ -z "$suite" ]; then
    abi=$(apt-cache depends linux-headers-amd64 2>/dev/null |
          sed -n 's/.*Depends: linux-headers-\(.*\)-amd64$/\1/p' | head -n 1)
    kdir=/usr/src/linux-headers-$abi-amd64
    [ -d "$kdir" ] || die "$kdir missing (scripts/setup-deps.sh installs it)"
    copy_sources "$work/src"
    log "building guest-driver (ernic.ko, ernic_test.ko, reconic_mm.ko) against $kdir"
    make -s -C "$kdir" M="$work/src/guest-driver" modules >&2
    out=$work/src/guest-driver
else
    root=$ERNIC_TRIXIE_ROOT
    case $suite in
    trixie) meta=linux-headers-amd64 ;;
    trixie-backports) meta=linux-headers-amd64/trixie-backports ;;
    *) die "build-guest-driver.sh: SUITE is trixie or trixie-backports, not $suite" ;;
    esac
    "$ERNIC_ROOT/scripts/trixie-root.sh" "$root" >/dev/null
    abi=$(chroot "$root" apt-cache depends "$meta" 2>/dev/null |
          sed -n 's/.*Depends: linux-headers-\(.*\)-amd64$/\1/p' | head -n 1)
    [ -n "$abi" ] || die "no kernel ABI for $meta in the trixie root"
    "$ERNIC_ROOT/scripts/trixie-root.sh" "$root" \
        "linux-headers-$abi-amd64${meta#linux-headers-amd64}" >/dev/null
    copy_sources "$root/build/guest-driver-$suite"
    log "building guest-driver against linux-headers-$abi-amd64 ($suite) in $root"
    # objtool reads /proc: a private mount of it for the build.
    unshare -m sh -c 'mount -t proc proc "$1/proc" && chroot "$1" make -s -C "$2" M="$3" modules' \
        sh "$root" "/usr/src/linux-headers-$abi-amd64" \
        "/build/guest-driver-$suite/guest-driver" >&2
    out=$root/build/guest-driver-$suite/guest-driver
fi
echo "$out/ernic.ko"
echo "$out/ernic_test.ko"
echo "$out/reconic_mm.ko"
