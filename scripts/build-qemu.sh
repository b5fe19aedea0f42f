#!/usr/bin/env bash
# Build an overlaid QEMU and the ernic qtests. Ninja rebuilds only what an
# edit touched, and nothing when nothing changed.
# usage: build-qemu.sh WORKDIR STAMP [FLAVOUR]   (scripts/prepare-qemu.sh)
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(cd "$1" && pwd)
stamp=$2
qemu_flavour "${3:-accel}"
bld=$work/$QEMU_BLD

"$ERNIC_ROOT/scripts/prepare-qemu.sh" "$work" "$QEMU_FLAVOUR"
use_ccache
log "building qemu-system-x86_64 ($QEMU_FLAVOUR), the ernic qtests and the benchmark (ninja -C $bld)"
ninja -C "$bld" qemu-system-x86_64 tests/qtest/ernic-test \
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
touch "$stamp"
