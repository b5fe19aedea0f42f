#!/usr/bin/env bash
# Install dependencies, then configure (once) and build everything with the
# project's top-level meson.build. Idempotent.
# usage: build.sh [BUILDDIR]   (default: build)
set -euo pipefail
. "$(dirname "$0")/common.sh"

bdir=${1:-$ERNIC_ROOT/build}
"$ERNIC_ROOT/scripts/setup-deps.sh"
if [ ! -f "$bdir/build.ninja" ]; then
    log "meson setup $bdir"
    meson setup "$bdir" "$ERNIC_ROOT" >/dev/null
fi
log "meson compile -C $bdir"
meson compile -C "$bdir"
