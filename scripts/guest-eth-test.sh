#!/usr/bin/env bash
# Boot Debian's kernel under TCG with -device ernic on -netdev user, load
# the guest driver, and ping slirp's gateway through the driver's
# net_device (the Ethernet path); unload and reload the module.
# usage: guest-eth-test.sh [--check] WORKDIR
#   --check: print TAP (for `meson test`) instead of the transcript
set -euo pipefail
. "$(dirname "$0")/common.sh"

check=0
if [ "${1:-}" = --check ]; then
    check=1
    shift
fi
work=$(cd "$1" && pwd)
qemu=$work/qemu-build/qemu-system-x86_64
[ -x "$qemu" ] || die "$qemu not built (meson compile -C $work)"

ko=$("$ERNIC_ROOT/scripts/build-guest-driver.sh" "$work")
mapfile -t image < <("$ERNIC_ROOT/scripts/guest-image.sh" "$work" \
                     "$ERNIC_ROOT/guest/init-eth.sh" "$ko")

cmd=("$qemu" -M q35,sata=off -accel tcg -m 512 -smp 1 -nodefaults
     -display none -serial stdio -no-reboot
     -kernel "${image[0]}" -initrd "${image[1]}"
     -append "console=ttyS0 panic=-1 quiet loglevel=3"
     -netdev user,id=net0
     -device ernic,netdev=net0,mac=52:54:00:e3:32:01)
log "booting: ${cmd[*]}"
out=$(timeout 300 "${cmd[@]}" 2>&1 </dev/null) || true
transcript=$(printf '%s\n' "$out" | tr -d '\r' | grep '^guest:' || true)

if [ "$check" = 0 ]; then
    printf '%s\n' "$transcript"
    printf '%s\n' "$transcript" | grep -q 'RESULT PASS'
    exit
fi
n=0
fail=0
tap() {
    n=$((n + 1))
    if [ "$(printf '%s\n' "$transcript" | grep -c -- "$2")" -ge "$3" ]; then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1"
        fail=1
    fi
}
echo "1..3"
tap "driver binds and registers a net_device (twice: load, reload)" \
    'ernic net_device: eth' 2
tap "ping through the Ethernet path, 3 replies (twice)" \
    'ping 10.0.2.2: 3 replies' 2
tap "no kernel warnings, module unloads" 'RESULT PASS' 1
if [ "$fail" = 1 ]; then
    printf '%s\n' "$out" | tr -d '\r' | tail -n 40 | sed 's/^/# /'
fi
exit "$fail"
