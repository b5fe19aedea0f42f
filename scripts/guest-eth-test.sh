#!/usr/bin/env bash
# Boot Debian's kernel under TCG with -device ernic on -netdev user, load
# the guest driver, and ping slirp's gateway through the driver's
# net_device (the Ethernet path); unload and reload the module.
# usage: guest-eth-test.sh [--check] WORKDIR
#   --check: print TAP (for `meson test`) instead of the transcript
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/guest-lib.sh"

guest_args "$@"
# Read every line the build prints: `| head -n 1` under pipefail failed
# the test whenever head closed the pipe before the second line (SIGPIPE).
mapfile -t kos < <("$ERNIC_ROOT/scripts/build-guest-driver.sh" "$work")
[ -f "${kos[0]:-}" ] || die "guest driver build failed"
mapfile -t image < <("$ERNIC_ROOT/scripts/guest-image.sh" "$work" \
                     "$ERNIC_ROOT/guest/init-eth.sh" "${kos[0]}" \
                     kmod:drivers/infiniband/core/ib_core \
                     kmod:drivers/infiniband/core/ib_uverbs)
guest_boot "${image[0]}" "${image[1]}" -netdev user,id=net0 \
    -device ernic,netdev=net0,mac=52:54:00:e3:32:01

[ "$check" = 1 ] || show_transcript
echo "1..3"
tap "driver binds and registers a net_device (twice: load, reload)" \
    'ernic net_device: eth' 2
tap "ping through the Ethernet path, 3 replies (twice)" \
    'ping 10.0.2.2: 3 replies' 2
tap "no kernel warnings, module unloads" 'RESULT PASS'
tap_end
