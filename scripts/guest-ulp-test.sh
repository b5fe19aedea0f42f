#!/usr/bin/env bash
# Unmodified in-kernel RDMA consumers between two guests: NVMe over Fabrics
# (nvmet-rdma / nvme-rdma), NFS over RDMA (svcrdma / rpcrdma, NFSv4.1) or
# SRP (ib_srpt / ib_srp); or unmodified user space ("verbs": rdma-core's
# tools and perftest through the ernic provider, guest/init-verbs.sh). Each side is ernic (this project's device and
# driver) or Linux rxe over virtio-net; the two QEMUs are joined by an
# AF_UNIX -netdev stream. The client writes MIB MiB of random data with
# O_DIRECT, reads it back, compares SHA-256, connects again and reads
# again; both sides check their kernel log (guest/init-ULP.sh).
# usage: guest-ulp-test.sh [--check|--summary] WORKDIR ULP [SERVER CLIENT [MIB]]
#   ULP: nvmeof, nfs, srp or verbs; SERVER, CLIENT: ernic (default) or rxe;
#   MIB: 64 unless given (verbs: ignored)
# ERNIC_VERBS_STEPS=full: verbs runs ibv_rc_pingpong at 1 B..1 MiB and each
# perftest at 2 B..1 MiB (bandwidth) or 2 B..64 KiB (latency).
# ERNIC_VERBS_STEPS=one:TOOL:SIZE:ITERS: that perftest step alone (e.g.
# one:ib_write_bw:1048576:3000), long enough for `perf record -a`.
# ERNIC_VERBS_STEPS=ucx: UCX's ucx_perftest steps alone (UCP over UD and
# RC+UD, UCT over each), every test of them; =fabric: libfabric's;
# =qperf: qperf's RC tests alone; =atomic: the atomic steps alone
# (perftest's, qperf's and UCT's).
# ERNIC_VERBS_STEPS=datagram: the UD, UC and multicast steps alone.
#   --check: print TAP (for `meson test`) instead of the transcript
#   --summary: print a short summary (the README's main command)
# ERNIC_GUEST_IOMMU=1: both guests translate DMA through an Intel IOMMU
# (scripts/guest-lib.sh); a TAP point checks that ernic's does.
# ERNIC_ULP_SRQ=1: the nvmeof or srp target receives through shared
# receive queues (nvmet_rdma use_srq=1, ib_srpt's attrib/use_srq); on an ernic server a
# TAP point checks that its device took receive WQEs from an SRQ.
# ERNIC_DEV_OPTS (e.g. db-eventfd=on) is added to each -device ernic's
# options, and names the test's directory apart.
# ERNIC_GUEST_NET=tap: the two QEMUs on taps of a Linux bridge in a
# network namespace of the test's own (needs unshare -n and /dev/net/tun,
# else the test is skipped) instead of the AF_UNIX stream.
# ERNIC_GUEST_MTU=N: both guests' net_device MTU (ernic's, or virtio-net's
# under rxe); 4200 gives IB MTU 4096 (scripts/bench-guests.sh --mtu).
# ERNIC_GUEST_MODARGS=a=1,b=2: parameters of both guests' ernic.ko (e.g.
# rqrec=0), as insmod takes them, commas for spaces.
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
ulp=${1:-}
sdev=${2:-ernic}
cdev=${3:-ernic}
mib=${4:-64}
for d in "$sdev" "$cdev"; do
    case $d in
    ernic|rxe) ;;
    *) die "device $d: ernic or rxe" ;;
    esac
done
case $ulp in
nvmeof)
    what="nvmet-rdma on $sdev <== RoCEv2 ==> nvme-rdma on $cdev, \
$mib MiB ramdisk"
    mods=(kdep:nvmet-rdma kdep:nvme-rdma kdep:brd) ;;
nfs)
    what="nfsd (svcrdma) on $sdev <== RoCEv2 ==> NFSv4.1 proto=rdma \
on $cdev, $mib MiB file"
    mods=(kdep:nfsd kdep:nfsv4 kdep:rpcrdma) ;;
srp)
    what="ib_srpt on $sdev <== RoCEv2 ==> ib_srp on $cdev, \
$mib MiB ramdisk LUN"
    mods=(kdep:ib_srpt kdep:ib_srp kdep:sd_mod) ;;
verbs)
    what="user-space verbs: servers on $sdev <== RoCEv2 ==> clients on \
$cdev (${ERNIC_VERBS_STEPS:-short} steps)"
    # rdma-core built with the ernic provider: its whole user space
    rdma_root=$("$ERNIC_ROOT/scripts/build-rdma-core.sh" "$work")
    mods=(kdep:rdma_ucm "tree:$rdma_root" deb:perftest deb:qperf deb:libpci3
          deb:libudev1 deb:zlib1g deb:libnl-3-200 deb:libnl-route-3-200
          deb:libgcc-s1 deb:libucx0 deb:ucx-utils deb:libnuma1 deb:libgomp1
          deb:libstdc++6 deb:libfabric1 deb:libfabric-bin deb:libatomic1
          deb:libpsm-infinipath1 deb:libpsm2-2 deb:libuuid1) ;;
*)
    die "ULP: nvmeof, nfs, srp or verbs" ;;
esac

mapfile -t kos < <("$ERNIC_ROOT/scripts/build-guest-driver.sh" "$work")
mapfile -t image < <("$ERNIC_ROOT/scripts/guest-image.sh" "$work" \
    "$ERNIC_ROOT/guest/init-$ulp.sh" "${kos[0]}" \
    "$ERNIC_ROOT/guest/ulp-lib.sh" \
    kdep:rdma_cm kdep:ib_uverbs kdep:virtio_pci kdep:virtio_net \
    kdep:rdma_rxe kdep:crc32_generic "${mods[@]}" \
    deb:iproute2 deb:libc6 deb:libmnl0 deb:libbsd0 deb:libcap2 deb:libmd0)

opts_tag=${ERNIC_DEV_OPTS:+-${ERNIC_DEV_OPTS//[^a-zA-Z0-9]/_}}
net=${ERNIC_GUEST_NET:-stream}
net_tag=
[ "$net" = tap ] && net_tag=-tap
tmp=$work/guest/$ulp-$sdev-$cdev${ERNIC_GUEST_IOMMU:+-iommu}${ERNIC_ULP_SRQ:+-srq}$opts_tag$net_tag
mkdir -p "$tmp"
sock=$tmp/link.sock
rm -f "$sock"
stream="stream,id=n0,addr.type=unix,addr.path=$sock"
case $net in
stream)
    snet="$stream,server=on"
    cnet="$stream,server=off,reconnect-ms=100" ;;
tap)
    if ! unshare -n true 2>/dev/null || [ ! -c /dev/net/tun ]; then
        [ "$check" = 1 ] || die "no network namespace or /dev/net/tun here"
        echo "1..0 # SKIP no network namespace (unshare -n) or /dev/net/tun"
        exit 0
    fi
    snet="tap,id=n0,ifname=ernt0,script=no,downscript=no"
    cnet="tap,id=n0,ifname=ernt1,script=no,downscript=no" ;;
*)
    die "ERNIC_GUEST_NET: stream or tap, not $net" ;;
esac
nic() {     # nic DEV MAC
    if [ "$1" = ernic ]; then
        echo "ernic,netdev=n0,mac=$2${ERNIC_DEV_OPTS:+,$ERNIC_DEV_OPTS}"
    else
        echo "virtio-net-pci,netdev=n0,mac=$2,romfile="
    fi
}
guest_mem=$((512 + 2 * mib))
smac=52:54:00:e3:32:21
cmac=52:54:00:e3:32:22

# ernic's rare events (retransmit and RNR timeouts, retries spent, bad
# responses, refused frames) into a trace file per guest, for a look
# after a failure (printed with the console's tail).
traces() {
    local ev=
    [ "$ulp" = verbs ] && ev="-trace ernic_timeout -trace ernic_retry_exhausted \
-trace ernic_rx_resp_error -trace ernic_rx_invalid -trace ernic_qp_fatal \
-trace ernic_busy_poll -trace ernic_idle_poll"
    [ -n "${ERNIC_ULP_SRQ:-}" ] && ev="$ev -trace ernic_srq_take"
    # Every WQE: for the MR point only, not in a timed run (bench-guests).
    [ "$ulp" = nvmeof ] && [ "$1" = server ] && [ "$check" = 1 ] &&
        ev="$ev -trace ernic_sq_wqe"
    [ -n "$ev" ] || return 0
    rm -f "$tmp/trace-$1"
    echo "$ev -D $tmp/trace-$1"
}

# qperf's RC tests, one server each (guest/init-verbs.sh, qperf_steps).
qperf=1
# UCT's ucx_perftest names the client's device on the server too: only
# between two devices of one kind.
uct=0
[ "$sdev" = "$cdev" ] && uct=1
# XRC (ibv_xsrq_pingpong) needs it on both sides: rxe has none.
xrc=0
[ "$sdev" = ernic ] && [ "$cdev" = ernic ] && xrc=1

# run_on_bridge SERVER_CMD... -- CLIENT_CMD...: both QEMUs on taps ernt0
# and ernt1 of a bridge in a network namespace of the test's own
# (netns_bridge, guest-lib.sh): nothing reaches the host's network.
run_on_bridge() {
    local s=()
    while [ "$1" != -- ]; do
        s+=("$1")
        shift
    done
    shift
    {
        declare -f netns_bridge
        echo "set -e"
        echo "netns_bridge ernbr0 ernt0 ernt1"
        echo "set +e"
        echo "timeout 1200 $(printf '%q ' "${s[@]}") </dev/null \
>$(printf '%q' "$tmp/server") 2>&1 &"
        echo "timeout 1200 $(printf '%q ' "$@") </dev/null \
>$(printf '%q' "$tmp/client") 2>&1"
        echo "wait"
    } >"$tmp/on-bridge.sh"
    unshare -n bash "$tmp/on-bridge.sh" || true
}

start=$(date +%s%N)
ERNIC_GUEST_QEMU_ARGS="${ERNIC_GUEST_QEMU_ARGS:-} $(traces server)" \
guest_cmd "${image[0]}" "${image[1]}" \
    "ulp_role=server ulp_dev=$sdev ulp_ip=10.1.0.1 ulp_peer=10.1.0.2 \
ulp_srq=${ERNIC_ULP_SRQ:-0} ulp_peer_mac=$cmac ulp_mib=$mib verbs_steps=${ERNIC_VERBS_STEPS:-short} verbs_qperf=$qperf verbs_uct=$uct verbs_xrc=$xrc${ERNIC_GUEST_MTU:+ ulp_mtu=$ERNIC_GUEST_MTU}\
${ERNIC_GUEST_MODARGS:+ ulp_ernic_args=$ERNIC_GUEST_MODARGS}" \
    -netdev "$snet" -device "$(nic "$sdev" "$smac")"
log "server: ${cmd[*]}"
scmd=("${cmd[@]}")
ERNIC_GUEST_QEMU_ARGS="${ERNIC_GUEST_QEMU_ARGS:-} $(traces client)" \
guest_cmd "${image[0]}" "${image[1]}" \
    "ulp_role=client ulp_dev=$cdev ulp_ip=10.1.0.2 ulp_peer=10.1.0.1 \
ulp_peer_mac=$smac ulp_mib=$mib verbs_steps=${ERNIC_VERBS_STEPS:-short} verbs_qperf=$qperf verbs_uct=$uct verbs_xrc=$xrc${ERNIC_GUEST_MTU:+ ulp_mtu=$ERNIC_GUEST_MTU}\
${ERNIC_GUEST_MODARGS:+ ulp_ernic_args=$ERNIC_GUEST_MODARGS}" \
    -netdev "$cnet" -device "$(nic "$cdev" "$cmac")"
log "client: ${cmd[*]}"
if [ "$net" = tap ]; then
    run_on_bridge "${scmd[@]}" -- "${cmd[@]}"
else
    timeout 1200 "${scmd[@]}" </dev/null >"$tmp/server" 2>&1 &
    spid=$!
    timeout 1200 "${cmd[@]}" </dev/null >"$tmp/client" 2>&1 || true
    wait "$spid" || true
fi
ms=$((($(date +%s%N) - start) / 1000000))

pair_transcript "$tmp" server client
if [ "$check" != 1 ]; then
    show_pair_transcript "$ulp: $what: ${ms} ms (TCG)"
fi
# tap_or_skip FLAG NAME PATTERN WHY [COUNT]: tap NAME on PATTERN (COUNT
# lines of it) when FLAG is 1, else a SKIP that says WHY.
tap_or_skip() {
    if [ "$1" = 1 ]; then
        tap "$2" "$3" "${5:-1}"
    else
        n=$((n + 1))
        echo "ok $n - # SKIP $4"
    fi
}

verbs_taps() {
    local t
    echo "1..42"
    local ibmtu=1024
    [ "${ERNIC_GUEST_MTU:-1500}" -ge 4200 ] && ibmtu=4096
    tap "ibv_devinfo on $cdev: port active, active_mtu $ibmtu (netdev ${ERNIC_GUEST_MTU:-1500})" \
        'ok client: ibv_devinfo'
    tap "ibv_rc_pingpong, 4 KiB and 64 KiB, buffers checked" \
        'ok client: ibv_rc_pingpong' 2
    tap "ibv_srq_pingpong, 4 QPs on one SRQ, 4 KiB, buffers checked" \
        'ok client: ibv_srq_pingpong'
    tap_or_skip "$xrc" "ibv_xsrq_pingpong: XRC initiators into each other's XRC SRQ, 4 KiB" \
        'ok client: ibv_xsrq_pingpong' \
        "XRC needs ernic on both sides (rxe has none)"
    tap "memory windows: READ and WRITE through the server's type 2 window, refused once invalidated" \
        'ok client: ernic-mw-pair'
    tap "ibv_ud_pingpong, 1 KiB UD datagrams, buffers checked" \
        'ok client: ibv_ud_pingpong'
    tap "ibv_uc_pingpong, 4 KiB UC SENDs, buffers checked" \
        'ok client: ibv_uc_pingpong'
    for t in "UC ib_write_bw" "UC ib_send_bw" "UD ib_send_bw" \
             "UD ib_send_lat"; do
        tap "perftest $t" "ok client: $t "
    done
    tap "udaddy: rdma_cm UD port space, 10 datagrams each way" \
        'ok client: udaddy 10'
    tap "mckey: a multicast group, 10 datagrams all received" \
        'ok client: mckey 10: mckey receiver: .* data transfers complete'
    tap "ucx_info -d: UCX finds rc_verbs and ud_verbs on $cdev" \
        'ok client: ucx_info -d on .*rc_verbs.*ud_verbs'
    tap "UCX: ucx_perftest UCP tag_lat over ud_verbs" \
        'ok client: ucx ud_verbs tag_lat'
    tap "UCX: ucx_perftest UCP tag_bw, 64 KiB, over rc_verbs,ud_verbs (RC receives through an SRQ)" \
        'ok client: ucx rc_verbs,ud_verbs tag_bw'
    tap "UCX: ucx_perftest UCP ucp_am_bw, 64 KiB, over rc_verbs,ud_verbs" \
        'ok client: ucx rc_verbs,ud_verbs ucp_am_bw'
    for t in ud_verbs rc_verbs; do
        tap_or_skip "$uct" "UCX: ucx_perftest UCT am_lat over $t" \
            "ok client: uct $t am_lat" \
            "UCT's ucx_perftest needs one kind of device on both sides"
    done
    tap "fi_info -p verbs: libfabric finds MSG, DGRAM and RDM endpoints on $cdev" \
        'ok client: fi_info -p verbs: FI_EP_DGRAM FI_EP_MSG FI_EP_RDM'
    tap "libfabric: fi_pingpong -e msg (verbs), 4 KiB, data checked" \
        'ok client: fi_pingpong msg'
    tap "libfabric: fi_pingpong -e rdm (verbs;ofi_rxm), 4 KiB, data checked" \
        'ok client: fi_pingpong rdm'
    tap "libfabric: fi_pingpong -e dgram (verbs), 1 KiB, data checked" \
        'ok client: fi_pingpong dgram'
    tap "rping, 100 pings, payload checked" 'ok client: rping 100'
    tap "qperf -cm1: rc_bw, rc_lat, rc_rdma_read_bw, rc_rdma_write_bw, rc_rdma_write_poll_lat (send-only and receive-only QPs), each reporting" \
        'ok client: qperf \(rc_bw\|rc_lat\|rc_rdma_read_bw\|rc_rdma_write_bw\|rc_rdma_write_poll_lat\): ' 5
    # Atomics (ERNIC-X ATOMIC on ernic): perftest's with both operations,
    # qperf's rates and checked results, and UCT's over rc_verbs, which
    # uses the device's (ucx_info lists them)
    for t in "ib_atomic_bw FETCH_AND_ADD" "ib_atomic_bw CMP_AND_SWAP" \
             "ib_atomic_lat FETCH_AND_ADD" "ib_atomic_lat CMP_AND_SWAP"; do
        tap "perftest $t" "ok client: $t: "
    done
    tap "qperf -cm1: rc_compare_swap_mr, rc_fetch_add_mr, ver_rc_compare_swap, ver_rc_fetch_add, each reporting a rate" \
        'ok client: qperf [a-z_]*\(compare_swap\|fetch_add\)[a-z_]*: .*[0-9] [KMG]\?/sec' 4
    tap_or_skip "$uct" "UCX: ucx_info lists rc_verbs's 64-bit atomics on $cdev; UCT add_lat, fadd and cswap over rc_verbs" \
        'client: ucx_info rc_verbs on .*atomic_add: 64 bit; atomic_fadd: 64 bit; atomic_cswap: 64 bit\|ok client: uct rc_verbs \(add_lat\|fadd\|cswap\):' \
        "UCT's ucx_perftest needs one kind of device on both sides" 4
    for t in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat \
             ib_read_lat; do
        tap "perftest $t" "ok client: $t "
    done
    tap_or_skip "$([ "$cdev" = ernic ] && echo 1)" \
        "a process reaches no memory but its own (27 checks on direct QPs, SRQs, UD and XRC QPs, 16 on the command path)" \
        'ok client: uverbs security: 27 direct, 16 command path' \
        "the security checks are ernic's"
    busy_poll_tap
    idle_poll_tap
    tap "server: $sdev clean (no kernel warning)" 'server: RESULT PASS$' 1
    tap "client: $cdev clean, every step passed" 'client: RESULT PASS$' 1
}

# A vCPU polling its CQ in vain took the frames it waited for from the
# stream itself (docs/engine.md, "Busy polling"); never on a QEMU
# without the optional patches (qemu_polls, guest-lib.sh).
busy_poll_tap() {
    local took
    n=$((n + 1))
    took=$(cat "$tmp"/trace-* 2>/dev/null | grep -c 'ernic_busy_poll' || true)
    if ! qemu_polls; then
        stock_poll_point "${took:-0}" "busy polling"
        return
    fi
    if [ "${took:-0}" -gt 0 ]; then
        echo "ok $n - busy polling: a polling vCPU took frames itself $took times"
    else
        echo "not ok $n - busy polling: no polling vCPU took a frame itself"
        fail=1
    fi
}

# stock_poll_point COUNT WHAT: on a QEMU without the optional patches
# the device has nothing to poll with: WHAT must not have happened.
stock_poll_point() {
    if [ "${1:-0}" -eq 0 ]; then
        echo "ok $n - $2: none on a QEMU without the optional patches, as built"
    else
        echo "not ok $n - $2: traced $1 times on a QEMU without the optional patches"
        fail=1
    fi
}

# server_trace_tap EVENT SKIP OK NOT_OK: a point that the server's ernic
# traced EVENT at least once; OK is a printf format given the count.
# Skipped (SKIP says why) when the server is not ernic.
server_trace_tap() {
    local took
    n=$((n + 1))
    if [ "$sdev" != ernic ]; then
        echo "ok $n - # SKIP $2"
        return
    fi
    if [ "$1" = ernic_idle_poll ] && ! qemu_polls; then
        stock_poll_point "$(grep -c "$1" "$tmp/trace-server" 2>/dev/null ||
                            true)" "idle polling"
        return
    fi
    took=$(grep -c "$1" "$tmp/trace-server" 2>/dev/null || true)
    if [ "${took:-0}" -gt 0 ]; then
        echo "ok $n - $(printf "$3" "$took")"
    else
        echo "not ok $n - $4"
        fail=1
    fi
}

# The server's guest idled through the latency tests while its ernic's
# main loop took the requests itself (docs/engine.md, "Idle polling").
idle_poll_tap() {
    server_trace_tap ernic_idle_poll "idle polling is the server's ernic's" \
        "idle polling: the idle server's main loop took frames %s times" \
        "idle polling: the idle server's main loop took no frame"
}

# The target's receives went through an SRQ of its ernic device.
srq_tap() {
    server_trace_tap ernic_srq_take "the SRQ check is ernic's" \
        "server: %s receive WQEs taken from SRQs" \
        "server: no receive WQE taken from an SRQ"
}

# The target read each write's data through a fast-registered MR, one
# READ a command, not one per four pages (docs/driver.md, "RDMA READ
# through an MR"): its ernic executed REG_MR WQEs (opcode 0x20).
rw_mr_tap() {
    server_trace_tap 'ernic_sq_wqe .* opcode 0x20 ' \
        "the MR check is the ernic target's" \
        "server: rdma_rw read through MRs (%s REG_MR WQEs)" \
        "server: rdma_rw registered no MR: a READ per four pages"
}

taps() {
    local iommu_taps=${ERNIC_GUEST_IOMMU:+1}
    if [ "$ulp" = verbs ]; then
        verbs_taps
        return
    fi
    local srq_taps=${ERNIC_ULP_SRQ:+1} mr_taps=0
    [ "$ulp" = nvmeof ] && mr_taps=1
    echo "1..$((5 + ${iommu_taps:-0} + ${srq_taps:-0} + mr_taps))"
    if [ -n "${ERNIC_GUEST_IOMMU:-}" ]; then
        tap "ernic's DMA is translated by the IOMMU" \
            'DMA: IOMMU domain DMA' 1
    fi
    if [ -n "${ERNIC_ULP_SRQ:-}" ]; then
        srq_tap
    fi
    if [ "$mr_taps" = 1 ]; then
        rw_mr_tap
    fi
    tap "$ulp: $sdev server and $cdev client connect (twice)" \
        'client: connected' 2
    tap "$mib MiB of random data written" "ok client: wrote $mib MiB" 1
    tap "read back, SHA-256 matches, before and after reconnect" \
        'SHA-256 matches' 2
    tap "server: $sdev clean (no kernel warning)" 'server: RESULT PASS$' 1
    tap "client: $cdev clean (no kernel warning)" 'client: RESULT PASS$' 1
}
if [ "$summary" = 1 ]; then
    taps >"$tmp/tap"
    echo
    if [ "$ulp" = verbs ]; then
        echo "$what (unmodified rdma-core and perftest)"
        checks="tools, data checks, a process's reach, no kernel warning"
    else
        echo "$what (unmodified kernel consumers)"
        checks="connect twice, data, SHA-256, no kernel warning on either side"
    fi
    printf '%s\n' "$transcript" | sed -n 's/^client: ok client: /  /p'
    echo "  Result: $(grep -c '^ok' "$tmp/tap") of $(grep -c "^\(not \)\?ok" "$tmp/tap") checks passed" \
        "($checks); $((ms / 1000)).$((ms % 1000 / 100)) s"
    grep '^not ok' "$tmp/tap" | sed 's/^/  /' || true
    exit "$fail"
fi
taps
if [ "$fail" = 1 ] && [ "$ulp" = verbs ]; then
    for f in "$tmp"/trace-*; do
        [ -f "$f" ] && tail -n 20 "$f" | sed "s|^|# ${f##*/}: |"
    done
fi
tap_end
