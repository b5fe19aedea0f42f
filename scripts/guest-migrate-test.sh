#!/usr/bin/env bash
# Live migration of a guest in the middle of RDMA traffic
# (docs/migration.md). Two ernic guests joined by an AF_UNIX -netdev
# stream run unmodified rdma-core tools and perftest (guest/init-verbs.sh,
# verbs_steps=migrate): rping with its payload check (SEND, READ, WRITE),
# ibv_rc_pingpong with its buffer check, ib_write_bw, ib_read_bw and
# ib_send_bw. Each time a step of the client moves data, the host migrates
# the client's QEMU to a file (QMP "migrate"), quits it and starts a new
# QEMU that loads it (-S -incoming), connects to the server again and then
# runs; the RC connection carries on, retransmitting what was lost.
# usage: guest-migrate-test.sh [--check] WORKDIR
#   --check: print TAP (for `meson test`) instead of the transcript
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/guest-lib.sh"

guest_args "$@"
# The same image as guest-ulp-test.sh's verbs test.
verbs_image

tmp=$work/guest/migrate
mkdir -p "$tmp"
sock=$tmp/link.sock
qmp=$tmp/client.qmp
sqmp=$tmp/server.qmp
state=$tmp/client.state
rm -f "$sock" "$qmp" "$sqmp" "$state"
stream="stream,id=n0,addr.type=unix,addr.path=$sock"
smac=52:54:00:e3:32:31
cmac=52:54:00:e3:32:32
steps=migrate
nsteps=5

start=$(date +%s%N)
guest_cmd "${image[0]}" "${image[1]}" \
    "ulp_role=server ulp_dev=ernic ulp_ip=10.1.0.1 ulp_peer=10.1.0.2 \
ulp_peer_mac=$cmac verbs_steps=$steps" \
    -netdev "$stream,server=on" -device "ernic,netdev=n0,mac=$smac" \
    -qmp "unix:$sqmp,server=on,wait=off"
log "server: ${cmd[*]}"
timeout 1200 "${cmd[@]}" </dev/null >"$tmp/server" 2>&1 &
spid=$!
guest_cmd "${image[0]}" "${image[1]}" \
    "ulp_role=client ulp_dev=ernic ulp_ip=10.1.0.2 ulp_peer=10.1.0.1 \
ulp_peer_mac=$smac verbs_steps=$steps" \
    -netdev "$stream,server=off,reconnect-ms=100" \
    -device "ernic,netdev=n0,mac=$cmac" \
    -qmp "unix:$qmp,server=on,wait=off"
client=("${cmd[@]}")
log "client: ${client[*]}"
: >"$tmp/client"
timeout 1200 "${client[@]}" </dev/null >>"$tmp/client" 2>&1 &
cpid=$!

# Each "migrate: STEP running" of the client: a second later, migrate it.
# The host's lines go into the client's console as "guest: host: ...".
# The server is stopped through the gap (from the migration's end to the
# new QEMU's start) where it sends requests with less retry time than the
# gap: ibv_rc_pingpong's pongs (timeout 14, 7 retries: about 0.5 s; the
# gap is 0.3 to 1.5 s here). perftest's server only answers, rping's has
# rdma_cm's 8 s (docs/migration.md, "What the peer sees").
done_n=0
while kill -0 "$cpid" 2>/dev/null; do
    marks=$(grep -ac '^guest: migrate: .* running' "$tmp/client" || true)
    if [ "$marks" -gt "$done_n" ]; then
        step=$(grep -a '^guest: migrate: .* running' "$tmp/client" |
               tail -n 1 | sed 's/^guest: migrate: \(.*\) running.*/\1/')
        peer=
        case $step in ibv_rc_pingpong*) peer=$sqmp ;; esac
        sleep 1
        if res=$("$ERNIC_PYTHON" "$ERNIC_ROOT/scripts/qmp-migrate.py" \
                 ${peer:+--peer "$peer"} "$qmp" "$state" 2>&1); then
            wait "$cpid" || true
            rm -f "$qmp"
            # The new QEMU starts stopped (-S) and runs once its link is
            # up, so that its timers do not count the reconnect.
            timeout 1200 "${client[@]}" -S -incoming "file:$state" \
                </dev/null >>"$tmp/client" 2>&1 &
            cpid=$!
            res+="; $("$ERNIC_PYTHON" "$ERNIC_ROOT/scripts/qmp-migrate.py" \
                      --resume "$qmp" n0 ${peer:+"$peer"} 2>&1 || echo FAIL)"
            echo "guest: host: migrated during $step: $res" >>"$tmp/client"
        else
            echo "guest: host: FAIL migration during $step: $res" \
                >>"$tmp/client"
        fi
        done_n=$marks
    fi
    sleep 0.2
done
wait "$cpid" || true
wait "$spid" || true
ms=$((($(date +%s%N) - start) / 1000000))

pair_transcript "$tmp" server client
if [ "$check" != 1 ]; then
    show_pair_transcript "migration: ernic <== RoCEv2 ==> ernic, the \
client migrated in each of $nsteps steps: ${ms} ms (TCG)"
fi
echo "1..$((nsteps + 4))"
tap "rping, 3000 pings across a migration, payload checked" \
    'ok client: rping 3000: 3000 pings'
tap "ibv_rc_pingpong 64 KiB across a migration, buffers checked" \
    'ok client: ibv_rc_pingpong 65536'
for t in ib_write_bw ib_read_bw ib_send_bw; do
    tap "perftest $t 64 KiB across a migration" "ok client: $t "
done
tap "the client migrated once in each step ($nsteps)" \
    'client: host: migrated during' "$nsteps"
tap "no migration failed" 'client: host: migrated during .*running$' "$nsteps"
tap "server: ernic clean (no kernel warning)" 'server: RESULT PASS$' 1
tap "client: ernic clean, every step passed" 'client: RESULT PASS$' 1
tap_end
