#!/usr/bin/env bash
# RecoNIC's access pattern between two guests (docs/boards.md): each has an
# ernic with layout=reconic and no kernel RDMA driver; guest/reconic-rdma.c
# maps resource2 from sysfs, keeps queues in hugepages (bus addresses from
# /proc/self/pagemap) and data in card memory (/dev/reconic-mm), and the
# two exchange addresses over TCP on a virtio-net NIC. WRITE and READ card
# to card, SEND/RECV into RQ buffers, a batch of 32 WRITEs behind one
# doorbell, then RecoNIC's QP teardown; every byte checked.
# Then the matrix of reconic-rdma -r: READ, WRITE and SEND of 128 B, 4 KiB
# and 64 KiB from and to card and host memory, each completion within a
# budget of CQHEADi reads (RecoNIC's poll_cq_cidb() gives up after 1000).
# usage: guest-reconic-test.sh [--reps N] [--budget READS] [--card MODE]
#                              [--trace] [--check] WORKDIR
#   --reps: the matrix's repetitions (default 3; 0: no matrix)
#   --budget: CQHEADi reads per completion (default 10000, ten times
#             RecoNIC's, so that a loaded CI host cannot fail it; 0: none)
#   --card: own (default: card-mem, preallocated), memdev (a
#           memory-backend-ram with prealloc=on), lazy (one without)
#   --trace: the engine's timestamped trace of each QEMU in
#            WORKDIR/guest/reconic/{server,client}.trace (docs/boards.md)
#   --check: print TAP (for `meson test`) instead of the transcript
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/guest-lib.sh"

reps=3 budget=10000 card=own trace=0
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --card) card=$2; shift 2 ;;
    --trace) trace=1; shift ;;
    *) break ;;
    esac
done
backend=memory-backend-ram,id=card0,size=64M
case $card in
own) cardopt=() ;;
memdev) cardopt=(-object "$backend,prealloc=on") ;;
lazy) cardopt=(-object "$backend") ;;
*) die "--card: own, memdev or lazy, not '$card'" ;;
esac
guest_args "$@"
tmp=$work/guest/reconic
mkdir -p "$tmp"
prog=$tmp/reconic-rdma
if [ ! -x "$prog" ] || [ "$ERNIC_ROOT/guest/reconic-rdma.c" -nt "$prog" ] ||
   [ "$ERNIC_ROOT/include/hw/rdma/ernic_regs.h" -nt "$prog" ]; then
    log "building guest/reconic-rdma.c (static)"
    cc -O2 -Wall -Wextra -static -I"$ERNIC_ROOT/include" -o "$prog.tmp" \
        "$ERNIC_ROOT/guest/reconic-rdma.c"
    mv "$prog.tmp" "$prog"
fi
mapfile -t kos < <("$ERNIC_ROOT/scripts/build-guest-driver.sh" "$work")
mapfile -t image < <("$ERNIC_ROOT/scripts/guest-image.sh" "$work" \
    "$ERNIC_ROOT/guest/init-reconic.sh" "${kos[2]}" "$prog" \
    kdep:virtio_pci kdep:virtio_net)

rdma=$tmp/rdma.sock
side=$tmp/side.sock
rm -f "$rdma" "$side"
start=$(date +%s%N)
# The timestamps of these events give the engine's latencies
# (scripts/board-timing.sh).
events=(ernic_sq_doorbell ernic_tx_req ernic_tx_ack ernic_tx_read_resp
        ernic_rx ernic_sq_complete)
for role in server client; do
    if [ $role = server ]; then
        me=1 peer=2 listen=on
    else
        me=2 peer=1 listen=off
    fi
    dev="ernic,netdev=r0,layout=reconic,mac=52:54:00:e3:33:0$me"
    [ "$card" = own ] || dev+=",card-memdev=card0"
    traceopt=()
    if [ "$trace" = 1 ]; then
        rm -f "$tmp/$role.trace"
        traceopt=(-msg timestamp=on -D "$tmp/$role.trace")
        for e in "${events[@]}"; do
            traceopt+=(-trace "$e")
        done
    fi
    guest_cmd "${image[0]}" "${image[1]}" \
        "rn_role=$role rn_ip=10.2.0.$me rn_peer=10.2.0.$peer \
rn_ernic_ip=10.3.0.$me rn_reps=$reps rn_budget=$budget" \
        "${cardopt[@]}" "${traceopt[@]}" \
        -netdev "stream,id=r0,server=$listen,addr.type=unix,addr.path=$rdma" \
        -device "$dev" \
        -netdev "stream,id=s0,server=$listen,addr.type=unix,addr.path=$side" \
        -device "virtio-net-pci,netdev=s0,romfile=,mac=52:54:00:12:34:0$me"
    log "$role: ${cmd[*]}"
    timeout 600 "${cmd[@]}" </dev/null >"$tmp/$role" 2>&1 &
    [ $role = server ] && spid=$! && sleep 1
done
cpid=$!
wait "$cpid" || true
wait "$spid" || true
ms=$((($(date +%s%N) - start) / 1000000))

pair_transcript "$tmp" server client
if [ "$check" != 1 ]; then
    show_pair_transcript "RecoNIC pattern: two guests, no kernel RDMA \
driver: ${ms} ms (TCG)"
fi
nmatrix=0
[ "$reps" -gt 0 ] && nmatrix=2
echo "1..$((7 + nmatrix))"
tap "card memory through /dev/reconic-mm, resource2 mapped" \
    'client: reconic: ERNIC at 0x40000 of resource2'
tap "WRITE card to card, 64 KiB checked" 'client: reconic: ok write 65536'
tap "READ card to card, 128 KiB checked" 'client: reconic: ok read 131072'
tap "SEND/RECV into RQ buffers 0 and 1, checked" \
    'client: reconic: ok send/recv 4096 bytes into RQ buffer' 2
tap "32 WRITEs behind one doorbell, checked" 'client: reconic: ok write batch'
if [ "$reps" -gt 0 ]; then
    tap "matrix: READ, WRITE, SEND of 128 B..64 KiB, card and host, \
$reps times, checked" 'client: reconic: ok matrix of'
    tap "matrix: every completion within $budget CQHEADi reads" \
        'client: reconic: matrix: .* 0 over a budget'
fi
tap "server: teardown clean, no kernel warning" 'server: RESULT PASS$'
tap "client: teardown clean, no kernel warning" 'client: RESULT PASS$'
tap_end
