#!/usr/bin/env bash
# Boot Debian's kernel under TCG with -device ernic and show the guest
# enumerating the device by its PCI ID and using its registers.
# usage: guest-demo.sh [--check] WORKDIR
#   --check: print TAP (for `meson test`) instead of the plain transcript
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

mapfile -t image < <("$ERNIC_ROOT/scripts/guest-image.sh" "$work" \
                     "$ERNIC_ROOT/guest/init-enumerate.sh")
vmlinux=${image[0]}
initrd=${image[1]}

# q35 without its AHCI controller (SeaBIOS would spend ~30 s probing it); the
# uncompressed vmlinux boots through its PVH entry (pvh.bin).
cmd=("$qemu" -M q35,sata=off -accel tcg -m 512 -smp 1 -nodefaults
     -display none -serial stdio -no-reboot
     -kernel "$vmlinux" -initrd "$initrd"
     -append "console=ttyS0 panic=-1 quiet loglevel=3"
     -netdev user,id=net0
     -device ernic,netdev=net0,mac=52:54:00:e3:32:01)

log "booting: ${cmd[*]}"
start=$(date +%s%N)
out=$(timeout 300 "${cmd[@]}" 2>&1 </dev/null) || true
ms=$((($(date +%s%N) - start) / 1000000))
transcript=$(printf '%s\n' "$out" | tr -d '\r' | grep '^guest:' || true)

if [ "$check" = 0 ]; then
    printf '%s\n' "$transcript"
    log "QEMU ran for ${ms} ms (boot to poweroff, TCG)"
    printf '%s\n' "$transcript" | grep -q 'RESULT PASS'
    exit
fi

n=0
fail=0
tap() {
    n=$((n + 1))
    if printf '%s\n' "$transcript" | grep -q -- "$2"; then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1"
        fail=1
    fi
}
echo "1..4"
tap "guest lists the ernic PCI function 10ee:e332" '10ee:e332 class 020000'
tap "guest reads PG332 reset value of XRNIC_BUF_THRESHOLD_ROCE" '= 0x0000965A'
tap "guest reads the board MAC from MACXADDMSB/LSB" 'MACXADDMSB/LSB = 0x00005254 0x00E33201'
tap "guest register writes read back" 'RESULT PASS'
if [ "$fail" = 1 ]; then
    printf '%s\n' "$out" | tr -d '\r' | tail -n 40 | sed 's/^/# /'
fi
exit "$fail"
