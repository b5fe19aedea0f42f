#!/usr/bin/env bash
# Two guests (Debian's kernel under TCG, each with -device ernic) joined by
# a localhost -netdev stream: the guest driver with the kernel's RDMA
# stack, and the ernic_test client (guest-driver/ernic_test.c) connecting
# with rdma_cm and running data, state, FATAL and recovery checks.
# usage: guest-rdma-test.sh [--check|--summary] WORKDIR
#   --check: print TAP (for `meson test`) instead of the transcript
#   --summary: print a condensed summary (the README's main command)
# ERNIC_DEV_OPTS (e.g. ext=off) is added to both -device ernic options.
# ERNIC_GUEST_IOMMU=1: both guests translate DMA through an Intel IOMMU
# (scripts/guest-lib.sh); a TAP point checks that they do.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/guest-lib.sh"

summary=0
if [ "${1:-}" = --summary ]; then
    summary=1
    shift
fi
guest_args "$@"
mapfile -t kos < <("$ERNIC_ROOT/scripts/build-guest-driver.sh" "$work")
mapfile -t image < <("$ERNIC_ROOT/scripts/guest-image.sh" "$work" \
    "$ERNIC_ROOT/guest/init-rdma.sh" "${kos[@]}" \
    kmod:drivers/infiniband/core/ib_core kmod:drivers/infiniband/core/ib_cm \
    kmod:drivers/infiniband/core/ib_uverbs \
    kmod:drivers/infiniband/core/iw_cm kmod:drivers/infiniband/core/rdma_cm \
    kmod:fs/configfs/configfs \
    deb:libc6 deb:libnl-3-200 deb:libnl-route-3-200 deb:libibverbs1 \
    deb:librdmacm1 deb:ibverbs-providers deb:ibverbs-utils deb:rdmacm-utils)

port=$("$ERNIC_PYTHON" -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
stream="stream,id=n0,addr.type=inet,addr.host=127.0.0.1,addr.port=$port"
# The consoles stay in WORKDIR/guest for a look after a failure, in a
# directory of their own per device options: meson runs guest-rdma and
# guest-rdma-ext-off at the same time.
opts_tag=${ERNIC_DEV_OPTS:+-${ERNIC_DEV_OPTS//[^a-zA-Z0-9]/_}}
opts_tag+=${ERNIC_GUEST_IOMMU:+-iommu}
tmp=$work/guest/rdma$opts_tag
mkdir -p "$tmp"

opts=${ERNIC_DEV_OPTS:+,$ERNIC_DEV_OPTS}
start=$(date +%s%N)
guest_cmd "${image[0]}" "${image[1]}" \
    "ernic_role=server ernic_ip=10.1.0.1 ernic_peer=10.1.0.2" \
    -netdev "$stream,server=on" \
    -device "ernic,netdev=n0,mac=52:54:00:e3:32:11$opts"
log "server: ${cmd[*]}"
timeout 600 "${cmd[@]}" </dev/null >"$tmp/server" 2>&1 &
spid=$!
guest_cmd "${image[0]}" "${image[1]}" \
    "ernic_role=client ernic_ip=10.1.0.2 ernic_peer=10.1.0.1" \
    -netdev "$stream,server=off,reconnect-ms=100" \
    -device "ernic,netdev=n0,mac=52:54:00:e3:32:12$opts"
log "client: ${cmd[*]}"
timeout 600 "${cmd[@]}" </dev/null >"$tmp/client" 2>&1 || true
wait "$spid" || true
ms=$((($(date +%s%N) - start) / 1000000))

pair_transcript "$tmp" server client

if [ "$summary" = 1 ]; then
    printf '%s\n' "$transcript" |
        "$ERNIC_PYTHON" "$ERNIC_ROOT/scripts/rdma-summary.py" \
        "$((ms / 1000)).$((ms % 1000 / 100))"
    exit
fi
if [ "$check" != 1 ]; then
    show_pair_transcript "two guests ran for ${ms} ms (TCG)"
fi
iommu_taps=${ERNIC_GUEST_IOMMU:+1}
echo "1..$((15 + ${iommu_taps:-0}))"
tap "both guests register the RDMA device" 'RDMA device ernic0' 4
if [ -n "${ERNIC_GUEST_IOMMU:-}" ]; then
    tap "both guests translate the device's DMA through the IOMMU" \
        'DMA: IOMMU domain DMA' 4
fi
tap "the image's rdma-core tools run (ibv_devinfo, rping)" \
    'rdma-core tools run' 2
tap "rdma_cm connects over QP1 (twice, across a module reload)" \
    'client: ok rdma_cm connected' 2
tap "WRITE 1 B .. 1 MiB checked" 'client: ok WRITE 1048576 B' 2
tap "READ 1 B .. 1 MiB checked" 'client: ok READ 1048576 B' 2
tap "SEND 1 B .. 1 MiB both ways checked" \
    'client: ok SEND 1048576 B server to client' 2
tap "scatter/gather: WRITE of 4 SGEs and READ into 4 SGEs checked" \
    'client: ok READ into 4 SGEs' 2
case ",${ERNIC_DEV_OPTS:-}," in
*,ext=off,*)
    tap "no ERNIC-X: a SEND gathers one SGE, the 4-SGE SEND skipped" \
        'SEND of 4 SGEs: the device gathers 1, skipped' 2
    tap "no ERNIC-X: fast registration not offered, its test skipped" \
        'no fast registration on ernic0: skipped' 2 ;;
*)
    tap "ERNIC-X keyed SGEs: a SEND gathering 4 SGEs checked by the server" \
        'client: ok SEND gathering 4 SGEs' 2
    tap "ERNIC-X fast registration: REG_MR, WRITE/READ by the peer through the key into scattered pages, LOCAL_INV, twice" \
        'client: ok LOCAL_INV of key' 4 ;;
esac
tap "IBTA state walk: legal transitions taken, illegal refused" \
    'client: ok RTS -> RESET' 2
tap "remote access error: IB_WC_REM_ACCESS_ERR, no async event on the requester" \
    'client: ok no async event on the requester' 2
tap "remote access error: IB_EVENT_QP_ACCESS_ERR on the responder" \
    'server: ok the bad R_Key raised QP access error on the responder' 2
tap "QP recovered through Reset and reused" \
    'client: ok QP reused: READ 65536 B checked' 2
tap "client: no failed check in either round, modules unload, no kernel warning" \
    'client: RESULT PASS$' 1
tap "server: both connections served, modules unload, no kernel warning" \
    'server: RESULT PASS$' 1
tap_end
