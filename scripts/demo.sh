#!/usr/bin/env bash
# The project's main job (README): build everything, then boot Debian's
# kernel under TCG with -device ernic and show the guest enumerating the
# device by its PCI ID and using its registers.
set -euo pipefail
. "$(dirname "$0")/common.sh"

bdir=$ERNIC_ROOT/build
"$ERNIC_ROOT/scripts/build.sh" "$bdir"
"$ERNIC_ROOT/scripts/guest-demo.sh" "$bdir"
