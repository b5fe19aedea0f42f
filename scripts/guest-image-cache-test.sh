#!/usr/bin/env bash
# scripts/guest-image.sh rebuilds an initramfs whose list of inputs
# changed, even when what was added is older than the image (a deb that
# another image fetched first): it once kept the old image, without the
# library added to the list. TAP; uses WORKDIR's cached guest kernel.
# usage: guest-image-cache-test.sh WORKDIR
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=${1:?usage: guest-image-cache-test.sh WORKDIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$work/guest/init-cachetest.cpio"{,.inputs}' EXIT
printf '#!/bin/sh\n' >"$tmp/init-cachetest.sh"
echo one >"$tmp/one"
echo two >"$tmp/two"
touch -d '2000-01-01' "$tmp/two"

image() {
    "$ERNIC_ROOT/scripts/guest-image.sh" "$work" "$tmp/init-cachetest.sh" \
        "$@" | tail -n 1
}
has() {
    (cd "$tmp" && cpio -t --quiet <"$1" | grep -qx "$2")
}

echo "1..2"
initrd=$(image "$tmp/one")
if has "$initrd" one; then
    echo "ok 1 - the image holds its file"
else
    echo "not ok 1 - the image holds its file"
fi
initrd=$(image "$tmp/one" "$tmp/two")
if has "$initrd" two; then
    echo "ok 2 - a file older than the image, added to the list, is in it"
else
    echo "not ok 2 - a file older than the image, added to the list, is in it"
fi
