#!/bin/sh
# /init of the two-guest RDMA test (busybox). The kernel command line
# says which side this guest is: ernic_role=server|client.
#   both:   load the RDMA core modules and ernic.ko, bring up the
#           Ethernet-path net_device with ernic_ip
#   server: ernic_test role=server; wait until the client has connected
#           twice (before and after it reloads its modules)
#   client: wait for the server, ernic_test role=client (rdma_cm connect,
#           data, state walk, FATAL and recovery), unload both modules,
#           load them again and run once more
# then both unload, check the kernel log, print "guest: RESULT PASS|FAIL".
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

for a in $(cat /proc/cmdline); do
    case $a in
    ernic_role=*) role=${a#*=} ;;
    ernic_ip=*) myip=${a#*=} ;;
    ernic_peer=*) peer=${a#*=} ;;
    esac
done
result=PASS
fail() {
    echo "guest: FAIL $*"
    result=FAIL
}
say() {
    echo "guest: $*"
}

# The ernic_test and ernic lines logged since the last call.
seen=0
show_log() {
    dmesg >/tmp/dmesg
    n=0
    while read -r line; do
        n=$((n + 1))
        [ "$n" -le "$seen" ] && continue
        case $line in
        *ernic_test:*) say "${line#*ernic_test: }" ;;
        *infiniband\ ernic*|*ernic\ 0000*) say "driver: ${line#*] }" ;;
        esac
    done </tmp/dmesg
    seen=$n
}

load_ernic() {
    insmod /ernic.ko rq_buf_size=1048576 dyndbg=+p || fail "insmod ernic.ko"
    nd=
    for d in /sys/bus/pci/drivers/ernic/*/net/*; do
        [ -e "$d" ] && nd=${d##*/}
    done
    [ -n "$nd" ] || { fail "no net_device under the ernic driver"; return; }
    ip link set "$nd" up
    ip addr add "$myip/24" dev "$nd"
    ibdev=$(ls /sys/class/infiniband 2>/dev/null)
    say "ernic loaded: $nd $myip, RDMA device ${ibdev:-none}"
    # intel_iommu=on (ERNIC_GUEST_IOMMU=1): the device's domain type.
    for t in /sys/bus/pci/drivers/ernic/*/iommu_group/type; do
        [ -e "$t" ] && say "DMA: IOMMU domain $(cat "$t")"
    done
}

for m in ib_core ib_uverbs ib_cm iw_cm configfs rdma_cm; do
    insmod "/$m.ko" || fail "insmod $m.ko"
done
# rdma-core's libraries and tools are in the image for user-space verbs
# (the provider is a later step); check that they load.
if ibv_devinfo --help 2>&1 | grep -q 'print the ca attributes' &&
   rping -h 2>&1 | grep -q 'client side'; then
    say "rdma-core tools run: ibv_devinfo, rping (libibverbs, librdmacm)"
else
    fail "rdma-core tools do not run"
fi

if [ "$role" = server ]; then
    load_ernic
    insmod /ernic_test.ko role=server || fail "insmod ernic_test.ko"
    i=0
    while [ "$(cat /sys/module/ernic_test/parameters/served)" -lt 2 ] &&
          [ $i -lt 180 ]; do
        sleep 1
        show_log
        i=$((i + 1))
    done
    show_log
    served=$(cat /sys/module/ernic_test/parameters/served)
    [ "$served" = 2 ] || fail "server served $served connections, not 2"
    say "server served $served connections"
    rmmod ernic_test || fail "rmmod ernic_test"
    rmmod ernic || fail "rmmod ernic"
    load_ernic
    rmmod ernic || fail "rmmod ernic after reload"
else
    load_ernic
    for round in 1 2; do
        i=0
        until ping -c 1 -W 1 "$peer" >/dev/null 2>&1; do
            i=$((i + 1))
            [ $i -lt 120 ] || { fail "server $peer unreachable"; break; }
        done
        say "round $round"
        insmod /ernic_test.ko role=client server="$peer" ||
            fail "insmod ernic_test.ko (round $round)"
        show_log
        f=$(cat /sys/module/ernic_test/parameters/failures)
        [ "$f" = 0 ] || fail "round $round: $f checks failed"
        rmmod ernic_test || fail "rmmod ernic_test"
        rmmod ernic || fail "rmmod ernic (round $round)"
        [ $round = 2 ] || load_ernic
    done
fi

show_log
for m in rdma_cm iw_cm ib_cm ib_uverbs ib_core; do
    rmmod "$m" || fail "rmmod $m"
done
if dmesg | grep -E 'WARNING|BUG|Oops|Call Trace|restrack|leak' >/tmp/bad; then
    sed 's/^/guest: dmesg: /' /tmp/bad
    fail "kernel warnings"
fi
say "RESULT $result"
poweroff -f
