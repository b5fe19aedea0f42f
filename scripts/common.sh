# Shared helpers for the project's scripts. Source, do not run.
# shellcheck shell=bash

ERNIC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ERNIC_ROOT

log() { printf '[ernic] %s\n' "$*" >&2; }
die() { printf '[ernic] error: %s\n' "$*" >&2; exit 1; }

# Run a command as root: directly when we are root, else through sudo.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root for: $*"
    fi
}

# Debian's python, whatever python3 is first on PATH (QEMU's configure needs
# the interpreter Debian's meson runs under).
ERNIC_PYTHON=/usr/bin/python3
export ERNIC_PYTHON
