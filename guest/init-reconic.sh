#!/bin/sh
# /init of the RecoNIC guest test (busybox, docs/boards.md): no kernel RDMA
# driver. reconic_mm.ko gives /dev/reconic-mm and bus mastering; the
# program maps resource2 of the layout=reconic ernic from sysfs and drives
# it from user space, with hugepage buffers and a TCP side channel over a
# virtio-net NIC. Kernel parameters (init's environment): rn_role
# (server|client), rn_ip (side channel), rn_peer, rn_ernic_ip, and
# optionally rn_reps and rn_budget (reconic-rdma's -r and -b).
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

result=PASS
fail() {
    echo "guest: FAIL $*"
    result=FAIL
}

insmod /reconic_mm.ko || fail "insmod reconic_mm.ko"
modprobe virtio_pci || fail "modprobe virtio_pci"
modprobe virtio_net || fail "modprobe virtio_net"
echo 8 >/proc/sys/vm/nr_hugepages
read -r nhuge </proc/sys/vm/nr_hugepages
echo "guest: hugepages: $nhuge of 2 MiB"

bdf=
for d in /sys/bus/pci/devices/*; do
    read -r ven <"$d/vendor"
    read -r dev <"$d/device"
    [ "$ven:$dev" = "0x10ee:0x903f" ] && bdf=${d##*/}
done
[ -n "$bdf" ] || fail "no 10ee:903f (layout=reconic) function"
nd=
for _ in 1 2 3 4 5 6 7 8 9 10; do
    for d in /sys/bus/virtio/drivers/virtio_net/*/net/*; do
        [ -e "$d" ] && nd=${d##*/}
    done
    [ -n "$nd" ] && break
    sleep 0.2
done
[ -n "$nd" ] || fail "no side-channel NIC"

if [ "$result" = PASS ]; then
    ip link set lo up
    ip link set "$nd" up
    ip addr add "$rn_ip/24" dev "$nd"
    echo "guest: $rn_role: ernic $bdf (ERNIC $rn_ernic_ip), side channel" \
         "$nd $rn_ip -> $rn_peer"
    role=-c
    [ "$rn_role" = server ] && role=-s
    # shellcheck disable=SC2086 # the options are words, or nothing
    /reconic-rdma -p "/sys/bus/pci/devices/$bdf/resource2" \
        -a "$rn_ernic_ip" -i "$rn_peer" "$role" \
        ${rn_reps:+-r $rn_reps} ${rn_budget:+-b $rn_budget} ||
        fail "reconic-rdma exited with $?"
fi

if dmesg | grep -E 'WARNING|BUG|Oops|Call Trace' >/tmp/bad; then
    sed 's/^/guest: dmesg: /' /tmp/bad
    fail "kernel warnings"
fi
dmesg | grep -i reconic | sed 's/^/guest: dmesg: /'
echo "guest: RESULT $result"
poweroff -f
