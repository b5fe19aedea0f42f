#!/bin/sh
# /init of the user-space verbs test (busybox): unmodified rdma-core and
# perftest tools between two guests (ulp-lib.sh has the command line),
# each on ernic (the rdma-core provider libernic, rdma-core/providers/ernic)
# or on Linux rxe (librxe).
#   server: runs the server side of each step in turn, each on a port of
#           its own, under a timeout
#   client: runs the client side of each step against it (retrying while
#           the server side is not yet listening) and checks its output:
#           ibv_devinfo, ibv_rc_pingpong with its buffer check at several
#           sizes, ibv_srq_pingpong (4 QPs on one SRQ, the server checking
#           the buffers), ibv_ud_pingpong (1 KiB datagrams, checked),
#           UD, UC and multicast (perftest, udaddy, mckey), UCX's
#           ucx_perftest (UCP over UD and RC+UD; UCT), libfabric's
#           fi_pingpong (msg, rdm, dgram; data checked), rping with its
#           payload check, perftest's bandwidth and latency tests, with
#           qperf's RC tests (not with verbs_qperf=0); atomics (perftest's
#           ib_atomic_bw and ib_atomic_lat, qperf's, UCT's);
#           then, on ernic, the security checks
#           (ernic-uverbs-test)
# ulp_mib=N (the command line's size) is not used; verbs_steps=short|full
# picks the sizes and iterations; bench runs perftest alone at the sizes
# of scripts/bench-guests.sh, demo its write tests for the README's main
# command.
. /ulp-lib.sh

steps=short
qperf=1
uct=1
xrc=0
# migrate steps: pings, ping-pongs and perftest iterations, each step
# several seconds long so that the migration (about 1.4 s, a second after
# the step says it runs) ends inside it: 160000 64-KiB messages at the
# 10 to 14 Gb/s of ernic since the stream netdev's larger buffers (QEMU
# patches 0005-0007; 80000 at 6 to 8 Gb/s before), and 18000 ping-pongs
# (6000 took 1.66 s then, and the step ended before its migration
# began; 20000 messages had ended before the migration did in the days
# of 2 Gb/s: the server went, the link never came back)
MIG_PINGS=3000
MIG_PONGS=18000
MIG_ITERS=160000
for a in $(cat /proc/cmdline); do
    case $a in
    verbs_steps=*) steps=${a#*=} ;;
    verbs_qperf=*) qperf=${a#*=} ;;
    verbs_uct=*) uct=${a#*=} ;;
    verbs_xrc=*) xrc=${a#*=} ;;
    esac
done

# The RoCE v2 GID of the port's IPv4 address: its index in the GID table.
gid_index() {
    d=/sys/class/infiniband/$ibdev/ports/1
    for g in "$d"/gids/*; do
        i=${g##*/}
        case $(cat "$g" 2>/dev/null) in
        0000:0000:0000:0000:0000:ffff:*)
            [ "$(cat "$d/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
                { echo "$i"; return; } ;;
        esac
    done
}

# perftest_steps TOOLS BW_SIZES LAT_SIZES ITERS: one step per tool and size.
# perftest sets a QP's initiator depth to the peer's outstanding READs,
# which devices refuse beyond their own (ernic 16, rxe 128): -o 16 on
# both sides, as between any two devices whose limits differ.
perftest_steps() {
    for t in $1; do
        o=
        case $t in ib_read_*) o="-o 16" ;; esac
        case $t in
        *_bw) sz=$2; a="-n $4 -F --report_gbits" ;;
        *) sz=$3; a="-n $(($4 * 2)) -F" ;;
        esac
        for s in $sz; do
            echo "$t $s|$t -d @D -x @G -p @P -s $s $a $o|$t -d @D -x @G -p @P -s $s $a $o @S"
        done
    done
}

# mckey_scripts: the two sides of the mckey step. mckey's receiver
# joins the group and polls for its 10 messages, which the sender sends
# 3 s after it has joined itself, with no retry ("we don't want to
# handle reliability issue in this simple test program"). So the
# sender asks the receiver's side (busybox nc to the step's port on the
# server) how it stands: "waiting", "joined" once its IGMP membership
# shows (its QP is attached a moment later), then what mckey received,
# which is the step's check. The sender starts once the receiver has
# joined, and until the last answer sends a burst of 10 again, at most
# 6 times, and says how many it sent. The receiver answers every ask
# until it has given the last answer. (Until 2026-11-28 the receiver
# told the sender, once, on a port the sender listened on between
# bursts; twice in CI that word never came, and the sender went on
# sending to a receiver that had left the group.)
MCKEY_GROUP=239.1.2.3
MCKEY_HEX=030201EF              # as /proc/net/igmp shows it
mckey_scripts() {
    cat >/tmp/mckey-recv <<EOF
#!/bin/sh
# mckey-recv ADDRESS PORT
status() {
    echo "\$1" >/tmp/mckey.new && mv /tmp/mckey.new /tmp/mckey.status
}
# Answer each ask with the status, until the last one has been given.
answer() {
    end=\$((\$(date +%s) + 280))
    while [ "\$(date +%s)" -lt \$end ]; do
        cp /tmp/mckey.status /tmp/mckey.told
        timeout 20 nc -l -p \$1 </tmp/mckey.told >/dev/null 2>&1
        grep -q '^mckey receiver' /tmp/mckey.told && return 0
    done
    return 1
}
status waiting
mckey -m $MCKEY_GROUP -b \$1 -C 10 >/tmp/mckey.out 2>&1 &
pid=\$!
answer \$2 &
answers=\$!
# Stopped (no group, or the step's timeout): what mckey got to.
stopped() {
    kill \$pid \$answers
    sleep 1
    cat /tmp/mckey.out
    grep $MCKEY_HEX /proc/net/igmp
    exit 1
}
trap stopped TERM
i=0
until grep -q $MCKEY_HEX /proc/net/igmp; do
    i=\$((i + 1))
    [ \$i -lt 300 ] || stopped
    sleep 0.1
done
status joined
wait \$pid && r="complete" || r="failed (\$?)"
cat /tmp/mckey.out
status "mckey receiver: \$(grep -c . /tmp/mckey.out) lines, data transfers \$r"
wait \$answers
EOF
    cat >/tmp/mckey-send <<EOF
#!/bin/sh
# mckey-send ADDRESS PORT RECEIVER
ask() {
    nc \$3 \$2 </dev/null 2>/dev/null
}
i=0
until ask "\$@" | grep -qE '^(joined|mckey receiver)'; do
    i=\$((i + 1)); [ \$i -lt 600 ] || exit 1; sleep 0.2
done
n=1
while :; do
    mckey -m $MCKEY_GROUP -b \$1 -s -C 10 || exit 1
    i=0
    while [ \$i -lt 75 ]; do
        r=\$(ask "\$@")
        case \$r in
        "mckey receiver"*) echo "\$r, \$n burst(s) sent"; exit 0 ;;
        esac
        i=\$((i + 1)); sleep 0.2
    done
    n=\$((n + 1)); [ \$n -le 6 ] || exit 1
done
EOF
    chmod +x /tmp/mckey-recv /tmp/mckey-send
    # The group's route: rdma_cm resolves its address as IP does.
    ip route add 224.0.0.0/4 dev "$nd" 2>/dev/null
}

# datagram_steps: UD datagrams of the IB MTU and UC SENDs (ERNIC-X UD
# and UC on ernic), the server checking every buffer (-c); perftest over
# UC and UD, with fewer messages than the receiver posts (512), as
# neither has flow control; rdma_cm's UD port space (SIDR) and a
# multicast group (ERNIC-X multicast): 10 datagrams each.
datagram_steps() {
    echo "ibv_ud_pingpong 1024|ibv_ud_pingpong -d @D -g @G -p @P -s 1024 -n 20 -c|ibv_ud_pingpong -d @D -g @G -p @P -s 1024 -n 20 -c @S"
    echo "ibv_uc_pingpong 4096|ibv_uc_pingpong -d @D -g @G -p @P -s 4096 -n 20 -c|ibv_uc_pingpong -d @D -g @G -p @P -s 4096 -n 20 -c @S"
    uc_ud_steps
    echo "udaddy 10|udaddy -b @A|udaddy -s @S -b @A"
    echo "mckey 10|/tmp/mckey-recv @A @P|/tmp/mckey-send @A @P @S"
}

# uc_ud_steps: perftest's UC WRITE and SEND, UD SEND of the IB MTU.
uc_ud_steps() {
    local t
    for t in "UC ib_write_bw 65536" "UC ib_send_bw 65536" \
             "UD ib_send_bw 1024" "UD ib_send_lat 2"; do
        set -- $t
        a="-n 100 -F"
        case $2 in *_bw) a="$a --report_gbits" ;; esac
        echo "$1 $2 $3|$2 -c $1 -d @D -x @G -p @P -s $3 $a|$2 -c $1 -d @D -x @G -p @P -s $3 $a @S"
    done
}

QPERF_RC="rc_bw rc_lat rc_rdma_read_bw rc_rdma_write_bw rc_rdma_write_poll_lat"
# qperf's atomic tests: the rate of each, and the ver_ tests' check that
# every result is the value the counter held (ERNIC-X ATOMIC on ernic)
QPERF_ATOMIC="rc_compare_swap_mr rc_fetch_add_mr ver_rc_compare_swap ver_rc_fetch_add"

# atomic_steps: perftest's atomic tests, both operations, and qperf's.
# perftest asks for as many outstanding atomics as READs: -o 16.
atomic_steps() {
    local a t
    for a in FETCH_AND_ADD CMP_AND_SWAP; do
        for t in ib_atomic_bw ib_atomic_lat; do
            echo "$t $a|$t -d @D -x @G -p @P -A $a -n 200 -F -o 16|$t -d @D -x @G -p @P -A $a -n 200 -F -o 16 @S"
        done
    done
    # UCT's atomics over rc_verbs: the device's own (ucx_info lists
    # rc_verbs's 64-bit add, fadd and cswap). UCP's own atomics do not
    # take them: UCX 1.13 uses a transport's only if it has every
    # atomic operation (and, or, xor, swap too), which rc_verbs has on
    # no device; UCP emulates them over active messages, as on rxe.
    uct_atomic_steps
    [ "$qperf" = 1 ] || return 0
    for t in $QPERF_ATOMIC; do
        echo "qperf $t|qperf -lp @P|qperf -cm1 -lp @P -t 1 @S $t quit"
    done
}

# The steps: NAME|SERVER ARGS|CLIENT ARGS (@P: this step's TCP port, @G:
# the GID index, @D: the RDMA device, @S: the server's address, @A: this
# guest's, @R: settings rxe needs, expand()).
step_list() {
    all="ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat ib_read_lat"
    case $steps in
    bench)
        # scripts/bench-guests.sh: perftest only, the table's sizes;
        # then UD SENDs of the IB MTU, and SENDs received through an SRQ
        perftest_steps "$all" "64 1024 4096 65536 1048576" \
            "2 64 1024 4096 65536" 200
        echo "ud:ib_send_bw 1024|ib_send_bw -c UD -d @D -x @G -p @P -s 1024 -n 200 -F --report_gbits|ib_send_bw -c UD -d @D -x @G -p @P -s 1024 -n 200 -F --report_gbits @S"
        echo "ud:ib_send_lat 2|ib_send_lat -c UD -d @D -x @G -p @P -s 2 -n 400 -F|ib_send_lat -c UD -d @D -x @G -p @P -s 2 -n 400 -F @S"
        echo "srq:ib_send_bw 65536|ib_send_bw --use-srq -d @D -x @G -p @P -s 65536 -n 200 -F --report_gbits|ib_send_bw --use-srq -d @D -x @G -p @P -s 65536 -n 200 -F --report_gbits @S"
        return ;;
    ucx)
        # UCX's perftests alone (ERNIC_VERBS_STEPS=ucx), every transport
        # and test: the short steps have three of them
        ucp_steps "ud_verbs tag_lat 8 1000" "ud_verbs tag_bw 4096 200" \
            "rc_verbs,ud_verbs tag_lat 8 1000" \
            "rc_verbs,ud_verbs tag_bw 65536 200" \
            "rc_verbs,ud_verbs ucp_am_bw 65536 200"
        uct_steps
        return ;;
    qperf)
        # qperf's RC tests alone (ERNIC_VERBS_STEPS=qperf)
        qperf_steps
        return ;;
    atomic)
        # the atomic steps alone (ERNIC_VERBS_STEPS=atomic)
        atomic_steps
        return ;;
    fabric)
        # libfabric's steps alone (ERNIC_VERBS_STEPS=fabric)
        fabric_steps
        return ;;
    datagram)
        # the UD, UC and multicast steps alone (ERNIC_VERBS_STEPS=
        # datagram), to look at them quickly
        datagram_steps
        return ;;
    demo)
        # the README's main command: ib_write_bw and ib_write_lat
        perftest_steps "ib_write_bw ib_write_lat" "4096 65536 1048576" 2 200
        return ;;
    one:*)
        # scripts/bench-guests.sh --one TOOL:SIZE:ITERS: one perftest
        # step, long enough for a profile
        t=${steps#one:}
        n=${t##*:}
        t=${t%:*}
        s=${t#*:}
        t=${t%%:*}
        perftest_steps "$t" "$s" "$s" "$n"
        return ;;
    migrate)
        # scripts/guest-migrate-test.sh: steps long enough (several
        # seconds under TCG) for the client to be migrated in each
        echo "rping $MIG_PINGS|rping -s -a @A -p @P -V -C $MIG_PINGS|rping -c -a @S -p @P -v -V -C $MIG_PINGS"
        echo "ibv_rc_pingpong 65536|ibv_rc_pingpong -d @D -g @G -p @P -s 65536 -n $MIG_PONGS -c|ibv_rc_pingpong -d @D -g @G -p @P -s 65536 -n $MIG_PONGS -c @S"
        perftest_steps "ib_write_bw ib_read_bw ib_send_bw" 65536 2 \
            "$MIG_ITERS"
        return ;;
    esac
    sizes="4096 65536"
    [ "$steps" = full ] && sizes="1 64 4096 65536 1048576"
    for s in $sizes; do
        echo "ibv_rc_pingpong $s|ibv_rc_pingpong -d @D -g @G -p @P -s $s -n 20 -c|ibv_rc_pingpong -d @D -g @G -p @P -s $s -n 20 -c @S"
    done
    # Four QPs receiving through one shared receive queue on each side
    # (ERNIC-X SRQ on ernic); the server checks every buffer (-c).
    echo "ibv_srq_pingpong 4096|ibv_srq_pingpong -d @D -g @G -p @P -s 4096 -q 4 -n 20 -c|ibv_srq_pingpong -d @D -g @G -p @P -s 4096 -q 4 -n 20 -c @S"
    # Memory windows across the pair, ernic or rxe on either side: the
    # client READs and WRITEs through the server's type 2 window, then is
    # refused once the server invalidated it (guest/ernic-mw-pair.c).
    echo "ernic-mw-pair|ernic-mw-pair @D @G @P|ernic-mw-pair @D @G @P @S"
    # XRC: each side's initiator sends into the other's XRC SRQ through
    # its target QP (ERNIC-X XRC; both sides ernic, verbs_xrc=1).
    [ "$xrc" = 1 ] &&
        echo "ibv_xsrq_pingpong 4096|ibv_xsrq_pingpong -d @D -g @G -p @P -s 4096 -n 20|ibv_xsrq_pingpong -d @D -g @G -p @P -s 4096 -n 20 @S"
    # UD, UC and multicast (ERNIC-X on ernic)
    datagram_steps
    # UCX's UCP over UD alone, and over RC (whose receives go through
    # an SRQ) with UD for its wireup; UCT over each
    ucp_steps "ud_verbs tag_lat 8 1000" \
        "rc_verbs,ud_verbs tag_bw 65536 200" \
        "rc_verbs,ud_verbs ucp_am_bw 65536 200"
    uct_steps
    fabric_steps
    echo "rping 100|rping -s -a @A -p @P -V -C 100|rping -c -a @S -p @P -v -V -C 100"
    [ "$qperf" = 1 ] && qperf_steps
    atomic_steps
    if [ "$steps" = full ]; then
        perftest_steps "$all" "2 64 1024 4096 65536 1048576" \
            "2 64 1024 4096 65536" 100
    else
        perftest_steps "$all" 65536 2 100
    fi
}

# UCX (Debian's ucx-utils) over the device. UCX asks for TX_MIN_SGE + 1
# = 6 send SGEs, ernic's WQEs have 4: 3 + 1 it is. (@R: what rxe needs,
# expand().)
UCX_ENV="env UCX_NET_DEVICES=@D:1 UCX_IB_GID_INDEX=@G UCX_IB_TX_MIN_SGE=3 @R"

# ucp_steps "TLS TEST SIZE ITERS"...: ucx_perftest's UCP tests.
ucp_steps() {
    local t
    for t in "$@"; do
        set -- $t
        echo "ucx $1 $2|$UCX_ENV UCX_TLS=$1 ucx_perftest -p @P|$UCX_ENV UCX_TLS=$1 ucx_perftest @S -p @P -t $2 -s $3 -n $4"
    done
}

# uct_steps: UCT's am_lat over UD and over RC. Both sides name one
# device (ucx_perftest's server takes the client's -d): between two of
# a kind only (verbs_uct=1).
uct_steps() {
    local t
    [ "$uct" = 1 ] || return 0
    for t in ud_verbs rc_verbs; do
        echo "uct $t am_lat|$UCX_ENV ucx_perftest -p @P|$UCX_ENV ucx_perftest @S -p @P -x $t -d @D:1 -t am_lat -n 1000"
    done
}

# uct_atomic_steps: UCT's atomic tests over rc_verbs, between two of a
# kind (verbs_uct=1).
uct_atomic_steps() {
    local t
    [ "$uct" = 1 ] || return 0
    for t in add_lat fadd cswap; do
        echo "uct rc_verbs $t|$UCX_ENV ucx_perftest -p @P|$UCX_ENV ucx_perftest @S -p @P -x rc_verbs -d @D:1 -t $t -n 1000"
    done
}

# libfabric (Debian's libfabric-bin): fi_pingpong over the verbs
# provider's three endpoint types, data checked (-c).
fabric_steps() {
    local e p z
    for e in msg rdm dgram; do
        p=verbs
        z=4096
        [ $e = rdm ] && p="verbs;ofi_rxm"
        # a datagram is at most the path MTU
        [ $e = dgram ] && z=1024
        echo "fi_pingpong $e|env @R fi_pingpong -p $p -e $e -B @P -I 100 -S $z -c|env @R fi_pingpong -p $p -e $e -P @P -I 100 -S $z -c @S"
    done
}

# qperf_steps: qperf's RC tests over rdma_cm (-cm1: its own exchange
# sends no GID, which RoCE needs); its client creates send-only QPs and
# its server receive-only ones, and it registers memory with remote
# atomic access. One server per test ("quit" ends it): Debian's qperf
# 0.4.11 server destroys the QP of its listening rdma_cm ID, which has
# none, after each test (ibv_destroy_qp(NULL), a segfault of its per-test
# child, on rxe as on ernic), and the next test of that server then
# found its connection rejected now and then (docs/driver.md, "qperf").
qperf_steps() {
    local t
    for t in $QPERF_RC; do
        echo "qperf $t|qperf -lp @P|qperf -cm1 -lp @P -t 1 @S $t quit"
    done
}

# expand ARGS PORT: the placeholders of a step's command line.
expand() {
    # On rxe (@R), whose UD receives report no packet type in wc.sl, UCX
    # must not check a UD packet's destination GID; and libfabric's RxM
    # sizes its CQ for 256 peers, more than rxe's max_cqe (32767), unless
    # told of fewer (docs/driver.md, "UCX" and "libfabric").
    local rxe=
    [ "$rdev" = rxe ] && rxe="UCX_UD_VERBS_ETH_DGID_CHECK=n FI_UNIVERSE_SIZE=16"
    echo "$1" | sed -e "s/@D/$ibdev/g" -e "s/@G/$gid/g" -e "s/@P/$2/g" \
        -e "s/@S/$peer/g" -e "s/@A/$myip/g" -e "s/@R/$rxe/g"
}

servers() {
    port=19000
    step_list | while IFS='|' read -r name srv cli; do
        port=$((port + 1))
        t0=$(now_ms)
        # shellcheck disable=SC2046 # a command line, on purpose
        timeout 300 $(expand "$srv" "$port") >/tmp/srv.out 2>&1 ||
            { say "server: $name: exit $?"
              # a ping-pong server checks the buffers (-c): its failure
              # fails the test (this loop is a subshell: through a file)
              case $name in *_pingpong*) echo "$name" >>/tmp/srv.fail ;; esac
              grep -v '^ *[A-Z][A-Za-z .]* *: ' \
              /tmp/srv.out | tail -n 25 | sed 's/^/guest: server: /'
              # what the kernel said meanwhile (the console is quiet)
              dmesg | tail -n 15 | sed 's/^/guest: server: dmesg: /'; }
        t1=$(now_ms)
        [ $((t1 - t0)) -lt 30000 ] ||
            say "server: $name took $((t1 - t0)) ms"
    done
}

# pings OUTPUT: the pings rping -v reported, each number once (stderr's
# "DISCONNECT EVENT" may land in the middle of a buffered line).
pings() {
    grep -o 'rdma-ping-[0-9]*: ' "$1" | sort -u | wc -l
}

# qperf_results OUTPUT: "TEST VALUE UNIT" for each test that reported a
# bandwidth, a latency or a message rate.
qperf_results() {
    awk '/^[a-z_]+:$/ { t = substr($1, 1, length($1) - 1) }
         t && /^ +(bw|latency|msg_rate) += / { print t, $3, $4; t = "" }' "$1"
}

# perftest_no_clock OUTPUT: a latency test ran all its iterations but
# could not time them: perftest's calibration of the CPU clock against
# gettimeofday() found the two apart ("Correlation coefficient r^2:
# ... < 0.9", as on a busy host under TCG) and reports "inf".
perftest_no_clock() {
    grep -q 'Correlation coefficient r^2: .* < 0.9' "$1" &&
        grep -qE '^ *[0-9]+ +[0-9]+ +inf +inf +inf ' "$1"
}

# check NAME OUTPUT: what a step's client output must show.
check() {
    case $1 in
    ibv_xsrq_pingpong*) grep -qx 'success' "$2" ;;
    ernic-mw-pair*) grep -q '^mw-pair: ok' "$2" ;;
    ibv_*_pingpong*) grep -q 'bytes in .* seconds = ' "$2" ;;
    ucx*|uct*) grep -q 'Final:' "$2" ;;
    fi_pingpong*) grep -qE '^[0-9]+[kmg]? +100 += *100 ' "$2" ;;
    udaddy*) grep -q 'data transfers complete' "$2" ;;
    mckey*) grep -q 'mckey receiver: .* data transfers complete' "$2" ;;
    rping*) [ "$(pings "$2")" = "${1#rping }" ] ;;
    qperf*) qperf_results "$2" | grep -q "^${1#qperf } " ;;
    *_lat*) grep -qE '^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' "$2" ||
            perftest_no_clock "$2" ;;
    *) grep -qE '^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' "$2" ;;
    esac
}

# result NAME OUTPUT: the step's numbers, for the transcript (perftest:
# size, then average bandwidth or typical and average latency).
result() {
    case $1 in
    ibv_xsrq_pingpong*) grep -x 'success' "$2" | tail -n 1 ;;
    ernic-mw-pair*) grep '^mw-pair: ok' "$2" ;;
    ibv_*_pingpong*) grep 'bytes in' "$2" | tail -n 1 ;;
    ucx*|uct*) grep 'Final:' "$2" | tr -s ' ' | tail -n 1 ;;
    fi_pingpong*) grep -E '^[0-9]+[kmg]? +100 ' "$2" |
                  awk '{ printf("%s B %s MB/s %s us/xfer", $1, $6, $7) }' ;;
    udaddy*) echo "10 datagrams each way, data transfers complete" ;;
    mckey*) grep 'mckey receiver' "$2" ;;
    rping*) echo "$(pings "$2") pings, payload checked" ;;
    qperf*) qperf_results "$2" | tr '\n' ';' | sed 's/;$//; s/;/; /g' ;;
    ib_atomic_bw*) grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' "$2" |
                   awk '{ printf("%s B %s Mpps", $1, $5) }' ;;
    *_bw*) grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' "$2" |
           awk '{ printf("%s B %s Gb/s", $1, $4) }' ;;
    *_lat*) if perftest_no_clock "$2"; then
                echo "every iteration done, not timed (perftest's clock: r^2 < 0.9)"
                return
            fi
            grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' "$2" |
            awk '{ printf("%s B %s us typical %s us avg", $1, $5, $6) }' ;;
    esac
}

# tcp_up PORT: a TCP connection to the server's PORT was made (the tools
# exchange their QP numbers over it, then data moves at once; some close
# it at once, so any state but LISTEN counts).
tcp_up() {
    awk -v p=":$(printf '%04X' "$1")" \
        '$3 ~ p "$" && $4 != "0A" { f = 1 } END { exit !f }' /proc/net/tcp
}

# run_client NAME ARGS...: a step's client side, into /tmp/cli.out. With
# the migrate steps, once data moves this guest tells the host to migrate
# it ("migrate: NAME running"; scripts/guest-migrate-test.sh).
run_client() {
    name=$1
    shift
    if [ "${steps%-read}" != migrate ]; then
        # mckey's sender waits up to 120 s for the receiver to join,
        # then sends up to 6 bursts, 18 s each; every other step is done
        # in seconds.
        case $name in
        mckey*) timeout 240 "$@" >/tmp/cli.out 2>&1 ;;
        *) timeout 60 "$@" >/tmp/cli.out 2>&1 ;;
        esac
        return
    fi
    timeout 300 "$@" >/tmp/cli.out 2>&1 &
    pid=$!
    t=0
    # Connected, or still running after 1.5 s (a TCP exchange closed fast).
    while kill -0 "$pid" 2>/dev/null; do
        if grep -q 'ping data' /tmp/cli.out || tcp_up "$port" ||
           [ $t -ge 15 ]; then
            say "migrate: $name running"
            break
        fi
        t=$((t + 1))
        sleep 0.1
    done
    wait "$pid"
}

clients() {
    port=19000
    step_list >/tmp/steps
    while IFS='|' read -r name srv cli; do
        port=$((port + 1))
        i=0
        ok=0
        : >/tmp/cli.all
        while [ $i -lt 30 ]; do
            rc=0
            # shellcheck disable=SC2046 # a command line, on purpose
            run_client "$name" $(expand "$cli" "$port") || rc=$?
            if [ $rc = 0 ] && check "$name" /tmp/cli.out; then
                ok=1
                break
            fi
            cat /tmp/cli.out >>/tmp/cli.all
            echo "exit status $rc, $(wc -l </tmp/cli.out) lines" \
                >>/tmp/cli.all
            # Not yet listening: try again. Anything else is the answer.
            # (udaddy's SIDR request to no listener comes back as
            # UNREACHABLE; qperf says "failed to connect" to its server's
            # TCP port, and "Event rejected" when the server's CM took
            # an rxe client's QP number, reused at once, for the previous
            # test's connection in timewait: IBTA's stale connection.)
            grep -qE "Connection refused|Couldn't connect to|REJECTED|UNREACHABLE|failed to connect|Event rejected" \
                /tmp/cli.out || break
            i=$((i + 1))
            sleep 1
        done
        if [ $ok = 1 ]; then
            say "ok client: $name: $(result "$name" /tmp/cli.out)"
        else
            fail "client: $name"
            # perftest's "Key : value" banner is left out, its errors not
            awk '/[Ff]ail|[Ee]rror/ || !/^ *[A-Z][A-Za-z .]* *: /' \
                /tmp/cli.all | tail -n 40 |
                sed 's/^/guest: client: /'
            dmesg | tail -n 15 | sed 's/^/guest: client: dmesg: /'
        fi
    done </tmp/steps
}

verbs_server() {
    servers
    [ -s /tmp/srv.fail ] && fail "server side of $(tr '\n' ' ' </tmp/srv.fail)"
    wait_client
}

verbs_client() {
    wait_peer || return
    # A 1500-byte Ethernet MTU holds IB MTU 1024 with RoCEv2's headers,
    # 4200 (ulp_mtu=, the benchmark's --mtu) IB MTU 4096.
    local ibmtu=1024
    [ "${mtu:-1500}" -ge 4200 ] && ibmtu=4096
    if ibv_devinfo -v -d "$ibdev" >/tmp/devinfo 2>&1 &&
       grep -q 'PORT_ACTIVE' /tmp/devinfo &&
       grep -qE "active_mtu:[[:space:]]+$ibmtu " /tmp/devinfo; then
        say "ok client: ibv_devinfo: $ibdev $(grep -m1 'transport:' /tmp/devinfo | tr -s ' \t' ' '), PORT_ACTIVE, active_mtu $ibmtu, $(grep -m1 'atomic_cap:' /tmp/devinfo | tr -s ' \t' ' ')"
    else
        fail "client: ibv_devinfo"
        sed 's/^/guest: client: /' /tmp/devinfo | head -n 20
    fi
    # What UCX finds on the device: its transports (where the image has
    # UCX: guest-verbs's, not guest-migrate's).
    if ! command -v ucx_info >/dev/null; then
        :
    # (as UCX_ENV: ernic's WQEs have 4 SGEs, UCX asks for 5 or 6 unless
    # told, and without them its RC and UD interfaces do not open)
    elif UCX_IB_TX_MIN_SGE=3 ucx_info -d >/tmp/ucx.out 2>&1; then
        say "ok client: ucx_info -d on $ibdev: $(grep -B1 "Device: $ibdev:1" /tmp/ucx.out | grep -o 'Transport: [a-z_]*' | tr '\n' ' ')"
        # rc_verbs's atomics, if UCX found the device's
        say "client: ucx_info rc_verbs on $ibdev: $(awk -v d="$ibdev:1" \
            '/Transport:/ { t = $3 } /Device:/ { dev = $3 }
             t == "rc_verbs" && dev == d && /atomic_/ { printf "%s %s %s; ", $2, $3, $4 }' \
            /tmp/ucx.out)"
    else
        fail "client: ucx_info -d"
    fi
    # What libfabric finds: the verbs provider's endpoint types, RDM
    # through ofi_rxm.
    if ! command -v fi_info >/dev/null; then
        :
    elif fi_info -p verbs >/tmp/fi.out 2>&1 &&
         fi_info -p "verbs;ofi_rxm" >>/tmp/fi.out 2>&1; then
        say "ok client: fi_info -p verbs: $(grep -o 'FI_EP_[A-Z]*' /tmp/fi.out | sort -u | tr '\n' ' ')"
    else
        fail "client: fi_info -p verbs"
        tail -n 20 /tmp/fi.out | sed 's/^/guest: client: /'
    fi
    clients
    [ "$rdev" = ernic ] && [ "$steps" = short ] && security
}

# ernic-uverbs-test: a process cannot make the device touch memory that
# is not its own (guest/ernic-uverbs-test.c), in loopback on this device.
# Twice: with direct QPs (the provider's default where the device has
# ERNIC-X user QPs), and on the command path (ERNIC_DIRECT=0).
security() {
    bdf=$(basename "$(readlink "/sys/class/infiniband/$ibdev/device")")
    if ernic-uverbs-test "$ibdev" "$gid" "$bdf" >/tmp/sec.out 2>&1 &&
       ERNIC_DIRECT=0 ernic-uverbs-test "$ibdev" "$gid" "$bdf" \
           >/tmp/sec-cmd.out 2>&1; then
        say "ok client: uverbs security: $(grep '^ok' /tmp/sec.out | grep -vc SKIP) direct, $(grep '^ok' /tmp/sec-cmd.out | grep -vc SKIP) command path"
    else
        fail "client: uverbs security"
    fi
    sed 's/^/guest: security: /' /tmp/sec.out
    sed 's/^/guest: security (command path): /' /tmp/sec-cmd.out
}

# verbs_steps=fault (scripts/guest-fault-test.sh): one guest; each fault
# guest/ernic-fault-verbs.c asks for is injected by the host through QMP,
# and the program checks what the driver and libibverbs make of it.
faults() {
    if ernic-fault-verbs "$ibdev" "$gid"; then
        say "ok fault: every fault seen as it must be through the driver"
    else
        fail "fault: ernic-fault-verbs"
    fi
}

# verbs_steps=fault-pair (scripts/guest-fault-pair-test.sh): two guests;
# the client drives guest/ernic-fault-pair.c's cases against the server's
# (ernic or rxe), each fault injected by the host through QMP on either.
fault_pair() {
    if [ "$role" = server ]; then
        args="$ibdev $gid"
    else
        wait_peer || return
        args="$ibdev $gid $peer"
    fi
    # shellcheck disable=SC2086 # the program's arguments, on purpose
    if ernic-fault-pair $args; then
        say "ok fault: pair: $role done"
    else
        fail "fault: pair: ernic-fault-pair ($role)"
    fi
    cm_faults
}

# host_req CMD: ask the host (scripts/qmp-fault.py) for CMD, as
# ernic-fault-pair does, and wait for its answer on ttyS1 (fd 3, held
# open by cm_faults: a serial port drops what arrives while it is closed).
host_req() {
    echo "guest: fault: $*"
    read -r ans <&3
    [ "$ans" = ok ] || fail "client: the host did not do $*: $ans"
}

# rdma_cm through faults on the connection's MADs (QP1, on A's device):
# each rping connects (the CM sends its MADs again after a timeout, and
# takes duplicates and stale ones, IBTA chapter 12), pings 10 times with
# its payload checked, and disconnects; the server serves one rping per
# rule, each under a timeout.
CM_RULES="drop,dir=tx,qp=1,count=2 drop,dir=rx,qp=1,count=2 \
dup,qp=1,count=6 corrupt,qp=1,count=3 reorder,qp=1,count=3"
cm_faults() {
    cm_failed=0
    if [ "$role" != server ]; then
        exec 3</dev/ttyS1
        stty -F /dev/ttyS1 raw -echo 2>/dev/null
    fi
    for rule in $CM_RULES; do
        if [ "$role" = server ]; then
            timeout 150 rping -s -a "$myip" -p 7000 -C 10 -V \
                >/tmp/r.out 2>&1 || say "server: rping ($rule): exit $?"
            continue
        fi
        # the server's rping for this rule listens by then
        sleep 2
        host_req "inject $rule"
        t0=$(now_ms)
        rc=0
        timeout 120 rping -c -a "$peer" -p 7000 -C 10 -v -V \
            >/tmp/r.out 2>&1 || rc=$?
        t1=$(now_ms)
        host_req "inject clear"
        if [ $rc = 0 ] && [ "$(pings /tmp/r.out)" = 10 ]; then
            say "ok fault: pair: rdma_cm through $rule: rping connected, 10 pings checked ($((t1 - t0)) ms)"
        else
            fail "fault: pair: rdma_cm through $rule: exit $rc, $(pings /tmp/r.out) pings"
            cm_failed=$((cm_failed + 1))
            grep -v 'ping data' /tmp/r.out | tail -n 5 | sed 's/^/guest: rping: /'
        fi
    done
    # the host takes the devices' fault-stats at this line
    [ "$role" = server ] || { say "fault: rdma_cm: $cm_failed failed"; exec 3<&-; }
}

load ib_uverbs rdma_ucm
rdma_up
mckey_scripts
ibdev=$(ls /sys/class/infiniband | head -n 1)
gid=$(gid_index)
# libfabric links libpsm_infinipath.so.1, which Debian's alternatives
# (not unpacked here) point to libpsm1/.
for f in /usr/lib/libpsm1/libpsm_infinipath.so.1.*; do
    [ -e "$f" ] && ln -sf "$f" /usr/lib/x86_64-linux-gnu/libpsm_infinipath.so.1
done
say "$role: $ibdev GID index ${gid:-none} ($steps steps)"
if [ "$steps" = fault ]; then
    faults
elif [ "$steps" = fault-pair ]; then
    fault_pair
elif [ "$role" = server ]; then
    verbs_server
else
    verbs_client
    tell_server
fi
finish
