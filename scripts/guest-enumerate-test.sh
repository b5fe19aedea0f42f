#!/usr/bin/env bash
# Boot Debian's kernel under TCG with -device ernic and show the guest
# enumerating the device by its PCI ID and using its registers.
# usage: guest-enumerate-test.sh [--check] WORKDIR
#   --check: print TAP (for `meson test`) instead of the plain transcript
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/guest-lib.sh"

guest_args "$@"
mapfile -t image < <("$ERNIC_ROOT/scripts/guest-image.sh" "$work" \
                     "$ERNIC_ROOT/guest/init-enumerate.sh")
guest_boot "${image[0]}" "${image[1]}" -netdev user,id=net0 \
    -device ernic,netdev=net0,mac=52:54:00:e3:32:01

[ "$check" = 1 ] || show_transcript
echo "1..4"
tap "guest lists the ernic PCI function 10ee:e332" '10ee:e332 class 020000'
tap "guest reads PG332 reset value of XRNIC_BUF_THRESHOLD_ROCE" '= 0x0000965A'
tap "guest reads the board MAC from MACXADDMSB/LSB" 'MACXADDMSB/LSB = 0x00005254 0x00E33201'
tap "guest register writes read back" 'RESULT PASS'
tap_end
