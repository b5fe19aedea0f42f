#!/bin/sh
# /init of the SRP test (busybox): unmodified in-kernel SCSI RDMA Protocol
# between two guests (ulp-lib.sh has the command line), logging in through
# the RDMA/CM as RoCE requires.
#   server: LIO (target_core_mod) with a ramdisk backstore (rd_mcp) of N MiB
#           as LUN 0 of ib_srpt, listening for RDMA/CM on port 5555; the
#           ACL names the client's initiator port ID
#   client: ib_srp logs in (add_target), writes N MiB of random data with
#           O_DIRECT to the SCSI disk, reads it back, compares SHA-256,
#           logs out, logs in again and reads again
. /ulp-lib.sh
# The target port identifier, the same on both sides: ib_srpt rejects a
# login whose id_ext and ioc_guid are not its srpt_service_guid.
guid=0x00525400e3323221
cm_port=5555
tgt=/sys/kernel/config/target

# srpt names each port by its GID, "0x" and 32 hex digits. A login over
# the RDMA/CM finds its ACL by the initiator port ID in the same form only
# in a TPG of the GID-named port (srpt_cm_req_recv); the initiator port ID
# is 8 zero bytes (initiator_ext) and the client's GUID, the EUI-64 of its
# MAC address as in the RoCE default GID (universal/local bit flipped,
# ff:fe in the middle).
srpt_port_name() {
    echo "0x$(cat /sys/class/infiniband/*/ports/1/gids/0 | tr -d :)"
}

mac_port_id() {
    IFS=: read -r m0 m1 m2 m3 m4 m5 <<EOM
$1
EOM
    printf '0x0000000000000000%02x%s%sfffe%s%s%s\n' $((0x$m0 ^ 2)) "$m1" \
        "$m2" "$m3" "$m4" "$m5"
}

target() {
    load target_core_mod
    modprobe ib_srpt srpt_service_guid=$guid srp_max_req_size=8260 ||
        fail "modprobe ib_srpt"
    mount -t configfs none /sys/kernel/config
    mkdir -p "$tgt/core/rd_mcp_0/vdev0" || { fail "no LIO"; return; }
    echo "rd_pages=$((mib * 256))" >"$tgt/core/rd_mcp_0/vdev0/control"
    echo 1 >"$tgt/core/rd_mcp_0/vdev0/enable" || fail "ramdisk enable"
    mkdir "$tgt/srpt" || { fail "no srpt fabric"; return; }
    echo $cm_port >"$tgt/srpt/discovery_auth/rdma_cm_port" ||
        fail "srpt rdma_cm_port"
    port=$(srpt_port_name)
    tpg=$tgt/srpt/$port/$port
    mkdir -p "$tpg/lun/lun_0" || { fail "srpt port $port"; return; }
    ln -s "$tgt/core/rd_mcp_0/vdev0" "$tpg/lun/lun_0/vdev0" ||
        fail "LUN 0"
    acl=$tpg/acls/$(mac_port_id "$peer_mac")
    mkdir -p "$acl/lun_0"
    ln -s "$tpg/lun/lun_0" "$acl/lun_0/lun_0" || fail "ACL"
    # ib_srpt's SRQ is the port's attribute, not a module parameter.
    echo "$srq" >"$tpg/attrib/use_srq" || fail "srpt use_srq"
    echo 1 >"$tpg/enable" || fail "srpt enable"
    say "server: $mib MiB ramdisk as LUN 0 of srpt port $port, \
RDMA/CM $myip:$cm_port, ACL ${acl##*/}"
    wait_client
    dmesg | grep -i 'srpt' | sed 's/^\[[^]]*\] /guest: server: /' |
        head -n 20
    echo 0 >"$tpg/enable"
    rm "$acl/lun_0/lun_0"
    rmdir "$acl/lun_0" "$acl"
    rm "$tpg/lun/lun_0/vdev0"
    rmdir "$tpg/lun/lun_0" "$tpg" "$tgt/srpt/$port" "$tgt/srpt"
    rmdir "$tgt/core/rd_mcp_0/vdev0" "$tgt/core/rd_mcp_0"
    umount /sys/kernel/config
    unload ib_srpt target_core_mod
}

login() {
    for p in /sys/class/infiniband_srp/srp-*-1/add_target; do
        echo "id_ext=$guid,ioc_guid=$guid,dest=$peer:$cm_port" >"$p" ||
            { fail "SRP login to $peer ($1)"
              dmesg | grep -i 'srp\|rdma\|ernic' | tail -n 15 |
                  sed 's/^/guest: dmesg: /'
              return 1; }
    done
    i=0
    until [ -b /dev/sda ] || [ $i -ge 30 ]; do
        sleep 1
        i=$((i + 1))
    done
    [ -b /dev/sda ] || { fail "no /dev/sda ($1)"; return 1; }
    say "client: connected ($1): $(cat /sys/class/scsi_host/host*/dgid) \
$(cat /sys/block/sda/size) sectors"
}

logout() {
    for p in /sys/class/srp_remote_ports/*/delete; do
        echo 1 >"$p" || fail "SRP logout"
    done
    # ib_srp removes the target in a work item after the disk has gone; a
    # login before it has finished is refused as "Already connected".
    i=0
    while { [ -b /dev/sda ] || [ -n "$(ls /sys/class/srp_remote_ports)" ] ||
            [ -n "$(ls /sys/class/scsi_host)" ]; } && [ $i -lt 60 ]; do
        sleep 0.5
        i=$((i + 1))
    done
}

host() {
    load ib_srp sd_mod
    wait_peer || return
    sleep 5         # the target sets up its port after its link
    make_data
    login first || return
    write_data /dev/sda
    echo 3 >/proc/sys/vm/drop_caches
    read_back /dev/sda "first login"
    logout
    login "logged in again" || return
    read_back /dev/sda "after a new login"
    logout
    unload ib_srp sd_mod
}

# Linux 6.1's ib_srpt with an SRQ puts, when it releases a channel, a
# receive buffer cache it never took (WARN_ON in srpt_cache_put), on
# rxe as on ernic: a bug of Linux's, not the device's (docs/driver.md).
[ "$srq" = 1 ] && known_warning="ib_srpt.c:158 srpt_cache_put"
run_roles target host
