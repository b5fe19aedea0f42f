#!/usr/bin/env bash
# Install dependencies, then configure (once) and build with the project's
# top-level meson.build: everything, or only the meson targets named (the
# main job builds only 'qemu', the default QEMU build). Idempotent.
# usage: build.sh [BUILDDIR [TARGET...]]   (default: build, everything)
set -euo pipefail
. "$(dirname "$0")/common.sh"

bdir=${1:-$ERNIC_ROOT/build}
shift || true
"$ERNIC_ROOT/scripts/setup-deps.sh"
if [ ! -f "$bdir/build.ninja" ]; then
    log "meson setup $bdir"
    meson setup "$bdir" "$ERNIC_ROOT" >/dev/null
fi
log "meson compile -C $bdir $*"
meson compile -C "$bdir" "$@"
