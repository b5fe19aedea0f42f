#!/usr/bin/env bash
# The project's main job (README): build everything, then boot two guests
# under TCG, each with -device ernic and the guest driver, joined by a
# localhost -netdev stream, and run RDMA between them through the kernel's
# RDMA stack (rdma_cm, data, QP states, a FATAL error and its recovery),
# then NVMe over Fabrics between two such guests with the kernel's own
# nvmet-rdma and nvme-rdma, then unmodified user space (rdma-core's tools
# and perftest through the ernic provider) and perftest's ib_write_bw over
# ernic and over Linux rxe side by side. Prints a summary of what happened.
set -euo pipefail
. "$(dirname "$0")/common.sh"

bdir=$ERNIC_ROOT/build
# Only the QEMU the guests run (README, "Which QEMU"): the stock and
# sanitizer builds are the test command's.
"$ERNIC_ROOT/scripts/build.sh" "$bdir" qemu
"$ERNIC_ROOT/scripts/guest-rdma-test.sh" --summary "$bdir"
"$ERNIC_ROOT/scripts/guest-ulp-test.sh" --summary "$bdir" nvmeof ernic ernic 64
"$ERNIC_ROOT/scripts/guest-ulp-test.sh" --summary "$bdir" verbs ernic ernic
"$ERNIC_ROOT/scripts/bench-guests.sh" --demo
