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

# The configure options every QEMU build of the project shares: x86_64 with
# the ernic device set only, no downloads (a missing library fails configure
# at once and names itself: add its -dev package to setup-deps.sh), and the
# seabios and qemu-system-data packages' firmware (the Debian source has no
# firmware blobs).
ERNIC_QEMU_ARGS=(
    --target-list=x86_64-softmmu
    --without-default-devices
    --with-devices-x86_64=ernic
    --python="$ERNIC_PYTHON"
    --enable-slirp
    --disable-docs --disable-tools --disable-guest-agent --disable-user
    --disable-install-blobs --disable-werror
    --disable-download
    --firmwarepath=/usr/share/seabios:/usr/share/qemu
)

# qemu_configure SRC BLD WHAT ARGS...: configure QEMU from SRC in BLD with
# ARGS, again only when the options changed; point the build tree's
# firmware path (qemu-bundle/) at the packages' files.
qemu_configure() {
    local src=$1 bld=$2 what=$3 want fw
    shift 3
    want="$*"
    if [ ! -f "$bld/build.ninja" ] ||
       [ "$(cat "$bld/.ernic-configure" 2>/dev/null)" != "$want" ]; then
        rm -rf "$bld"
        mkdir -p "$bld"
        log "configuring $what in $bld"
        if ! (cd "$bld" && "$src/configure" "$@" >configure.log 2>&1); then
            tail -n 30 "$bld/configure.log" >&2
            die "QEMU configure ($what) failed; see $bld/configure.log"
        fi
        echo "$want" >"$bld/.ernic-configure"
    fi
    for fw in /usr/share/seabios /usr/share/qemu; do
        mkdir -p "$bld/qemu-bundle$(dirname "$fw")"
        ln -sfn "$fw" "$bld/qemu-bundle$fw"
    done
}

# The sanitizer builds stop at their first report (fuzz.sh, run-qtool.sh).
export_sanitizer_options() {
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1
    export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
}
