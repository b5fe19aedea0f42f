#!/bin/sh
# /init of the NVMe over Fabrics test (busybox): unmodified in-kernel
# NVMe/RDMA between two guests (ulp-lib.sh has the command line).
#   server: a brd ramdisk of N MiB exported by nvmet-rdma on port 4420
#           (configfs); waits until the client says it is done
#   client: nvme-rdma connects (options written to /dev/nvme-fabrics),
#           writes N MiB of random data with O_DIRECT, drops caches,
#           reads it back, compares SHA-256, disconnects, reconnects and
#           reads again
. /ulp-lib.sh
nqn=nqn.2026-11.org.qemu:ernic-test

target() {
    modprobe nvmet-rdma use_srq="$srq" || fail "modprobe nvmet-rdma"
    modprobe brd rd_nr=1 rd_size=$((mib * 1024)) || fail "brd"
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
    say "server: $mib MiB ramdisk exported as $nqn on $myip:4420"
    wait_client
    dmesg | grep 'nvmet' | sed 's/^\[[^]]*\] /guest: server: /' | head -n 20
    rm -f "ports/1/subsystems/$nqn"
    rmdir ports/1
    echo 0 >"subsystems/$nqn/namespaces/1/enable"
    rmdir "subsystems/$nqn/namespaces/1"
    rmdir "subsystems/$nqn"
    cd /
    unload nvmet-rdma nvmet brd
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
    say "client: connected ($1): $(cat /sys/class/nvme/nvme0/transport) \
$(cat /sys/class/nvme/nvme0/address)"
}

disconnect() {
    echo 1 >/sys/class/nvme/nvme0/delete_controller ||
        fail "disconnect"
}

host() {
    load nvme-rdma
    wait_peer || return
    sleep 5         # the target sets up its port after its link
    make_data
    connect first || return
    write_data /dev/nvme0n1
    echo 3 >/proc/sys/vm/drop_caches
    read_back /dev/nvme0n1 "first connection"
    disconnect
    connect "reconnected" || return
    read_back /dev/nvme0n1 "after reconnect"
    disconnect
    unload nvme-rdma nvme-fabrics
}

run_roles target host
