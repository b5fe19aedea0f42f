#!/usr/bin/env bash
# Build an overlaid QEMU and the ernic qtests. Ninja rebuilds only what an
# edit touched, and nothing when nothing changed.
# usage: build-qemu.sh WORKDIR STAMP [FLAVOUR]   (scripts/prepare-qemu.sh)
# The 'next' flavour (the newest QEMU) builds the device's objects and
# the qtests only, unless ERNIC_QEMU_NEXT_FULL=1: QEMU itself too, to run
# them (scripts/run-qtest.sh build/qemu-next TEST).
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(cd "$1" && pwd)
stamp=$2
qemu_flavour "${3:-accel}"
bld=$work/$QEMU_BLD

"$ERNIC_ROOT/scripts/prepare-qemu.sh" "$work" "$QEMU_FLAVOUR"
use_ccache
system=qemu-system-x86_64
what=$system
if [ "$QEMU_FLAVOUR" = next ] && [ "${ERNIC_QEMU_NEXT_FULL:-0}" != 1 ]; then
    system=$(ninja -C "$bld" -t targets all |
             sed -n 's/^\(lib[a-z]*\.a\.p\/hw_rdma_[a-z0-9_]*\.c\.o\):.*/\1/p')
    [ -n "$system" ] || die "no hw/rdma objects in $bld"
    what="the device's objects"
fi
log "building $what ($QEMU_FLAVOUR $(cat "$work/$QEMU_SRC/VERSION")), the ernic qtests and the benchmark (ninja -C $bld)"
# shellcheck disable=SC2086
ninja -C "$bld" $system tests/qtest/ernic-test \
    tests/qtest/ernic-rc-test tests/qtest/ernic-fatal-test \
    tests/qtest/ernic-hardening-test tests/qtest/ernic-ext-test \
    tests/qtest/ernic-immdt-test tests/qtest/ernic-migrate-test \
    tests/qtest/ernic-fault-test tests/qtest/qos-test \
    tests/qtest/ernic-boards-test tests/qtest/ernic-srq-test \
    tests/qtest/ernic-ud-test tests/qtest/ernic-uc-test \
    tests/qtest/ernic-atomic-test tests/qtest/ernic-place-test \
    tests/qtest/ernic-xrc-test tests/qtest/ernic-dbrec-test \
    tests/qtest/ernic-fuzz \
    tests/qtest/ernic-soak \
    tests/qtest/ernic-bench
# QEMU's manual, where configured: the device's page among its devices,
# with what sphinx said (scripts/qemu-builds-test.sh reads it).
if grep -q "enable-docs" "$bld/.ernic-configure"; then
    log "building QEMU's manual (ninja -C $bld docs/docs.stamp)"
    ninja -C "$bld" docs/docs.stamp >"$bld/docs-build.log" 2>&1 ||
        { tail -n 20 "$bld/docs-build.log" >&2; die "QEMU's manual did not build"; }
fi
touch "$stamp"
