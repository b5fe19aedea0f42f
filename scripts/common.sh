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

# Print "URI|KEYRING" of the apt entry that serves Debian bookworm main.
debian_source() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        [ "$f" = /etc/apt/sources.list.d/ernic-extra.sources ] && continue
        awk '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && suites ~ /(^| )bookworm( |$)/ &&
                    comps ~ /(^| )main( |$)/ && uri != "")
                    { print uri "|" key; found = 1; exit }
                types = suites = comps = uri = key = ""
            }
            /^[ \t]*$/ { flush(); next }
            /^Types:/      { sub(/^Types:[ \t]*/, "");      types = $0 }
            /^URIs:/       { sub(/^URIs:[ \t]*/, "");       split($0, u, " "); uri = u[1] }
            /^Suites:/     { sub(/^Suites:[ \t]*/, "");     suites = $0 }
            /^Components:/ { sub(/^Components:[ \t]*/, ""); comps = $0 }
            /^Signed-By:/  { sub(/^Signed-By:[ \t]*/, "");  key = $0 }
            END { if (!found) flush() }
        ' "$f" && return 0
    done | head -n 1
    # One-line format: "deb [signed-by=K] URI bookworm main ..."
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1 == "deb" {
                key = ""; i = 2
                if ($2 ~ /^\[/) {
                    while (i <= NF && $i !~ /\]$/) {
                        if ($i ~ /signed-by=/) { key = $i; sub(/.*signed-by=/, "", key) }
                        i++
                    }
                    if ($i ~ /signed-by=/) { key = $i; sub(/.*signed-by=/, "", key); sub(/\]$/, "", key) }
                    i++
                }
                if ($(i + 1) == "bookworm") { print $i "|" key; exit }
             }' || true
}

# qemu_flavour NAME: the QEMU build NAME stands for, in QEMU_FLAVOUR,
# QEMU_SERIES (the Debian source version it takes the newest of),
# QEMU_PATCHES (yes: patches/qemu/ applied), QEMU_SRC and QEMU_BLD (its
# source and build folders under the work folder).
#   accel  the default build: 10.0 with the optional patches (README)
#   stock  10.0 as Debian ships it, with QEMU's manual (QEMU_EXTRA: more
#          configure options)
#   next   the newest QEMU Debian serves as a source package, newer than
#          10.0, as it ships ($ERNIC_QEMU_NEXT, e.g. 10.2, picks a series)
qemu_flavour() {
    QEMU_FLAVOUR=$1
    QEMU_EXTRA=
    case $1 in
    accel) QEMU_SERIES=10.0 QEMU_PATCHES=yes QEMU_SRC=qemu-src QEMU_BLD=qemu-build ;;
    stock) QEMU_SERIES=10.0 QEMU_PATCHES=no QEMU_SRC=qemu-stock-src QEMU_BLD=qemu-stock
           QEMU_EXTRA=--enable-docs ;;
    next) QEMU_SERIES=${ERNIC_QEMU_NEXT:-newest} QEMU_PATCHES=no
          QEMU_SRC=qemu-next-src QEMU_BLD=qemu-next ;;
    *) die "unknown QEMU flavour '$1' (accel, stock, next)" ;;
    esac
}

# Compiler cache for the QEMU builds, outside the work tree, so that a
# fresh clone on the same machine (a second CI run) compiles only what
# changed. Paths under the clone are hashed relative to it.
ERNIC_CACHE=${ERNIC_CACHE:-/var/cache/ernic}
ERNIC_CCACHE_DIR=${ERNIC_CCACHE_DIR:-$ERNIC_CACHE/ccache}
# The Debian 13 build root (scripts/trixie-root.sh), kept there too.
ERNIC_TRIXIE_ROOT=${ERNIC_TRIXIE_ROOT:-$ERNIC_CACHE/trixie-root}
use_ccache() {
    [ -x /usr/lib/ccache/cc ] || return 0
    mkdir -p "$ERNIC_CCACHE_DIR" 2>/dev/null || return 0
    export CCACHE_DIR=$ERNIC_CCACHE_DIR CCACHE_BASEDIR=$ERNIC_ROOT
    export CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-10G}
    case ":$PATH:" in
    *:/usr/lib/ccache:*) ;;
    *) export PATH=/usr/lib/ccache:$PATH ;;
    esac
}

# qemu_configure SRC BLD WHAT ARGS...: configure QEMU from SRC in BLD with
# ARGS, again only when the options changed; point the build tree's
# firmware path (qemu-bundle/) at the packages' files.
qemu_configure() {
    local src=$1 bld=$2 what=$3 want fw
    shift 3
    want="$*"
    use_ccache
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
