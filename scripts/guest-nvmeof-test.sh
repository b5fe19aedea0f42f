#!/usr/bin/env bash
# NVMe over Fabrics (RDMA) between two guests, unmodified in-kernel
# consumers: nvmet-rdma on the target, nvme-rdma on the host. Each side is
# ernic (this project's device and driver) or Linux rxe over virtio-net;
# the two QEMUs are joined by an AF_UNIX -netdev stream. The host writes
# MIB MiB of random data with O_DIRECT, reads it back, compares SHA-256,
# reconnects and reads again; both sides check their kernel log.
# usage: guest-nvmeof-test.sh [--check|--summary] WORKDIR [TARGET HOST [MIB]]
#   TARGET, HOST: ernic (default) or rxe; MIB: 64 unless given
#   --check: print TAP (for `meson test`) instead of the transcript
#   --summary: print a short summary (the README's main command)
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/guest-lib.sh"

summary=0
if [ "${1:-}" = --summary ]; then
    summary=1
    shift
    set -- --check "$@"
fi
guest_args "$1" "${2:-}"
[ "$check" = 1 ] && shift
shift
tdev=${1:-ernic}
hdev=${2:-ernic}
mib=${3:-64}
for d in "$tdev" "$hdev"; do
    case $d in
    ernic|rxe) ;;
    *) die "device $d: ernic or rxe" ;;
    esac
done

mapfile -t kos < <("$ERNIC_ROOT/scripts/build-guest-driver.sh" "$work")
k=kmod:drivers
mapfile -t image < <("$ERNIC_ROOT/scripts/guest-image.sh" "$work" \
    "$ERNIC_ROOT/guest/init-nvmeof.sh" "${kos[0]}" \
    $k/infiniband/core/ib_core $k/infiniband/core/ib_cm \
    $k/infiniband/core/iw_cm $k/infiniband/core/rdma_cm \
    $k/infiniband/core/ib_uverbs kmod:fs/configfs/configfs \
    $k/virtio/virtio_ring $k/virtio/virtio $k/virtio/virtio_pci \
    $k/virtio/virtio_pci_legacy_dev $k/virtio/virtio_pci_modern_dev \
    kmod:net/core/failover $k/net/net_failover $k/net/virtio_net \
    kmod:net/ipv4/udp_tunnel kmod:net/ipv6/ip6_udp_tunnel \
    $k/infiniband/sw/rxe/rdma_rxe kmod:crypto/crc32_generic \
    kmod:lib/crc64 kmod:crypto/crc64_rocksoft_generic kmod:lib/crc64-rocksoft \
    kmod:crypto/crct10dif_common kmod:crypto/crct10dif_generic \
    kmod:lib/crc-t10dif kmod:block/t10-pi $k/block/brd \
    $k/nvme/host/nvme-core $k/nvme/host/nvme-fabrics $k/nvme/host/nvme-rdma \
    $k/nvme/target/nvmet $k/nvme/target/nvmet-rdma \
    deb:iproute2 deb:libc6 deb:libmnl0 deb:libbsd0 deb:libcap2 deb:libmd0)

tmp=$work/guest/nvmeof-$tdev-$hdev
mkdir -p "$tmp"
sock=$tmp/link.sock
rm -f "$sock"
stream="stream,id=n0,addr.type=unix,addr.path=$sock"
nic() {     # nic DEV MAC
    if [ "$1" = ernic ]; then
        echo "ernic,netdev=n0,mac=$2"
    else
        echo "virtio-net-pci,netdev=n0,mac=$2,romfile="
    fi
}
guest_mem=$((512 + 2 * mib))

start=$(date +%s%N)
guest_cmd "${image[0]}" "${image[1]}" \
    "nvme_role=target nvme_dev=$tdev nvme_ip=10.1.0.1 nvme_peer=10.1.0.2 \
nvme_mib=$mib" \
    -netdev "$stream,server=on" -device "$(nic "$tdev" 52:54:00:e3:32:21)"
log "target: ${cmd[*]}"
timeout 1200 "${cmd[@]}" </dev/null >"$tmp/target" 2>&1 &
tpid=$!
guest_cmd "${image[0]}" "${image[1]}" \
    "nvme_role=host nvme_dev=$hdev nvme_ip=10.1.0.2 nvme_peer=10.1.0.1 \
nvme_mib=$mib" \
    -netdev "$stream,server=off,reconnect-ms=100" \
    -device "$(nic "$hdev" 52:54:00:e3:32:22)"
log "host: ${cmd[*]}"
timeout 1200 "${cmd[@]}" </dev/null >"$tmp/host" 2>&1 || true
wait "$tpid" || true
ms=$((($(date +%s%N) - start) / 1000000))

pair_transcript "$tmp" target host
if [ "$check" != 1 ]; then
    show_pair_transcript "NVMe-oF $tdev target, $hdev host: ${ms} ms (TCG)"
fi
taps() {
    echo "1..5"
    tap "$tdev target and $hdev host connect (twice)" 'host: connected' 2
    tap "$mib MiB of random data written" "ok host: wrote $mib MiB" 1
    tap "read back, SHA-256 matches, before and after reconnect" \
        'SHA-256 matches' 2
    tap "target: $tdev clean (no kernel warning)" 'target: RESULT PASS$' 1
    tap "host: $hdev clean (no kernel warning)" 'host: RESULT PASS$' 1
}
if [ "$summary" = 1 ]; then
    taps >"$tmp/tap"
    echo
    echo "NVMe over Fabrics: nvmet-rdma on $tdev <== RoCEv2 ==> nvme-rdma" \
        "on $hdev (unmodified kernel consumers), $mib MiB ramdisk"
    printf '%s\n' "$transcript" | sed -n 's/^host: ok host: /  /p'
    echo "  Result: $(grep -c '^ok' "$tmp/tap") of 5 checks passed" \
        "(connect twice, data, SHA-256, no kernel warning on either side);" \
        "$((ms / 1000)).$((ms % 1000 / 100)) s"
    grep '^not ok' "$tmp/tap" | sed 's/^/  /' || true
    exit "$fail"
fi
taps
tap_end
