#!/usr/bin/env bash
# The guest driver and the rdma-core provider on the stacks users have
# (README, "Kernels and rdma-core"), as TAP: the driver built against
# Debian 12's kernel (6.1), Debian 13's (6.12) and the newest Debian
# serves (trixie-backports), each module's vermagic that kernel's; the
# provider built in rdma-core 56.1 (the guests', Debian 13's) and in
# the newest rdma-core Debian serves as a source package.
# usage: stacks-test.sh WORKDIR
set -euo pipefail
. "$(dirname "$0")/common.sh"

work=$(cd "${1:?usage: stacks-test.sh WORKDIR}" && pwd)
n=0
fail=0

point() {   # point OK NAME [DETAIL]
    n=$((n + 1))
    if [ "$1" = 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        [ -z "${3:-}" ] || echo "# $3"
        fail=1
    fi
}

vermagic() {
    strings "$1" 2>/dev/null | sed -n 's/^vermagic=\([^ ]*\) .*/\1/p' | head -n 1
}

for suite in "" trixie trixie-backports; do
    name=${suite:-bookworm}
    log "guest driver for $name"
    # All of its output, then the first line: a pipe to head would end
    # the script with SIGPIPE, and pipefail would call that a failure.
    if kos=$("$ERNIC_ROOT/scripts/build-guest-driver.sh" "$work" $suite \
                2>"$work/stacks-$name.log") && ko=${kos%%$'\n'*} &&
       [ -f "$ko" ]; then
        v=$(vermagic "$ko")
        point 0 "guest driver builds for $name's kernel (vermagic $v)"
    else
        point 1 "guest driver builds for $name's kernel" \
            "$(grep -m3 -E 'error|warning' "$work/stacks-$name.log" || tail -n 3 "$work/stacks-$name.log")"
    fi
done

for series in 56 newest; do
    dir=$work
    [ "$series" = 56 ] || dir=$work/rdma-core-next
    log "provider in rdma-core $series"
    if root=$(ERNIC_RDMA_CORE=$series "$ERNIC_ROOT/scripts/build-rdma-core.sh" \
                "$dir" 2>"$work/stacks-rdma-core-$series.log"); then
        ver=$(cat "$dir/rdma-core-src/.ernic-unpacked")
        so=$(ls "$root"/usr/lib/x86_64-linux-gnu/libibverbs/libernic-rdmav*.so \
             2>/dev/null || true)
        so=${so%%$'\n'*}
        point "$([ -n "$so" ]; echo $?)" \
            "provider builds in rdma-core $ver ($(basename "${so:-none}"))"
    else
        point 1 "provider builds in rdma-core $series" \
            "$(tail -n 3 "$work/stacks-rdma-core-$series.log")"
    fi
done

echo "1..$n"
exit "$fail"
