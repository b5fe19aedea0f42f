# Shared by the /init scripts of the kernel-consumer tests (NVMe-oF, NFS
# over RDMA, SRP), sourced from /ulp-lib.sh: two busybox guests, a server
# (target) and a client (host), each on ernic or on Linux rxe over
# virtio-net. The kernel command line says which side this guest is:
#   ulp_role=server|client  ulp_dev=ernic|rxe  ulp_ip=  ulp_peer=
#   ulp_peer_mac=           (the peer's MAC address)
#   ulp_mib=N               (the size of the data, MiB)
#   ulp_mtu=N               (the net_device's MTU; 1500 unless given)
#   ulp_srq=0|1             (the target receives through SRQs: use_srq)
# Every line meant for the test harness starts with "guest: "; the client
# says "client: connected (...)", "ok client: wrote N MiB" and
# "... SHA-256 matches"; both end with "guest: RESULT PASS|FAIL".
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp

mib=64
srq=0
for a in $(cat /proc/cmdline); do
    case $a in
    ulp_role=*) role=${a#*=} ;;
    ulp_dev=*) rdev=${a#*=} ;;
    ulp_ip=*) myip=${a#*=} ;;
    ulp_peer=*) peer=${a#*=} ;;
    ulp_peer_mac=*) peer_mac=${a#*=} ;;
    ulp_mib=*) mib=${a#*=} ;;
    ulp_mtu=*) mtu=${a#*=} ;;
    ulp_srq=*) srq=${a#*=} ;;
    ulp_ernic_args=*) ernic_args=$(echo "${a#*=}" | tr , ' ') ;;
    esac
done
result=PASS

# A host name that resolves without DNS, the peer's too: libfabric's
# verbs provider looks its own up to find a source address, and glibc
# with no /etc/hosts asks a name server there is none of.
mkdir -p /etc
hostname "g${myip##*.}"
printf '127.0.0.1 localhost\n%s g%s\n%s g%s\n' "$myip" "${myip##*.}" \
    "$peer" "${peer##*.}" >/etc/hosts

fail() {
    echo "guest: FAIL $*"
    result=FAIL
}

say() {
    echo "guest: $*"
}

# modprobe MODULE...: each with what it needs (modules.dep of the image).
load() {
    for m in "$@"; do
        modprobe "$m" || fail "modprobe $m"
    done
}

# unload MODULE...: the consumers only; what they needed stays loaded.
unload() {
    rmmod "$@" || fail "rmmod $*"
}

now_ms() {
    read -r up _ </proc/uptime
    echo "${up%.*}${up#*.}0"
}

# The RDMA device: ernic (this project's driver), or rxe over virtio-net;
# its net_device gets ulp_ip.
rdma_up() {
    load rdma_cm
    if [ "$rdev" = ernic ]; then
        # No rq_buf_size: with ERNIC-X receive WQEs the device places
        # each SEND into the receive WR's own buffer, whatever its size.
        load ib_uverbs  # ernic.ko's user MRs (ib_umem)
        # shellcheck disable=SC2086 # ernic_args: module parameters
        insmod /ernic.ko ${ernic_args:-} || fail "insmod ernic.ko"
    else
        # rxe asks the crypto API for "crc32" (a soft dependency).
        load virtio_pci virtio_net crc32_generic rdma_rxe
    fi
    nd=
    for d in /sys/bus/pci/drivers/ernic/*/net/* \
             /sys/bus/virtio/drivers/virtio_net/*/net/*; do
        [ -e "$d" ] && nd=${d##*/}
    done
    [ -n "$nd" ] || fail "no net_device for $rdev"
    ip link set lo up
    if [ -n "${mtu:-}" ] && ! ip link set "$nd" mtu "$mtu"; then
        fail "MTU $mtu on $nd"
    fi
    ip link set "$nd" up
    ip addr add "$myip/24" dev "$nd"
    if [ "$rdev" = rxe ] && ! rdma link add rxe0 type rxe netdev "$nd"; then
        fail "rdma link add rxe0"
        dmesg | tail -n 20 | sed 's/^/guest: dmesg: /'
    fi
    say "$rdev on $nd $myip, RDMA device $(ls /sys/class/infiniband)"
    # intel_iommu=on (ERNIC_GUEST_IOMMU=1): the device's domain type.
    for t in /sys/bus/pci/drivers/ernic/*/iommu_group/type; do
        [ -e "$t" ] && say "DMA: IOMMU domain $(cat "$t")"
    done
}

rdma_down() {
    [ "$rdev" = rxe ] && rdma link delete rxe0
    if [ "$rdev" = ernic ]; then
        rmmod ernic || fail "rmmod ernic"
    fi
}

wait_peer() {
    i=0
    until ping -c 1 -W 1 "$peer" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -lt 120 ] || { fail "server $peer unreachable"; return 1; }
    done
}

# The client says when it is done (TCP port 4421, busybox nc).
wait_client() {
    timeout 900 nc -l -p 4421 </dev/null >/tmp/done ||
        fail "server: no word from the client"
    say "server: client says: $(cat /tmp/done)"
}

# The server may still be finishing its side (a slow host): try for up
# to 5 minutes.
tell_server() {
    i=0
    until echo "done: $result" | nc "$peer" 4421 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 300 ] || { fail "cannot tell the server"; return; }
        sleep 1
    done
}

# make_data: MIB MiB of random data in /tmp/data, its SHA-256 in $want.
make_data() {
    dd if=/dev/urandom of=/tmp/data bs=1M count="$mib" 2>/dev/null
    want=$(sha256sum </tmp/data)
}

# write_data DEV: /tmp/data to DEV (a block device or a file) with O_DIRECT.
write_data() {
    t0=$(now_ms)
    dd if=/tmp/data of="$1" bs=1M count="$mib" oflag=direct 2>/dev/null ||
        fail "write $1"
    t1=$(now_ms)
    rm -f /tmp/data
    say "ok client: wrote $mib MiB of random data ($((t1 - t0)) ms)"
}

# read_back DEV LABEL: read with O_DIRECT, compare with the data written.
read_back() {
    t0=$(now_ms)
    dd if="$1" of=/tmp/back bs=1M count="$mib" iflag=direct 2>/dev/null ||
        fail "read ($2)"
    t1=$(now_ms)
    sum=$(sha256sum </tmp/back)
    rm -f /tmp/back
    if [ "$sum" = "$want" ]; then
        say "ok client: read $mib MiB back ($2): SHA-256 matches \
($((t1 - t0)) ms)"
    else
        fail "client: read $mib MiB back ($2): SHA-256 differs"
    fi
}

# known_warning: the location of a warning of Linux's own that the test
# has met on rxe as on ernic (e.g. "ib_srpt.c:158 srpt_cache_put"); its
# splats, up to their "end trace" line, are counted and left out.
known_warning=

# The kernel log without the splats of known_warning.
kernel_log() {
    dmesg | awk -v k="$known_warning" '
        k != "" && /WARNING:/ && index($0, k) { skip = 1; n++ }
        !skip { print }
        /---\[ end trace/ { skip = 0 }
        END { if (n) print "known warning, " n " times: " k > "/tmp/known" }'
}

# The end: the kernel log must hold no warning; RESULT; power off.
finish() {
    rdma_down
    rm -f /tmp/known
    if kernel_log | grep -E 'WARNING|BUG|Oops|Call Trace|restrack|leak' \
        >/tmp/bad; then
        sed 's/^/guest: dmesg: /' /tmp/bad | head -n 40
        fail "kernel warnings"
    fi
    [ -f /tmp/known ] && say "$(cat /tmp/known) (docs/driver.md)"
    say "RESULT $result"
    poweroff -f
}

# run_roles SERVER CLIENT: the RDMA device up, this guest's side (the
# client then tells the server it is done), the end.
run_roles() {
    rdma_up
    if [ "$role" = server ]; then
        "$1"
    else
        "$2"
        tell_server
    fi
    finish
}
