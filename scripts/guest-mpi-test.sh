#!/usr/bin/env bash
# OpenMPI (Debian's openmpi-bin 4.1) across N guests on one L2 segment,
# over UCX (pml ucx; UCX's rc_verbs and ud_verbs, no TCP) on ernic, or on
# Linux rxe over virtio-net. The segment is a Linux bridge with one tap
# per guest inside a network namespace of the test's own (unshare -n):
# it switches as a switch does, and nothing reaches the host's network.
# The first guest runs mpirun with one rank per guest of
# guest/mpi-check.c: a ping-pong of rank 0 with each rank at 8 B, 64 KiB
# and 1 MiB and an allreduce of 2 MiB, every word checked
# (guest/init-mpi.sh). mpi-check is built here against Debian's
# libopenmpi-dev, unpacked, not installed.
# usage: guest-mpi-test.sh [--check] WORKDIR [N [DEVS]]
#   N: guests, 2 (default) to 8; DEVS: ernic (default) or rxe, or a
#   comma list of them, guest by guest, the last for the rest (rxe,ernic:
#   the head on rxe, the other guests on ernic)
# Without a network namespace (unshare -n needs CAP_SYS_ADMIN) or
# /dev/net/tun the test is skipped, with the reason.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/guest-lib.sh"

# dev_of K: guest K's device, of $devs.
dev_of() {
    local d
    d=$(echo "$devs" | cut -d, -f"$1")
    [ -n "$d" ] || d=${devs##*,}
    echo "$d"
}

# --run WORKDIR TMP N DEVS VMLINUX INITRD: inside the namespace, the
# bridge, the taps and the guests; each console in TMP/gK.
run_guests() {
    local tmp=$1 nguests=$2 vmlinux=$4 initrd=$5 i hosts='' pids=() rxe=0
    devs=$3
    guest_mem=640
    for i in $(seq 1 "$nguests"); do
        hosts="$hosts${hosts:+,}10.1.0.$i"
        [ "$(dev_of "$i")" = rxe ] && rxe=1
    done
    netns_bridge br0 $(seq -f 'tap%g' 1 "$nguests")
    for i in $(seq 1 "$nguests"); do
        local role=client nic dev
        dev=$(dev_of "$i")
        [ "$i" = 1 ] && role=server
        nic="ernic,netdev=n0,mac=52:54:00:e3:33:0$i"
        [ "$dev" = rxe ] &&
            nic="virtio-net-pci,netdev=n0,mac=52:54:00:e3:33:0$i,romfile="
        guest_cmd "$vmlinux" "$initrd" \
            "ulp_role=$role ulp_dev=$dev ulp_ip=10.1.0.$i ulp_peer=10.1.0.1 \
mpi_hosts=$hosts mpi_rxe=$rxe" \
            -netdev "tap,id=n0,ifname=tap$i,script=no,downscript=no" \
            -device "$nic"
        log "g$i: ${cmd[*]}"
        timeout 900 "${cmd[@]}" </dev/null >"$tmp/g$i" 2>&1 &
        pids+=($!)
    done
    for i in "${pids[@]}"; do
        wait "$i" || true
    done
}

if [ "${1:-}" = --run ]; then
    shift
    guest_args "$1"
    shift
    run_guests "$@"
    exit 0
fi

guest_args "$1" "${2:-}"
[ "$check" = 1 ] && shift
shift
nguests=${1:-2}
devs=${2:-ernic}
case $nguests in
[2-8]) ;;
*) die "N: 2 to 8 guests" ;;
esac
for d in $(echo "$devs" | tr ',' ' '); do
    case $d in
    ernic|rxe) ;;
    *) die "device $d: ernic or rxe" ;;
    esac
done

# mpi-check, against the headers and libmpi.so of libopenmpi-dev
build_mpi_check() {
    local debs=$work/guest/debs dev=$work/guest/mpi-dev lib
    mkdir -p "$debs"
    for p in libopenmpi-dev libopenmpi3; do
        if ! ls "$debs/${p}"_*.deb >/dev/null 2>&1; then
            log "fetching $p (apt-get download)"
            (cd "$debs" && apt-get download -q -o APT::Sandbox::User=root \
                "$p" >/dev/null)
        fi
    done
    lib=$dev/usr/lib/x86_64-linux-gnu
    if [ ! -f "$lib/openmpi/include/mpi.h" ]; then
        rm -rf "$dev"
        for p in libopenmpi-dev libopenmpi3; do
            dpkg-deb -x "$(ls "$debs/${p}"_*.deb | head -n 1)" "$dev"
        done
    fi
    if [ ! -x "$work/guest/mpi-check" ] ||
       [ "$ERNIC_ROOT/guest/mpi-check.c" -nt "$work/guest/mpi-check" ]; then
        log "building mpi-check"
        # libmpi's own libraries are the guest's: not needed to link
        gcc -O2 -Wall -Wextra -Werror -I"$lib/openmpi/include" \
            -o "$work/guest/mpi-check" "$ERNIC_ROOT/guest/mpi-check.c" \
            -L"$lib/openmpi/lib" -lmpi -Wl,--allow-shlib-undefined
    fi
}

rdma_root=$("$ERNIC_ROOT/scripts/build-rdma-core.sh" "$work")
mapfile -t kos < <("$ERNIC_ROOT/scripts/build-guest-driver.sh" "$work")
build_mpi_check
mapfile -t image < <("$ERNIC_ROOT/scripts/guest-image.sh" "$work" \
    "$ERNIC_ROOT/guest/init-mpi.sh" "${kos[0]}" \
    "$ERNIC_ROOT/guest/ulp-lib.sh" "$work/guest/mpi-check" \
    kdep:rdma_cm kdep:ib_uverbs kdep:virtio_pci kdep:virtio_net \
    kdep:rdma_rxe kdep:crc32_generic "tree:$rdma_root" \
    deb:iproute2 deb:libc6 deb:libmnl0 deb:libbsd0 deb:libcap2 deb:libmd0 \
    deb:libnl-3-200 deb:libnl-route-3-200 deb:libudev1 deb:zlib1g \
    deb:libgcc-s1 deb:libstdc++6 deb:libnuma1 deb:libucx0 \
    deb:openmpi-bin deb:openmpi-common deb:libopenmpi3 deb:libhwloc15 \
    deb:libpmix2 deb:libevent-core-2.1-7 deb:libevent-pthreads-2.1-7 \
    deb:libmunge2 deb:libfabric1 deb:libatomic1 deb:libpsm-infinipath1 \
    deb:libpsm2-2 deb:libuuid1)

what="OpenMPI over UCX: $nguests guests on $devs, one bridge"
tmp=$work/guest/mpi-$nguests-${devs//,/-}
mkdir -p "$tmp"
rm -f "$tmp"/g*
if ! unshare -n true 2>/dev/null || [ ! -c /dev/net/tun ]; then
    [ "$check" = 1 ] || die "no network namespace or /dev/net/tun here"
    echo "1..0 # SKIP no network namespace (unshare -n) or /dev/net/tun"
    exit 0
fi
start=$(date +%s%N)
unshare -n "$0" --run "$work" "$tmp" "$nguests" "$devs" "${image[@]}"
ms=$((($(date +%s%N) - start) / 1000000))

out=
transcript=
for i in $(seq 1 "$nguests"); do
    out+=$(sed "s/^/g$i| /" "$tmp/g$i")$'\n'
    transcript+=$(grep -a '^guest:' "$tmp/g$i" | tr -d '\r' |
                  sed "s/^guest: /g$i: /" || true)$'\n'
done
if [ "$check" != 1 ]; then
    printf '%s\n' "$transcript"
    log "mpi: $what: ${ms} ms (TCG)"
    [ "$(printf '%s\n' "$transcript" | grep -c ': RESULT PASS$')" = \
      "$nguests" ]
    exit
fi

echo "1..$((nguests * 2 + 4))"
for i in $(seq 1 "$nguests"); do
    tap "g$i: $(dev_of "$i") up on 10.1.0.$i" \
        "^g$i: $(dev_of "$i") on .* 10.1.0.$i, RDMA device"
done
tap "every guest answers mpirun's remote shell" \
    "^g1: head: $nguests guests answer"
tap "ping-pong of rank 0 with each other rank at 8 B, 64 KiB, 1 MiB, every word checked" \
    '^g1: mpi-check: pingpong 0<->[0-9]* .* data checked$' \
    $((3 * (nguests - 1)))
tap "allreduce of $nguests ranks, 2 MiB of int64 five times, every sum checked" \
    "^g1: mpi-check: allreduce $nguests ranks, .* every sum checked$"
tap "mpi-check: RESULT PASS" '^g1: mpi-check: RESULT PASS$'
for i in $(seq 1 "$nguests"); do
    tap "g$i: clean (no kernel warning), every check passed" \
        "^g$i: RESULT PASS$"
done
tap_end
