#!/usr/bin/env bash
# Build the guest driver (guest-driver/ernic.ko) out of tree against
# Debian's linux-headers of the guest kernel's ABI (the one
# linux-headers-amd64 depends on, as scripts/guest-image.sh boots).
# usage: build-guest-driver.sh WORKDIR
# prints: path of ernic.ko, then of ernic_test.ko (the test client), then
#   of reconic_mm.ko (card memory of layout=reconic, docs/boards.md)
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(mkdir -p "$1/guest-driver" && cd "$1/guest-driver" && pwd)
abi=$(apt-cache depends linux-headers-amd64 2>/dev/null |
      sed -n 's/.*Depends: linux-headers-\(.*\)-amd64$/\1/p' | head -n 1)
kdir=/usr/src/linux-headers-$abi-amd64
[ -d "$kdir" ] || die "$kdir missing (scripts/setup-deps.sh installs it)"

# Guest tests run in parallel (meson test): one build at a time.
exec 9>"$work/.lock"
flock 9

# Kbuild writes its objects next to the sources: build in a copy.
mkdir -p "$work/src/guest-driver"
cp -a "$ERNIC_ROOT"/guest-driver/*.[ch] "$ERNIC_ROOT/guest-driver/Kbuild" \
      "$ERNIC_ROOT/guest-driver/Makefile" "$work/src/guest-driver/"
rm -rf "$work/src/include"
cp -a "$ERNIC_ROOT/include" "$work/src/include"
log "building guest-driver (ernic.ko, ernic_test.ko, reconic_mm.ko) against $kdir"
make -s -C "$kdir" M="$work/src/guest-driver" modules >&2
echo "$work/src/guest-driver/ernic.ko"
echo "$work/src/guest-driver/ernic_test.ko"
echo "$work/src/guest-driver/reconic_mm.ko"
