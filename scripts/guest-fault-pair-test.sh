#!/usr/bin/env bash
# Faults between two guests (docs/debugging.md, issue 16): an ernic guest
# (A, the client) and a peer guest (B, the server: ernic, or Linux rxe
# over virtio-net), joined by an AF_UNIX -netdev stream, both with
# unmodified rdma-core, run guest/ernic-fault-pair.c. A drives each case
# on both sides over a TCP side channel; scripts/qmp-fault.py runs both
# QEMUs and injects each fault A asks for through QMP, into A's device or
# B's ("peer inject", "peer link"); both sides' completion status, async
# events, QP and port states are checked, and both QPs recover through
# Reset with a SEND each way.
# usage: guest-fault-pair-test.sh [--check] WORKDIR [PEER]
#   PEER: ernic (default) or rxe
#   --check: print TAP (for `meson test`) instead of the transcript
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/guest-lib.sh"

guest_args "$1" "${2:-}"
[ "$check" = 1 ] && shift
peer=${2:-ernic}
case $peer in
ernic) bnic="ernic,id=ernB,netdev=n0,mac=52:54:00:e3:32:52" ;;
rxe) bnic="virtio-net-pci,id=ernB,netdev=n0,mac=52:54:00:e3:32:52,romfile=" ;;
*) die "peer: ernic or rxe" ;;
esac
verbs_image

tmp=$work/guest/fault-pair-$peer
mkdir -p "$tmp/a" "$tmp/b"
sock=$tmp/link.sock
rm -f "$sock" "$tmp"/a/* "$tmp"/b/*
: >"$tmp/client"
: >"$tmp/server"
stream="stream,id=n0,addr.type=unix,addr.path=$sock"
guest_cmd "${image[0]}" "${image[1]}" \
    "ulp_role=server ulp_dev=$peer ulp_ip=10.1.0.1 ulp_peer=10.1.0.2 \
verbs_steps=fault-pair" -netdev "$stream,server=on" -device "$bnic"
bcmd=("${cmd[@]}")
guest_cmd "${image[0]}" "${image[1]}" \
    "ulp_role=client ulp_dev=ernic ulp_ip=10.1.0.2 ulp_peer=10.1.0.1 \
verbs_steps=fault-pair" -netdev "$stream,server=off,reconnect-ms=100" \
    -device ernic,id=ernA,netdev=n0,mac=52:54:00:e3:32:51
log "A: ${cmd[*]}"
log "B: ${bcmd[*]} (qmp-fault.py adds QMP and ttyS1)"
start=$(date +%s%N)
stats=$(timeout 1200 "$ERNIC_PYTHON" "$ERNIC_ROOT/scripts/qmp-fault.py" \
        "$tmp/client" "$tmp/a" ernA -- "${cmd[@]}" --- \
        "$tmp/server" "$tmp/b" ernB -- "${bcmd[@]}" || echo '{}')
ms=$((($(date +%s%N) - start) / 1000000))
pair_transcript "$tmp" server client
transcript+=$'\n'"client: host: fault-stats $stats"

if [ "$check" != 1 ]; then
    show_pair_transcript "two guests (A ernic, B $peer), faults \
injected through QMP on either: ${ms} ms (TCG)"
fi
src=$ERNIC_ROOT/guest/ernic-fault-pair.c
nreq=$(sed -n '/^static const struct code_case req_cases/,/^};/p' "$src" |
       grep -c $'^\t{ 0x')
nresp=$(sed -n '/^static const struct code_case resp_cases/,/^};/p' "$src" |
        grep -c $'^\t{ 0x')
nwire=$(sed -n '/^static const char \*const wire_rules/,/^};/p' "$src" |
        grep -c $'^\t"')
[ "$peer" = ernic ] && echo "1..13" || echo "1..12"
tap "requester FATAL codes on A: A's status, no async event (0x01: \
QP_REQ_ERR), Error; B RTS; both reset, a SEND each way ($nreq)" \
    '^client: ok fault: pair: FATAL 0x[0-9a-f]*[^ ]* on A, B waiting' "$nreq"
tap "responder FATAL codes on A: A raises QP_REQ_ERR or QP_ACCESS_ERR; \
B ($peer) gets A's NAK as its SEND's status, no event, Error; both \
reset ($nresp)" \
    "^client: ok fault: pair: FATAL 0x.. on A, B's SEND waiting" "$nresp"
tap "cqe-error on A: B has the SEND, A's CQE is WR_FLUSH_ERR, A goes on" \
    '^client: ok fault: pair: cqe-error on A'
tap "NAKs on A's ACKs: remote access/op: status, Error, no event; RNR, \
PSN retried, B has the SEND once" '^client: ok fault: pair: nak type=' 4
tap "wire faults on A's frames: a READ and a WRITE whole on both \
($nwire)" '^client: ok fault: pair: .*,qp=A: a READ' "$nwire"
tap "A's link off and on: A's port events; B's SEND RETRY_EXC_ERR" \
    "^client: ok fault: pair: A's link off"
tap "B's link off and on: A's SEND RETRY_EXC_ERR; B's port events" \
    "^client: ok fault: pair: B's link off"
tap "a link that blinks on A's side, then B's: a READ and a WRITE complete \
whole, no FATAL" "^client: ok fault: pair: .'s link blinks" 2
tap "B's QP gone: A's SEND RETRY_EXC_ERR, no event, Error" \
    "^client: ok fault: pair: B's QP destroyed"
if [ "$peer" = ernic ]; then
    tap "FATAL codes injected on B's ernic: A's status, no event; B's \
QP_REQ_ERR or QP_ACCESS_ERR; both Error, reset" \
        "^client: ok fault: pair: FATAL 0x.. on B" 3
fi
tap "rdma_cm (rping, 10 pings checked) through CM MADs dropped each way, \
duplicated, corrupted and reordered on QP1 (5)" \
    '^client: ok fault: pair: rdma_cm through' 5
tap_none "every injection carried out by the host" 'host: FAIL'
tap "both guests clean (no kernel warning), every case passed" \
    '^\(client\|server\): RESULT PASS$' 2
tap_end
