#!/usr/bin/env bash
# Build rdma-core from Debian's `rdma-core` source package with the ernic
# provider (rdma-core/providers/ernic) overlaid, and install it into a
# staging root for the guest image. Idempotent: the source is fetched once
# and ninja rebuilds only what changed.
#
# The guest gets this build's whole user space (libibverbs, librdmacm, the
# providers, ernic's and rxe's among them, the tools, pyverbs and
# rdma-core's Python tests in /usr/share/rdma-core/tests): the provider
# ABI is private to one rdma-core version (IBVERBS_PRIVATE_<PABI>), so a
# provider loads only into the libibverbs it was built with (docs/driver.md,
# "User space").
#
# usage: build-rdma-core.sh WORKDIR
#   WORKDIR/rdma-core-dl     the source package's tarballs
#   WORKDIR/rdma-core-src    unpacked, Debian's patches applied, overlaid
#   WORKDIR/rdma-core-build  the cmake/ninja build
#   WORKDIR/rdma-core-root   the installed tree (DESTDIR)
# prints: the path of the installed tree
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(mkdir -p "$1" && cd "$1" && pwd)
dl=$work/rdma-core-dl
src=$work/rdma-core-src
bld=$work/rdma-core-build
root=$work/rdma-core-root

# Guest tests build in parallel (meson test): one builder at a time.
mkdir -p "$dl"
exec 9>"$dl/.lock"
flock 9

# The SHA-256 that the (signed) Sources index gives FILE of version V.
sources_sha256() {
    apt-cache showsrc rdma-core 2>/dev/null |
        awk -v v="$1" -v f="$2" '/^Package: / { mine = 0 }
                       /^Version: / { mine = ($2 == v) }
                       /^Checksums-Sha256:/ { on = 1; next }
                       /^[^ ]/ { on = 0 }
                       mine && on && $3 == f { print $1; exit }'
}

# fetch V: the .orig and .debian tarballs of rdma-core V, checked against
# the Sources index. apt-get verifies what it downloads, but some mirrors
# lack a version's .dsc (then it fails after fetching the tarballs) or its
# .orig (then nothing can be done with that version). For "newest" (a
# build of the provider against the newest rdma-core, not the guests'),
# an upstream tarball whose Debian packaging the mirror lacks will do.
fetch() {
    local v=$1 up=${1%-*} f sum
    (cd "$dl" && apt-get source -q --download-only \
        -o APT::Sandbox::User=root "rdma-core=$v" >/dev/null 2>&1) || true
    for f in "rdma-core_$up.orig.tar.gz" "rdma-core_$v.debian.tar.xz"; do
        sum=$(sources_sha256 "$v" "$f")
        if [ -n "$sum" ] && [ -f "$dl/$f" ] &&
           echo "$sum  $dl/$f" | sha256sum -c --quiet - >/dev/null 2>&1; then
            continue
        fi
        rm -f "$dl/$f"
        [ "$series" = newest ] && [ "${f%.debian.tar.xz}" != "$f" ] ||
            return 1
    done
}

# --- 1. Source: the newest version whose tarballs the mirror serves ------
# Of the series $ERNIC_RDMA_CORE (default 56, the guests' and Debian 13's;
# "newest": any).
series=${ERNIC_RDMA_CORE:-56}
if [ ! -f "$src/.ernic-unpacked" ]; then
    versions=$(apt-cache showsrc rdma-core 2>/dev/null |
               awk '/^Version: /{print $2}' | sort -u -r -V)
    if [ "$series" != newest ]; then
        versions=$(grep -E "^${series//./\.}\." <<<"$versions" || true)
    fi
    [ -n "$versions" ] || die "no rdma-core source package in apt (run scripts/setup-deps.sh)"
    ver=
    for v in $versions; do
        log "downloading Debian source rdma-core=$v"
        if fetch "$v"; then
            ver=$v
            break
        fi
        log "rdma-core=$v is not downloadable here, trying the next version"
    done
    [ -n "$ver" ] || die "could not download any rdma-core source package"
    rm -rf "$src" "$bld" "$root"
    mkdir -p "$src"
    log "unpacking rdma-core $ver with Debian's patch series"
    tar -xzf "$dl/rdma-core_${ver%-*}.orig.tar.gz" -C "$src" \
        --strip-components=1
    if [ -f "$dl/rdma-core_$ver.debian.tar.xz" ]; then
        tar -xJf "$dl/rdma-core_$ver.debian.tar.xz" -C "$src"
    else
        log "rdma-core $ver: the mirror lacks its Debian packaging; upstream source only"
    fi
    if [ -f "$src/debian/patches/series" ]; then
        grep -v '^#' "$src/debian/patches/series" | while read -r p; do
            [ -n "$p" ] || continue
            patch -d "$src" -p1 -s <"$src/debian/patches/$p" ||
                die "rdma-core: Debian patch $p does not apply"
        done
    fi
    echo "$ver" >"$src/.ernic-unpacked"
fi
ver=$(cat "$src/.ernic-unpacked")

# --- 2. Overlay: the provider folder, and one add_subdirectory line ------
link=$src/providers/ernic
if [ "$(readlink "$link" 2>/dev/null)" != "$ERNIC_ROOT/rdma-core/providers/ernic" ]; then
    rm -rf "$link"
    ln -s "$ERNIC_ROOT/rdma-core/providers/ernic" "$link"
fi
grep -qxF 'add_subdirectory(providers/ernic)' "$src/CMakeLists.txt" ||
    sed -i 's|^add_subdirectory(providers/efa)$|add_subdirectory(providers/ernic)\n&|' \
        "$src/CMakeLists.txt"
grep -qxF 'add_subdirectory(providers/ernic)' "$src/CMakeLists.txt" ||
    die "rdma-core $ver: no add_subdirectory(providers/efa) to put ernic beside"
# The uverbs ABI header (include/uapi/rdma/ernic-abi.h) where rdma-core
# keeps the kernel's, named in kernel-headers/CMakeLists.txt's two lists
# beside erdma's: published as <rdma/ernic-abi.h>, and turned by
# rdma_kernel_provider_abi() into <kernel-abi/ernic-abi.h>, the structs
# the provider's DECLARE_DRV_CMD() wrappers embed.
abi=$src/kernel-headers/rdma/ernic-abi.h
if [ "$(readlink "$abi" 2>/dev/null)" != "$ERNIC_ROOT/include/uapi/rdma/ernic-abi.h" ]; then
    rm -f "$abi"
    ln -s "$ERNIC_ROOT/include/uapi/rdma/ernic-abi.h" "$abi"
fi
khdr=$src/kernel-headers/CMakeLists.txt
if [ "$(grep -cx '  rdma/ernic-abi.h' "$khdr")" != 2 ]; then
    sed -i '/^  rdma\/ernic-abi.h$/d; s|^  rdma/erdma-abi.h$|&\n  rdma/ernic-abi.h|' \
        "$khdr"
    [ "$(grep -cx '  rdma/ernic-abi.h' "$khdr")" = 2 ] ||
        die "rdma-core $ver: no two lists with rdma/erdma-abi.h in $khdr"
fi

# --- 3. Configure once, build, install into the staging root -------------
if [ ! -f "$bld/build.ninja" ]; then
    log "configuring rdma-core $ver in $bld"
    mkdir -p "$bld"
    use_ccache      # cmake takes the compiler it finds first: ccache's
    (cd "$bld" && cmake -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_INSTALL_PREFIX=/usr \
        -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu \
        -DCMAKE_INSTALL_SYSCONFDIR=/etc \
        -DCMAKE_INSTALL_RUNDIR=/run \
        -DNO_MAN_PAGES=1 -DENABLE_STATIC=0 \
        -DPYTHON_EXECUTABLE="$ERNIC_PYTHON" \
        -DERNIC_INCLUDE_DIR="$ERNIC_ROOT/include" \
        "$src" >"$bld/configure.log" 2>&1) ||
        { tail -n 30 "$bld/configure.log" >&2; die "rdma-core cmake failed"; }
fi
use_ccache
log "building rdma-core $ver with the ernic provider (ninja -C $bld)"
ninja -C "$bld" >"$bld/build.log" 2>&1 ||
    { grep -B2 -A12 -m3 'error' "$bld/build.log" >&2; die "rdma-core build failed"; }
stamp=$root/.ernic-installed
if [ ! -f "$stamp" ] || [ -n "$(find "$bld" -newer "$stamp" \
        \( -name '*.so*' -o -type f -perm -u+x \) -print -quit)" ]; then
    rm -rf "$root"
    DESTDIR=$root ninja -C "$bld" install >"$bld/install.log" 2>&1 ||
        { tail -n 20 "$bld/install.log" >&2; die "rdma-core install failed"; }
    # pyverbs' tests install as documentation: keep them, drop the rest.
    if [ -d "$root/usr/share/doc/rdma-core/tests" ]; then
        mkdir -p "$root/usr/share/rdma-core"
        mv "$root/usr/share/doc/rdma-core/tests" "$root/usr/share/rdma-core/"
    fi
    rm -rf "$root"/usr/share/{doc,man} "$root"/usr/include
    touch "$stamp"
fi

# --- 4. The project's guest programs, against this libibverbs ------------
for t in ernic-uverbs-test ernic-fault-verbs ernic-fault-pair ernic-mw-pair; do
    if [ "$ERNIC_ROOT/guest/$t.c" -nt "$root/usr/bin/$t" ] ||
       [ "$ERNIC_ROOT/guest/ernic-verbs.h" -nt "$root/usr/bin/$t" ] ||
       [ "$ERNIC_ROOT/guest/ernic-fault.h" -nt "$root/usr/bin/$t" ]; then
        log "building $t"
        cc -O2 -Wall -Wextra -o "$root/usr/bin/$t" "$ERNIC_ROOT/guest/$t.c" \
            -I"$ERNIC_ROOT/guest" -I"$ERNIC_ROOT/include" -I"$bld/include" -L"$bld/lib" -libverbs ||
            die "$t does not build"
    fi
done
echo "$root"
