#!/bin/sh
# /init of the NVMe over Fabrics test (busybox): unmodified in-kernel
# NVMe/RDMA between two guests. The kernel command line says which side
# this guest is and which RDMA device it uses:
#   nvme_role=target|host  nvme_dev=ernic|rxe  nvme_ip=  nvme_peer=
#   nvme_mib=N             (the namespace and the data, MiB)
#   target: a brd ramdisk of N MiB exported by nvmet-rdma on port 4420
#           (configfs); waits until the host says it is done
#   host:   nvme-rdma connects (options written to /dev/nvme-fabrics),
#           writes N MiB of random data with O_DIRECT, drops caches,
#           reads it back, compares SHA-256, disconnects, reconnects and
#           reads again
# then both unload what they loaded, check the kernel log, and print
# "guest: RESULT PASS|FAIL".
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp

mib=64
for a in $(cat /proc/cmdline); do
    case $a in
    nvme_role=*) role=${a#*=} ;;
    nvme_dev=*) rdev=${a#*=} ;;
    nvme_ip=*) myip=${a#*=} ;;
    nvme_peer=*) peer=${a#*=} ;;
    nvme_mib=*) mib=${a#*=} ;;
    esac
done
nqn=nqn.2026-11.org.qemu:ernic-test
result=PASS
fail() {
    echo "guest: FAIL $*"
    result=FAIL
}
say() {
    echo "guest: $*"
}
load() {
    for m in "$@"; do
        insmod "/$m.ko" || fail "insmod $m.ko"
    done
}
now_ms() {
    read -r up _ </proc/uptime
    echo "${up%.*}${up#*.}0"
}

# The RDMA device: ernic (this project's driver), or rxe over virtio-net.
load ib_core ib_cm iw_cm configfs rdma_cm
if [ "$rdev" = ernic ]; then
    # No rq_buf_size: with ERNIC-X receive WQEs the device places each
    # SEND into the receive WR's own buffer, whatever its size.
    insmod /ernic.ko || fail "insmod ernic.ko"
else
    load virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev \
        virtio_pci failover net_failover virtio_net ib_uverbs udp_tunnel \
        ip6_udp_tunnel crc32_generic rdma_rxe
fi
nd=
for d in /sys/bus/pci/drivers/ernic/*/net/* \
         /sys/bus/virtio/drivers/virtio_net/*/net/*; do
    [ -e "$d" ] && nd=${d##*/}
done
[ -n "$nd" ] || fail "no net_device for $rdev"
ip link set lo up
ip link set "$nd" up
ip addr add "$myip/24" dev "$nd"
if [ "$rdev" = rxe ] && ! rdma link add rxe0 type rxe netdev "$nd"; then
    fail "rdma link add rxe0"
    dmesg | tail -n 20 | sed 's/^/guest: dmesg: /'
fi
say "$rdev on $nd $myip, RDMA device $(ls /sys/class/infiniband)"
load crc64 crc64_rocksoft_generic crc64-rocksoft crct10dif_common \
    crct10dif_generic crc-t10dif t10-pi

target() {
    load nvmet nvmet-rdma
    insmod /brd.ko rd_nr=1 rd_size=$((mib * 1024)) || fail "brd"
    mount -t configfs none /sys/kernel/config
    cd /sys/kernel/config/nvmet || { fail "no nvmet configfs"; return; }
    mkdir "subsystems/$nqn"
    echo 1 >"subsystems/$nqn/attr_allow_any_host"
    mkdir "subsystems/$nqn/namespaces/1"
    echo /dev/ram0 >"subsystems/$nqn/namespaces/1/device_path"
    echo 1 >"subsystems/$nqn/namespaces/1/enable" || fail "namespace enable"
    mkdir ports/1
    echo rdma >ports/1/addr_trtype
    echo ipv4 >ports/1/addr_adrfam
    echo "$myip" >ports/1/addr_traddr
    echo 4420 >ports/1/addr_trsvcid
    ln -s "/sys/kernel/config/nvmet/subsystems/$nqn" \
        "ports/1/subsystems/$nqn" || fail "port enable"
    say "target: $mib MiB ramdisk exported as $nqn on $myip:4420"
    # The host says when it is done (TCP port 4421, busybox nc).
    timeout 900 nc -l -p 4421 </dev/null >/tmp/done ||
        fail "target: no word from the host"
    say "target: host says: $(cat /tmp/done)"
    dmesg | grep 'nvmet' | sed 's/^\[[^]]*\] /guest: target: /' | head -n 20
    rm -f "ports/1/subsystems/$nqn"
    rmdir ports/1
    echo 0 >"subsystems/$nqn/namespaces/1/enable"
    rmdir "subsystems/$nqn/namespaces/1"
    rmdir "subsystems/$nqn"
    cd /
    rmmod nvmet-rdma nvmet brd || fail "rmmod nvmet-rdma nvmet brd"
    umount /sys/kernel/config
}

connect() {
    echo "transport=rdma,traddr=$peer,trsvcid=4420,nqn=$nqn" \
        >/dev/nvme-fabrics || { fail "connect to $peer ($1)"; return 1; }
    i=0
    until [ -b /dev/nvme0n1 ] || [ $i -ge 30 ]; do
        sleep 1
        i=$((i + 1))
    done
    [ -b /dev/nvme0n1 ] || { fail "no /dev/nvme0n1 ($1)"; return 1; }
    say "host: connected ($1): $(cat /sys/class/nvme/nvme0/transport) \
$(cat /sys/class/nvme/nvme0/address)"
}

disconnect() {
    echo 1 >/sys/class/nvme/nvme0/delete_controller ||
        fail "disconnect"
}

# Read the namespace back with O_DIRECT; compare with the data written.
read_back() {
    t0=$(now_ms)
    dd if=/dev/nvme0n1 of=/tmp/back bs=1M count="$mib" iflag=direct \
        2>/dev/null || fail "read ($1)"
    t1=$(now_ms)
    sum=$(sha256sum </tmp/back)
    rm -f /tmp/back
    if [ "$sum" = "$want" ]; then
        say "ok host: read $mib MiB back ($1): SHA-256 matches \
($((t1 - t0)) ms)"
    else
        fail "host: read $mib MiB back ($1): SHA-256 differs"
    fi
}

host() {
    host_run
    echo "done: $result" | nc "$peer" 4421 || fail "cannot tell the target"
}

host_run() {
    load nvme-core nvme-fabrics nvme-rdma
    i=0
    until ping -c 1 -W 1 "$peer" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -lt 120 ] || { fail "target $peer unreachable"; return; }
    done
    sleep 5         # the target sets up its port after its link
    dd if=/dev/urandom of=/tmp/data bs=1M count="$mib" 2>/dev/null
    want=$(sha256sum </tmp/data)
    connect first || return
    t0=$(now_ms)
    dd if=/tmp/data of=/dev/nvme0n1 bs=1M count="$mib" oflag=direct \
        2>/dev/null || fail "write"
    t1=$(now_ms)
    rm -f /tmp/data
    say "ok host: wrote $mib MiB of random data ($((t1 - t0)) ms)"
    echo 3 >/proc/sys/vm/drop_caches
    read_back "first connection"
    disconnect
    connect "reconnected" || return
    read_back "after reconnect"
    disconnect
    rmmod nvme-rdma nvme-fabrics nvme-core || fail "rmmod nvme-rdma"
}

if [ "$role" = target ]; then
    target
else
    host
fi

rmmod t10-pi crc-t10dif crct10dif_generic crct10dif_common crc64-rocksoft \
    crc64_rocksoft_generic crc64
[ "$rdev" = rxe ] && rdma link delete rxe0
if [ "$rdev" = ernic ]; then
    rmmod ernic || fail "rmmod ernic"
fi
if dmesg | grep -E 'WARNING|BUG|Oops|Call Trace|restrack|leak' >/tmp/bad; then
    sed 's/^/guest: dmesg: /' /tmp/bad | head -n 40
    fail "kernel warnings"
fi
say "RESULT $result"
poweroff -f
