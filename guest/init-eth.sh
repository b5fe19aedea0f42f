#!/bin/sh
# /init of the guest-driver Ethernet test (busybox): load ernic.ko, bring
# up its net_device on the Ethernet path, ping slirp's gateway, unload and
# reload the module, and check the kernel log for warnings.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

result=PASS
fail() {
    echo "guest: FAIL $*"
    result=FAIL
}

up_and_ping() {
    nd=
    for d in /sys/bus/pci/drivers/ernic/*/net/*; do
        [ -e "$d" ] && nd=${d##*/}
    done
    if [ -z "$nd" ]; then
        fail "no net_device under the ernic driver"
        return
    fi
    echo "guest: ernic net_device: $nd"
    ip link set "$nd" up
    ip addr add 10.0.2.15/24 dev "$nd"
    if ping -c 3 -W 3 10.0.2.2 >/tmp/ping 2>&1; then
        echo "guest: ping 10.0.2.2: $(grep -c 'bytes from' /tmp/ping) replies"
    else
        cat /tmp/ping | sed 's/^/guest: /'
        fail "ping 10.0.2.2 over $nd"
    fi
    read -r rxp <"/sys/class/net/$nd/statistics/rx_packets"
    read -r txp <"/sys/class/net/$nd/statistics/tx_packets"
    echo "guest: $nd rx_packets $rxp tx_packets $txp"
}

insmod /ib_core.ko || fail "insmod ib_core.ko"
# ernic.ko needs ib_uverbs (user MRs: ib_umem).
insmod /ib_uverbs.ko || fail "insmod ib_uverbs.ko"
insmod /ernic.ko || fail "insmod ernic.ko"
up_and_ping
rmmod ernic || fail "rmmod ernic"
insmod /ernic.ko || fail "insmod ernic.ko again"
up_and_ping
rmmod ernic || fail "rmmod ernic again"

if dmesg | grep -E 'WARNING|BUG|Oops|Call Trace' >/tmp/bad; then
    sed 's/^/guest: dmesg: /' /tmp/bad
    fail "kernel warnings"
fi
dmesg | grep -i ernic | sed 's/^/guest: dmesg: /'
echo "guest: RESULT $result"
poweroff -f
