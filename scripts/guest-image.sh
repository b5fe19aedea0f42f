#!/usr/bin/env bash
# Build the guest image from Debian packages: the bookworm kernel (the ABI of
# linux-headers-amd64, so that guest-driver modules load) unpacked to an
# uncompressed vmlinux for a PVH boot, and a busybox initramfs.
# Cached: the kernel is fetched once per ABI; the initramfs is rebuilt when
# its inputs change.
# usage: guest-image.sh WORKDIR INIT_SCRIPT [FILE...]
#   FILEs (e.g. guest-driver/ernic.ko) are placed at / in the initramfs;
#   kmod:PATH is the kernel's module kernel/PATH.ko (e.g.
#   kmod:drivers/infiniband/core/ib_core), also placed at /.
#   kdep:NAME is the kernel's module NAME with every module it needs,
#   placed under /lib/modules with a modules.dep, for busybox modprobe.
#   deb:PACKAGE is a Debian package (apt-get download, cached), unpacked
#   into the initramfs root (e.g. rdma-core's libraries and tools).
#   tree:DIR is a directory copied into the initramfs root (e.g. the
#   rdma-core build's installed tree, scripts/build-rdma-core.sh).
# prints: path of vmlinux, then path of the initramfs
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(mkdir -p "$1/guest" && cd "$1/guest" && pwd)
init=$2
shift 2
extra=("$@")

# Guest tests run in parallel (meson test): one builder at a time.
exec 9>"$work/.lock"
flock 9

abi=$(apt-cache depends linux-headers-amd64 2>/dev/null |
      sed -n 's/.*Depends: linux-headers-\(.*\)-amd64$/\1/p' | head -n 1)
[ -n "$abi" ] || die "cannot tell the kernel ABI of linux-headers-amd64"
kdir=$work/kernel-$abi

if [ ! -f "$kdir/vmlinux" ]; then
    log "fetching linux-image-$abi-amd64 (apt-get download)"
    rm -rf "$kdir"
    mkdir -p "$kdir"
    (cd "$kdir" && apt-get download -q -o APT::Sandbox::User=root \
        "linux-image-$abi-amd64" >/dev/null)
    dpkg-deb -x "$kdir"/linux-image-*.deb "$kdir/root"
    "$ERNIC_PYTHON" "$ERNIC_ROOT/scripts/extract-vmlinux.py" \
        "$kdir/root/boot/vmlinuz-$abi-amd64" "$kdir/vmlinux.tmp"
    mv "$kdir/vmlinux.tmp" "$kdir/vmlinux"
    rm -f "$kdir"/linux-image-*.deb
fi

# modules.dep of the whole kernel, once: kdep: takes a module's line.
moddir=$kdir/root/lib/modules/$abi-amd64
if [ ! -f "$moddir/modules.dep" ]; then
    /bin/busybox depmod -b "$kdir/root" "$abi-amd64"
fi

files=()
debs=()
kmods=()
trees=()
mkdir -p "$work/debs"
for f in "${extra[@]}"; do
    case $f in
    deb:*)
        pkg=${f#deb:}
        deb=$(ls "$work/debs/${pkg}"_*.deb 2>/dev/null | head -n 1 || true)
        if [ -z "$deb" ]; then
            log "fetching $pkg (apt-get download)"
            (cd "$work/debs" && apt-get download -q \
                -o APT::Sandbox::User=root "$pkg" >/dev/null)
            deb=$(ls "$work/debs/${pkg}"_*.deb | head -n 1)
        fi
        debs+=("$deb") ;;
    kdep:*)
        line=$(grep "/${f#kdep:}\.ko:" "$moddir/modules.dep") ||
            die "guest image: no module ${f#kdep:}"
        for m in ${line/:/}; do
            kmods+=("$m")
        done ;;
    tree:*)
        [ -d "${f#tree:}" ] || die "guest image: no directory ${f#tree:}"
        trees+=("${f#tree:}") ;;
    kmod:*)
        files+=("$kdir/root/lib/modules/$abi-amd64/kernel/${f#kmod:}.ko") ;;
    *)
        files+=("$f") ;;
    esac
done
for f in "${files[@]}"; do
    [ -f "$f" ] || die "guest image: no file $f"
done

name=$(basename "$init" .sh)
initrd=$work/$name.cpio
stale=0
for f in "$init" /bin/busybox "${files[@]}" "${debs[@]}" \
         "${kmods[@]/#/$moddir/}"; do
    [ "$f" -nt "$initrd" ] && stale=1
done
for d in "${trees[@]}"; do
    [ -f "$initrd" ] && [ -n "$(find "$d" -newer "$initrd" -print -quit)" ] &&
        stale=1
done
# A changed list of inputs rebuilds it too: a deb or file added to the
# list may be older than the image (a cached deb another image fetched).
inputs=$(printf '%s\n' "$init" "${files[@]}" "${debs[@]}" "${kmods[@]}" \
         "${trees[@]}")
[ "$(cat "$initrd.inputs" 2>/dev/null)" = "$inputs" ] || stale=1
if [ ! -f "$initrd" ] || [ "$stale" = 1 ]; then
    log "building initramfs $name.cpio"
    root=$(mktemp -d)
    mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp}
    cp /bin/busybox "$root/bin/busybox"
    for app in $(/bin/busybox --list); do
        [ -e "$root/bin/$app" ] || ln -s busybox "$root/bin/$app"
    done
    install -m 0755 "$init" "$root/init"
    for f in "${debs[@]}"; do
        dpkg-deb -x "$f" "$root"
    done
    for d in "${trees[@]}"; do
        cp -a "$d/." "$root/"
    done
    rm -rf "$root"/usr/share/{doc,man,lintian}
    for f in "${files[@]}"; do
        cp "$f" "$root/"
    done
    for m in "${kmods[@]}"; do
        mkdir -p "$root/lib/modules/$abi-amd64/${m%/*}"
        cp "$moddir/$m" "$root/lib/modules/$abi-amd64/$m"
    done
    if [ ${#kmods[@]} -gt 0 ]; then
        /bin/busybox depmod -b "$root" "$abi-amd64"
    fi
    (cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$initrd.tmp"
    mv "$initrd.tmp" "$initrd"
    printf '%s\n' "$inputs" >"$initrd.inputs"
    rm -rf "$root"
fi
echo "$kdir/vmlinux"
echo "$initrd"
