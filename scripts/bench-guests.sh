#!/usr/bin/env bash
# The guest-to-guest benchmark (not a test): the same perftest commands
# between two TCG guests over ernic (the rdma-core provider) and over Linux
# rxe (virtio-net), on the same AF_UNIX -netdev stream, in one run; then
# the kernel consumers NVMe-oF and SRP over each. Prints markdown tables
# with the ratio ernic / rxe (docs/driver.md, "Benchmark").
#
# usage: scripts/bench-guests.sh [--no-ulp | --demo] [--mtu N] [--runs N]
#                                [--net stream|tap] [--lazy-ram] [--stock]
#   --no-ulp: perftest only; --demo: ib_write_bw and ib_write_lat at a
#   few sizes (the README's main command); --mtu N: both guests'
#   net_device MTU (1500 unless given; 4200 gives IB MTU 4096);
#   --net tap: the two QEMUs on taps of a Linux bridge in a network
#   namespace of the run's own, a KVM user's usual link, instead of an
#   AF_UNIX -netdev stream (root; scripts/guest-ulp-test.sh);
#   --lazy-ram: the guests' RAM backed at first touch, not before boot
#   (-mem-prealloc, below);
#   --stock: ernic on QEMU as Debian ships it too (README, "Which
#   QEMU"), a column of its own beside the default build's;
#   --runs N: N whole runs, ernic and rxe taking turns, each point the
#   median of its N values with their lowest and highest (a single
#   run's points move by up to +-40 %: four busy threads on two cores)
#   bandwidth: ib_write_bw, ib_read_bw, ib_send_bw at 64 B .. 1 MiB
#   latency:   ib_write_lat, ib_send_lat, ib_read_lat at 2 B .. 64 KiB
#   UD, SRQ:   ib_send_bw -c UD at 1 KiB, ib_send_lat -c UD at 2 B,
#              ib_send_bw --use-srq at 64 KiB
#   consumers: 64 MiB written and read back with O_DIRECT (MiB/s)
set -euo pipefail
. "$(dirname "$0")/common.sh"

ulp=1
steps=bench
runs=1
prealloc=1
stock=0
while [ $# -gt 0 ]; do
    case $1 in
    --no-ulp) ulp=0; shift ;;
    --demo) ulp=0; steps=demo; shift ;;
    --mtu) export ERNIC_GUEST_MTU=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --net) export ERNIC_GUEST_NET=$2; shift 2 ;;
    --lazy-ram) prealloc=0; shift ;;
    --stock) stock=1; shift ;;
    *) die "usage: scripts/bench-guests.sh [--no-ulp | --demo] [--mtu N] [--runs N] [--net stream|tap] [--lazy-ram] [--stock]" ;;
    esac
done
# Every guest's RAM is backed before it boots, as a guest that has run
# a while has it. Otherwise the host zeroes each page at the guest's
# first touch, inside the timed transfer: NVMe-oF's first write of its
# RAM disk spent a fifth of the host's samples in clear_page_erms
# (docs/driver.md, "Benchmark").
if [ "$prealloc" = 1 ]; then
    export ERNIC_GUEST_QEMU_ARGS="${ERNIC_GUEST_QEMU_ARGS:-} -mem-prealloc"
fi
case $runs in
''|*[!0-9]*|0*) die "--runs takes a whole number from 1 on" ;;
esac
# Checked here: each run's failure is only logged, so a misspelt link
# would print empty tables.
case ${ERNIC_GUEST_NET:-stream} in
stream|tap) ;;
*) die "--net takes stream or tap" ;;
esac
work=$ERNIC_ROOT/build
targets=(qemu)
devs=(ernic rxe)
if [ "$stock" = 1 ]; then
    targets+=(qemu-stock)
    devs=(ernic ernic-stock rxe)
fi
"$ERNIC_ROOT/scripts/build.sh" "$work" "${targets[@]}" >&2
out=$work/bench-guests
mkdir -p "$out"

# run_dev LABEL ARGS...: guest-ulp-test.sh ARGS... on LABEL's QEMU
# (ernic-stock: ernic on the stock build).
run_dev() {
    local label=$1
    shift
    if [ "$label" = ernic-stock ]; then
        ERNIC_GUEST_QEMU=$work/qemu-stock/qemu-system-x86_64 \
            "$ERNIC_ROOT/scripts/guest-ulp-test.sh" "$@"
    else
        "$ERNIC_ROOT/scripts/guest-ulp-test.sh" "$@"
    fi
}

rm -f "$out"/verbs-* "$out"/nvmeof-* "$out"/srp-*
for i in $(seq 1 "$runs"); do
    for label in "${devs[@]}"; do
        dev=${label%-stock}
        log "run $i of $runs: perftest between two $label guests"
        ERNIC_VERBS_STEPS=$steps run_dev "$label" "$work" verbs "$dev" \
            "$dev" >"$out/verbs-$label.$i" 2>&1 || true
        if [ "$ulp" = 1 ]; then
            for u in nvmeof srp; do
                log "run $i of $runs: $u between two $label guests"
                run_dev "$label" "$work" "$u" "$dev" "$dev" 64 \
                    >"$out/$u-$label.$i" 2>&1 || true
            done
        fi
    done
done

# median: the median of the numbers on standard input, then " (lo-hi)"
# with more than one; nothing without any.
median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (!NR) exit
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf("%.4g", m)
        if (NR > 1) printf(" (%.4g-%.4g)", v[1], v[NR]) }'
}

# over_runs FILE FN ARGS...: the median of what FN RUN_FILE ARGS... prints
# for each run's file (FILE without its ".N").
over_runs() {
    local base=$1 fn=$2 f
    shift 2
    for f in "$base".*; do
        [ -f "$f" ] || continue
        "$fn" "$f" "$@"
    done | median
}

# perftest_value RUN_FILE TOOL SIZE FIELD: a number from a client line of
# guest/init-verbs.sh ("ok client: ib_write_bw 65536: 65536 B 0.58 Gb/s").
perftest_value() {
    sed -n "s/^client: ok client: $2 $3: $3 B //p" "$1" |
        awk -v f="$4" '{ print $f }'
}

# value FILE TOOL SIZE FIELD: perftest_value's median over the runs.
value() {
    over_runs "$1" perftest_value "${@:2}"
}

# ratio A B: A / B of the medians, or "-" without both.
ratio() {
    awk -v a="${1%% *}" -v b="${2%% *}" 'BEGIN {
        if (a == "" || b == "" || a + 0 == 0 || b + 0 == 0) { print "-"; exit }
        printf("%.2f", a / b) }'
}

# table_head TITLE: a table's title and header.
table_head() {
    echo
    echo "$1"
    echo
    if [ "$stock" = 1 ]; then
        echo "| test | size | ernic | ernic, stock QEMU | rxe | ratio | ratio, stock |"
        echo "|---|---|---|---|---|---|---|"
    else
        echo "| test | size | ernic | rxe | ratio |"
        echo "|---|---|---|---|---|"
    fi
}

# row TOOL SIZE: perftest's numbers, ernic next to rxe.
row() {
    local e r k

    e=$(value "$out/verbs-ernic" "$1" "$2" 1)
    r=$(value "$out/verbs-rxe" "$1" "$2" 1)
    if [ "$stock" = 1 ]; then
        k=$(value "$out/verbs-ernic-stock" "$1" "$2" 1)
        echo "| $1 | $2 | ${e:--} | ${k:--} | ${r:--} | $(ratio "$e" "$r") | $(ratio "$k" "$r") |"
        return
    fi
    echo "| $1 | $2 | ${e:--} | ${r:--} | $(ratio "$e" "$r") |"
}

# table TITLE "TOOLS" "SIZES": a row for each tool at each size.
table() {
    local t s
    table_head "$1"
    for t in $2; do
        for s in $3; do
            row "$t" "$s"
        done
    done
}

if [ "$steps" = demo ]; then
    table "perftest between two TCG guests, the same commands over ernic and over rxe: ib_write_bw, Gb/s" \
        ib_write_bw "4096 65536 1048576"
    table "ib_write_lat, typical µs (lower is better)" ib_write_lat 2
    exit 0
fi
table "Bandwidth, Gb/s (perftest -n 200, one QP; ratio = ernic / rxe)" \
    "ib_write_bw ib_read_bw ib_send_bw" "64 1024 4096 65536 1048576"
table "Latency, typical µs (perftest -n 400; ratio = ernic / rxe, lower is better)" \
    "ib_write_lat ib_send_lat ib_read_lat" "2 64 1024 4096 65536"
table_head "UD and SRQ (ERNIC-X on ernic): perftest -c UD at the IB MTU (Gb/s) and 2 B (typical µs); ib_send_bw --use-srq (Gb/s)"
row ud:ib_send_bw 1024
row ud:ib_send_lat 2
row srq:ib_send_bw 65536
[ "$ulp" = 1 ] || exit 0

# run_mibs RUN_FILE WHAT: MiB/s of the client's "wrote"/"read ... back" line.
run_mibs() {
    sed -n "s/.*ok client: $2 \([0-9]*\) MiB.*(\([0-9]*\) ms).*/\1 \2/p" "$1" |
        head -n 1 | awk '$2 > 0 { printf("%.1f\n", $1 * 1000 / $2) }'
}

# mibs FILE WHAT: run_mibs's median over the runs.
mibs() {
    over_runs "$1" run_mibs "$2"
}

echo
echo "Kernel consumers, MiB/s (64 MiB, O_DIRECT, 1 MiB I/Os; ratio = ernic / rxe)"
echo
if [ "$stock" = 1 ]; then
    echo "| consumer | direction | ernic | ernic, stock QEMU | rxe | ratio | ratio, stock |"
    echo "|---|---|---|---|---|---|---|"
else
    echo "| consumer | direction | ernic | rxe | ratio |"
    echo "|---|---|---|---|---|"
fi
for u in nvmeof srp; do
    for w in "wrote:write" "read:read"; do
        e=$(mibs "$out/$u-ernic" "${w%%:*}")
        r=$(mibs "$out/$u-rxe" "${w%%:*}")
        if [ "$stock" = 1 ]; then
            k=$(mibs "$out/$u-ernic-stock" "${w%%:*}")
            echo "| $u | ${w#*:} | ${e:--} | ${k:--} | ${r:--} | $(ratio "$e" "$r") | $(ratio "$k" "$r") |"
        else
            echo "| $u | ${w#*:} | ${e:--} | ${r:--} | $(ratio "$e" "$r") |"
        fi
    done
done
