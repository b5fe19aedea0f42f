#!/bin/sh
# /init of the NFS over RDMA test (busybox): unmodified in-kernel NFSv4.1
# over RPC/RDMA between two guests (ulp-lib.sh has the command line).
#   server: nfsd (svcrdma) listening on RDMA port 20049 only, exporting a
#           tmpfs as the NFSv4 root. There is no rpc.mountd: the three
#           export caches it would fill on upcall are filled by hand
#           (auth.unix.ip, nfsd.export, nfsd.fh, as nfs-utils' cache.c
#           writes them); NFSv4 only, so neither lockd nor rpcbind.
#   client: mounts it (proto=rdma), writes a file of N MiB of random data
#           with O_DIRECT, reads it back, compares SHA-256, unmounts,
#           mounts again (a new RPC/RDMA connection) and reads again
. /ulp-lib.sh
export_root=/export
domain=ernic-test
forever=2147483647      # cache expiry, seconds since the epoch

# Three cache lines, in the order the kernel looks them up: the client's
# address to a domain, the domain's export of a path, and the file handle
# key of the export (fsid type 1, fsid 0: the NFSv4 pseudo-root).
# Flags: INSECURE_PORT 0x2 | NOSUBTREECHECK 0x400 | FSID 0x2000; read-write,
# no root squash (include/uapi/linux/nfsd/export.h).
fill_caches() {
    echo "nfsd $peer $forever $domain" >/proc/net/rpc/auth.unix.ip/channel &&
    echo "$domain $export_root $forever 0x2402 65534 65534 0" \
        >/proc/net/rpc/nfsd.export/channel &&
    printf '%s 1 \\x00000000 %s %s\n' "$domain" "$forever" "$export_root" \
        >/proc/net/rpc/nfsd.fh/channel
}

server() {
    load nfsd rpcrdma
    mkdir -p "$export_root" /var/lib/nfs/v4recovery
    mount -t tmpfs -o size=$((mib + 16))m tmpfs "$export_root"
    mount -t nfsd nfsd /proc/fs/nfsd || { fail "mount nfsd"; return; }
    echo "-2 -3 +4 +4.1 +4.2" >/proc/fs/nfsd/versions ||
        fail "nfsd versions"
    echo "rdma 20049" >/proc/fs/nfsd/portlist || fail "nfsd rdma listener"
    echo 4 >/proc/fs/nfsd/threads || fail "nfsd threads"
    echo Y >/proc/fs/nfsd/v4_end_grace || fail "nfsd end of grace"
    fill_caches || fail "export caches"
    say "server: nfsd exports $export_root (tmpfs) on $myip, \
ports: $(cat /proc/fs/nfsd/portlist | tr '\n' ' ')"
    wait_client
    echo 0 >/proc/fs/nfsd/threads
    umount /proc/fs/nfsd
    umount "$export_root"
    unload nfsd rpcrdma
}

nfs_mount() {
    mount -t nfs4 -o "vers=4.1,proto=rdma,port=20049,addr=$peer,\
clientaddr=$myip" "$peer:/" /mnt || { fail "mount ($1)"; return 1; }
    say "client: connected ($1): $(grep ' /mnt ' /proc/mounts)"
}

client() {
    load nfsv4 rpcrdma
    mkdir -p /mnt
    wait_peer || return
    sleep 5         # the server starts nfsd after its link
    make_data
    nfs_mount first || return
    write_data /mnt/data
    echo 3 >/proc/sys/vm/drop_caches
    read_back /mnt/data "first mount"
    umount /mnt || fail "umount"
    nfs_mount "mounted again" || return
    read_back /mnt/data "after a new mount"
    umount /mnt || fail "umount"
    unload nfsv4 rpcrdma
}

run_roles server client
