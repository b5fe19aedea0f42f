#!/usr/bin/env bash
# The style check of the project's C (README, "Style"): hw/, the shared
# register headers, the qtests and the benchmark with QEMU's
# scripts/checkpatch.pl at their paths in the QEMU tree (a qtest is only
# a qtest to checkpatch under tests/qtest); the guest driver, the uverbs
# ABI header and the rdma-core provider with the Linux kernel's
# scripts/checkpatch.pl, taken from Debian's linux-source package.
#
# usage: checkpatch.sh WORKDIR   (WORKDIR/qemu-src from scripts/build.sh;
#                                 WORKDIR/linux-checkpatch is filled here)
# TAP: one point per file; a file passes with no ERROR and no WARNING,
# but for the warnings listed in $allowed below, each with its reason.
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(cd "${1:?usage: checkpatch.sh WORKDIR}" && pwd)
qsrc=$work/qemu-src
kdir=$work/linux-checkpatch

# Accepted messages, as FILE-PATTERN:TEXT (TEXT is found with grep -F in
# checkpatch's line; the Linux one is run with --show-types):
#  - ernic_crc32.c tests __x86_64__: its PCLMULQDQ intrinsics exist on
#    x86 hosts only, and QEMU's host/crypto/clmul.h has no 128-bit fold
#    to use instead; other hosts take zlib.
#  - ernic_qemu.h tests __has_include: a header that QEMU master moves,
#    in a release not yet known, is found where it is.
#  - guest-driver/ernic_compat.h is the one place where the driver
#    tests the kernel's version, as out-of-tree drivers must (the kernel's
#    own drivers need not), in the kernel's usual form
#    LINUX_VERSION_CODE >= KERNEL_VERSION(...).
#  - The register headers are tables, one register per line, which
#    scripts/gen-regdoc.py parses into docs/registers.md and
#    docs/extension.md: their rows are wider than 80 columns (never 90:
#    that is an ERROR), and the X-macro that turns a row into an enum
#    entry ends with the entry's comma, which checkpatch takes for a
#    complex value.
#  - rdma-core's verbs return positive errno values (ibv_post_send(3),
#    ibv_poll_cq(3)), and its providers reach memory the device writes,
#    and the doorbell page, through volatile pointers (as mlx5's doorbell
#    record); ernic_ex.c's ERNIC_CQ_READER makes the ten
#    ibv_wc_read_*() functions, one line each.
allowed=(
    "hw/rdma/ernic_crc32.c:architecture specific defines should be avoided"
    "hw/rdma/ernic_qemu.h:architecture specific defines should be avoided"
    "guest-driver/ernic_compat.h:LINUX_VERSION_CODE"
    "guest-driver/ernic_compat.h:CONSTANT_COMPARISON"
    "include/hw/rdma/ernic_*regs.h:line over 80 characters"
    "include/hw/rdma/ernic_*regs.h:Macros with complex values"
    "rdma-core/providers/ernic/*:USE_NEGATIVE_ERRNO"
    "rdma-core/providers/ernic/*:VOLATILE"
    "rdma-core/providers/ernic/ernic_ex.c:COMPLEX_MACRO"
)

# The Linux checkpatch.pl and the two files it reads, from the newest
# linux-source-X.Y package (Debian's; fetched once).
fetch_linux_checkpatch() {
    local pkg deb
    [ -x "$kdir/scripts/checkpatch.pl" ] && return
    pkg=$(apt-cache pkgnames linux-source- 2>/dev/null |
          grep -E '^linux-source-[0-9]+\.[0-9]+$' | sort -V | tail -1)
    [ -n "$pkg" ] || die "no linux-source package in the apt index"
    mkdir -p "$kdir/dl"
    (cd "$kdir/dl" && apt-get download -q -o APT::Sandbox::User=root \
        "$pkg" >/dev/null 2>&1) || die "apt-get download $pkg failed"
    deb=$(ls "$kdir"/dl/"$pkg"_*.deb | tail -1)
    log "Linux checkpatch.pl from $(basename "$deb")"
    dpkg-deb --fsys-tarfile "$deb" |
        tar -xO "./usr/src/$pkg.tar.xz" |
        tar -xJ -C "$kdir" --strip-components=1 \
            "$pkg/scripts/checkpatch.pl" "$pkg/scripts/spelling.txt" \
            "$pkg/scripts/const_structs.checkpatch"
    rm -rf "$kdir/dl"
}

n=0
fail=0
# check NAME TOOL FILE [OPTIONS...]: one TAP point for FILE.
check() {
    local name=$1 tool=$2 file=$3 out bad a
    shift 3
    n=$((n + 1))
    out=$("$tool" --no-tree "$@" -f "$file" 2>&1 || true)
    bad=$(printf '%s\n' "$out" | grep -E '^(ERROR|WARNING)' || true)
    for a in "${allowed[@]}"; do
        # shellcheck disable=SC2053 # the pattern is a glob
        [[ $name == ${a%%:*} ]] || continue
        bad=$(printf '%s\n' "$bad" | grep -vF "${a#*:}" || true)
    done
    if [ -z "$bad" ]; then
        echo "ok $n - $name"
    else
        echo "not ok $n - $name"
        printf '%s\n' "$out" | sed 's/^/# /'
        fail=1
    fi
}

fetch_linux_checkpatch
cd "$ERNIC_ROOT"
qemu_files=(hw/rdma/*.[ch] include/hw/rdma/*.h qtest/*.[ch]
            qtest/libqos/ernic.[ch] bench/*.c)
linux_files=(include/uapi/rdma/*.h guest-driver/*.[ch]
             rdma-core/providers/ernic/*.[ch])

echo "1..$((${#qemu_files[@]} + ${#linux_files[@]}))"
for f in "${qemu_files[@]}"; do
    # The path QEMU's tree gives the file (scripts/overlay-qemu.sh).
    case $f in
    qtest/*|bench/*) q=tests/qtest/${f#*/} ;;
    *) q=$f ;;
    esac
    pushd "$qsrc" >/dev/null
    check "$f" scripts/checkpatch.pl "$q"
    popd >/dev/null
done
for f in "${linux_files[@]}"; do
    check "$f" "$kdir/scripts/checkpatch.pl" "$f" --show-types
done
exit "$fail"
