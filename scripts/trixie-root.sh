#!/usr/bin/env bash
# A Debian 13 (trixie) build root, made with debootstrap from Debian's
# packages, for what must be built with trixie's compiler and tools: the
# guest driver against trixie's kernel headers (6.12, and the newest
# kernel of trixie-backports), which need gcc-14. The host's own
# packages are never upgraded. Idempotent: the root is made once, and
# packages are added to it when a later call asks for more.
#
# usage: trixie-root.sh ROOT [PACKAGE[/SUITE]...]
#   ROOT gets trixie with gcc, make and the named packages (SUITE, e.g.
#   trixie-backports, for a backport); apt sources are derived from the
#   host's own Debian entry, as scripts/setup-deps.sh does.
# prints: ROOT
set -euo pipefail
. "$(dirname "$0")/common.sh"

root=$(mkdir -p "$1" && cd "$1" && pwd)
shift
src=$(debian_source | head -n 1)
[ -n "$src" ] || die "no apt source for Debian found in /etc/apt"
uri=${src%%|*}
key=${src#*|}
[ -n "$key" ] || key=/usr/share/keyrings/debian-archive-keyring.gpg
command -v debootstrap >/dev/null ||
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends debootstrap >/dev/null

# Build roots of parallel tests: one builder at a time.
mkdir -p "$root.lock.d"
exec 8>"$root.lock.d/lock"
flock 8

if [ ! -f "$root/.ernic-root" ]; then
    log "debootstrap trixie into $root (minbase, gcc, make)"
    rm -rf "$root"
    mkdir -p "$root"
    as_root debootstrap --variant=minbase --keyring="$key" \
        --include=gcc,make,libc6-dev,kmod,ca-certificates trixie "$root" \
        "$uri" >"$root.lock.d/debootstrap.log" 2>&1 ||
        { tail -n 20 "$root.lock.d/debootstrap.log" >&2; die "debootstrap failed"; }
    cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOS
Types: deb
URIs: $uri
Suites: trixie trixie-updates trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
    rm -f "$root/etc/apt/sources.list"
    chroot "$root" apt-get update -q >/dev/null
    touch "$root/.ernic-root"
fi

# The packages asked for, installed once.
want=()
for p in "$@"; do
    chroot "$root" dpkg-query -W -f='${Status}' "${p%%/*}" 2>/dev/null |
        grep -q 'install ok installed' || want+=("$p")
done
if [ ${#want[@]} -gt 0 ]; then
    log "trixie root: installing ${want[*]}"
    chroot "$root" apt-get update -q >/dev/null
    chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends "${want[@]}" >/dev/null ||
        die "trixie root: cannot install ${want[*]}"
fi
echo "$root"
