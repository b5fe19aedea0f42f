#!/usr/bin/env bash
# Run one of the project's qtest programs (soak, fuzzer) against a QEMU
# build, with the sanitizers set to stop at the first report.
# usage: run-qtool.sh QEMU_BUILD_OF_SYSTEM QEMU_BUILD_OF_TESTS TOOL [ARGS...]
set -euo pipefail
. "$(dirname "$0")/common.sh"
sys=$1 tests=$2 tool=$3
shift 3
export QTEST_QEMU_BINARY="$sys/qemu-system-x86_64"
export_sanitizer_options
exec "$tests/tests/qtest/$tool" "$@"
