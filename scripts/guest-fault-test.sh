#!/usr/bin/env bash
# Fault injection through the Linux driver (docs/debugging.md, issue 16):
# one ernic guest with unmodified rdma-core runs guest/ernic-fault-verbs.c,
# two RC QPs in loopback; for each fault the program asks for on its
# console, scripts/qmp-fault.py (which runs QEMU) injects it through QMP
# (qom-set of the device's "fault" property, set_link) and answers on the
# guest's ttyS1, and the program checks the completion status
# (docs/driver.md's FATAL table), the async event, the QP's state, and
# recovery through Reset to a working QP. The same way the guest is
# migrated mid-traffic and in the middle of a FATAL recovery, and
# snapshotted and loaded mid-traffic (issue 15; docs/migration.md). The
# device's reads of a doorbell page's CQHEAD or RQPI (ERNIC-X UPOLL) are
# traced: a process that polls in vain must make some.
# usage: guest-fault-test.sh [--check] WORKDIR
#   --check: print TAP (for `meson test`) instead of the transcript
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/guest-lib.sh"

guest_args "$@"
# The same image as the user-space verbs test.
verbs_image

tmp=$work/guest/fault
mkdir -p "$tmp"
console=$tmp/console
rm -f "$tmp/state" "$tmp/snap.qcow2" "$tmp"/trace-*
: >"$console"
guest_cmd "${image[0]}" "${image[1]}" \
    "ulp_role=single ulp_dev=ernic ulp_ip=10.1.0.1 verbs_steps=fault" \
    -device ernic,id=ern0,mac=52:54:00:e3:32:41 \
    -trace ernic_udb_poll -D "$tmp/trace-%d"
log "guest: ${cmd[*]} (qmp-fault.py adds QMP and ttyS1)"
start=$(date +%s%N)
stats=$(timeout 900 "$ERNIC_PYTHON" "$ERNIC_ROOT/scripts/qmp-fault.py" \
        "$console" "$tmp" ern0 -- "${cmd[@]}" || echo '{}')
ms=$((($(date +%s%N) - start) / 1000000))
out=$(tr -d '\r' <"$console")
transcript=$(printf '%s\n' "$out" | grep -a '^guest:' || true)
transcript+=$'\n'"guest: host: fault-stats $stats"
polls=$(cat "$tmp"/trace-* 2>/dev/null | grep -c 'ernic_udb_poll' || true)
transcript+=$'\n'"guest: host: doorbell page polls ${polls:-0}"

if [ "$check" != 1 ]; then
    printf '%s\n' "$transcript"
    log "one guest, faults injected through QMP: ${ms} ms (TCG)"
    printf '%s\n' "$transcript" | grep -q 'RESULT PASS'
    exit
fi
nfatal=$(grep -c $'^\t{ 0x' "$ERNIC_ROOT/guest/ernic-fault-verbs.c" || true)
echo "1..15"
tap "every FATAL code: status, async events (responder's only), Error, \
reset and reused ($nfatal)" \
    '^guest: ok fault: FATAL 0x' "$nfatal"
tap "error CQE: flushed, the QP goes on" '^guest: ok fault: cqe-error'
tap "NAKs from the peer: remote access/op errors, RNR and PSN retried" \
    '^guest: ok fault: nak type=' 4
tap "wire faults on the QP's frames: the SEND arrives whole" \
    '^guest: ok fault: .*,dir=tx,qp=' 4
tap "set_link: PORT_ERR, DOWN, PORT_ACTIVE, ACTIVE" \
    '^guest: ok fault: set_link'
tap "atomics from 8 QPs to one counter through a wire dropping and \
duplicating 5 %: every value seen once, the counter exact" \
    '^guest: ok fault: atomics from 8 QPs'
tap "FATAL flushes every WR of both queues, in order" \
    '^guest: ok fault: FATAL flushes every WR'
tap "a FATAL's error completion polled before its receive flush" \
    "^guest: ok fault: a FATAL's error completion before its receive flush"
tap "completion interrupts: polled SENDs do not interrupt each, an armed \
CQ gets its event" \
    '^guest: ok fault: completion interrupts only while the CQ is armed'
tap "migrated with WRITEs and READs in flight, every byte checked" \
    '^guest: ok fault: migrate with WRITEs and READs in flight'
tap "migrated between FATAL and recovery: still Error, reset and reused" \
    '^guest: ok fault: migrate between FATAL'
tap "savevm and loadvm with WRITEs and READs in flight, bytes checked" \
    '^guest: ok fault: savevm and loadvm'
tap "a process polling in vain reads its QP's doorbell page (ERNIC-X \
UPOLL)" '^guest: host: doorbell page polls [1-9]'
tap_none "every injection carried out by the host" '^guest: host: FAIL'
tap "ernic clean (no kernel warning), every case passed" \
    '^guest: RESULT PASS$'
tap_end
