#!/usr/bin/env bash
# The QEMU builds of the project (README, "Which QEMU"), as TAP: each
# lists the device's properties under -device ernic,help; the default
# build has the optional patches' netdev polling and spin hint, and the
# stock build has neither, nor any patch of patches/qemu/ in its tree;
# the stock build's QEMU manual has the device's page; the newest QEMU
# built the device and every qtest program.
# usage: qemu-builds-test.sh WORKDIR
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(cd "${1:?usage: qemu-builds-test.sh WORKDIR}" && pwd)
n=0
fail=0

point() {   # point OK NAME
    n=$((n + 1))
    if [ "$1" = 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        fail=1
    fi
}

props="num-qp ext mr-entries layout card-mem card-memdev x-tx-map db-eventfd busy-poll idle-poll netdev mac"
for flavour in accel stock; do
    qemu_flavour "$flavour"
    bld=$work/$QEMU_BLD
    help=$("$bld/qemu-system-x86_64" -M none -device ernic,help 2>&1 || true)
    missing=
    for p in $props; do
        grep -qE "^  $p=" <<<"$help" || missing="$missing $p"
    done
    [ -z "$missing" ] || echo "# $flavour: missing:$missing"
    point "$([ -z "$missing" ]; echo $?)" \
        "$flavour: -device ernic,help lists the device's $(wc -w <<<"$props") properties"
    cfg=$bld/hw/rdma/ernic-config.h
    want='#define'
    [ "$QEMU_PATCHES" = yes ] || want='#undef'
    ok=0
    for d in CONFIG_ERNIC_NET_POLL CONFIG_ERNIC_SPIN_HINT; do
        grep -qE "^$want $d\$" "$cfg" || ok=1
    done
    point "$ok" "$flavour: netdev polling and spin hint $([ "$QEMU_PATCHES" = yes ] && echo found || echo absent) ($cfg)"
done

qemu_flavour stock
src=$work/$QEMU_SRC
ok=0
[ ! -s "$src/.ernic-patches" ] || ok=1
! grep -q 'qemu_net_busy_poll\|qemu_net_uncork' "$src/include/net/net.h" || ok=1
! grep -q 'cpu_spin_hint' "$src/include/hw/core/cpu.h" || ok=1
point "$ok" "stock: the tree has no patch of patches/qemu/ ($(cat "$src/.ernic-unpacked"))"

# QEMU's manual, built by QEMU's sphinx in the stock build, has the
# device's page in its device list, and sphinx had nothing to say of it.
page=$work/qemu-stock/docs/manual/system/devices/ernic.html
ok=0
[ -f "$page" ] && grep -q 'ernic' "$work/qemu-stock/docs/manual/system/device-emulation.html" ||
    ok=1
said=$(grep 'ernic' "$work/qemu-stock/docs-build.log" 2>/dev/null || true)
if [ -n "$said" ]; then
    sed 's/^/# /' <<<"$said"
    ok=1
fi
point "$ok" "stock: QEMU's manual has the device's page (docs/system/devices/ernic.rst), no sphinx warning about it"

# The newest QEMU: the device's objects and every qtest were built.
qemu_flavour next
bld=$work/$QEMU_BLD
missing=
for t in ernic-test ernic-rc-test ernic-fatal-test ernic-boards-test \
         ernic-hardening-test ernic-ext-test ernic-srq-test ernic-ud-test \
         ernic-uc-test ernic-atomic-test ernic-place-test ernic-xrc-test \
         ernic-dbrec-test ernic-immdt-test ernic-migrate-test \
         ernic-fault-test ernic-fuzz ernic-soak ernic-bench; do
    [ -x "$bld/tests/qtest/$t" ] || missing="$missing $t"
done
objs=$(ls "$bld"/lib*.a.p/hw_rdma_ernic*.c.o 2>/dev/null | wc -l)
want=$(ls "$ERNIC_ROOT"/hw/rdma/*.c | wc -l)
[ -z "$missing" ] || echo "# missing:$missing"
point "$([ -z "$missing" ] && [ "$objs" = "$want" ]; echo $?)" \
    "next: QEMU $(cat "$work/$QEMU_SRC/VERSION" 2>/dev/null) built the device ($objs of $want objects) and the 19 qtest programs"

echo "1..$n"
exit "$fail"
