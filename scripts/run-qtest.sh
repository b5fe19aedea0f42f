#!/usr/bin/env bash
# Run one qtest binary of the overlaid QEMU build with TAP output.
# usage: run-qtest.sh QEMU_BUILD TEST [glib test args...]
set -euo pipefail
bld=$1
test=$2
shift 2
export QTEST_QEMU_BINARY="$bld/qemu-system-x86_64"
exec "$bld/tests/qtest/$test" --tap -k "$@"
