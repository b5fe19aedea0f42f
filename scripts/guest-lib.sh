# Shared by the guest test scripts (sourced after common.sh): arguments,
# the TCG boot, and TAP output.
#   guest_args "$@"        sets check (1 with --check), work, qemu
#                          ($ERNIC_GUEST_QEMU if set)
#   guest_boot VMLINUX INITRD [QEMU ARG...]
#                          boots, sets out (console) and transcript
#                          (its "guest:" lines), ms (boot to poweroff);
#                          $guest_append is added to the kernel command line
#   verbs_image            sets image (vmlinux, initrd): the user-space
#                          verbs image (guest/init-verbs.sh, the driver,
#                          rdma-core with the ernic provider, perftest)
#   guest_cmd VMLINUX INITRD APPEND [QEMU ARG...]
#                          sets cmd: the QEMU command line of a guest
#                          ($guest_mem MiB of RAM, 512 unless set;
#                          $ERNIC_GUEST_QEMU_ARGS is added, e.g. for
#                          "-trace ernic_qp_fatal -D FILE"); with
#                          ERNIC_GUEST_IOMMU=1 the guest has an Intel
#                          IOMMU (before the other devices) and the
#                          kernel translates all DMA through it, strictly
#   pair_transcript DIR A B
#                          for two guests whose consoles are DIR/A and
#                          DIR/B: sets out (both consoles, each line
#                          prefixed "A| ") and transcript (their "guest:"
#                          lines as "A: ...", then B's)
#   show_transcript        without --check: print it, exit 0 on PASS
#   show_pair_transcript MSG
#                          the same for two guests (each must end with
#                          RESULT PASS); MSG is logged after it
#   tap NAME PATTERN [N]   TAP line: PATTERN in at least N transcript lines
#   tap_none NAME PATTERN  TAP line: PATTERN in no transcript line
#   tap_end                on failure, the console's tail; exit status
#   netns_bridge BRIDGE TAP...
#                          in a network namespace of the test's own
#                          (unshare -n): loopback up, BRIDGE with each TAP
#                          on it, MTU 9000, tap queues of 20 000 frames

guest_args() {
    check=0
    if [ "${1:-}" = --check ]; then
        check=1
        shift
    fi
    work=$(cd "$1" && pwd)
    # ERNIC_GUEST_QEMU: another QEMU binary, e.g. the sanitizer build's.
    qemu=${ERNIC_GUEST_QEMU:-$work/qemu-build/qemu-system-x86_64}
    if [ -n "${ERNIC_GUEST_QEMU:-}" ]; then
        export_sanitizer_options    # a report stops QEMU: the test fails
    fi
    [ -x "$qemu" ] || die "$qemu not built (meson compile -C $work)"
    # Where a QEMU build lives, so its configuration can be read.
    qemu_bld=$(dirname "$qemu")
    n=0
    fail=0
}

# q35 without its AHCI controller (SeaBIOS would spend ~30 s probing it);
# the uncompressed vmlinux boots through its PVH entry (pvh.bin).
# no_timer_check: under TCG on a loaded host the kernel's check that the
# timer interrupt arrives through the IO-APIC can time out, and with
# interrupt remapping (ERNIC_GUEST_IOMMU) that is a panic ("timer doesn't
# work through Interrupt-remapped IO-APIC", seen in CI); the timer works.
verbs_image() {
    local rdma_root kos
    rdma_root=$("$ERNIC_ROOT/scripts/build-rdma-core.sh" "$work")
    mapfile -t kos < <("$ERNIC_ROOT/scripts/build-guest-driver.sh" "$work")
    mapfile -t image < <("$ERNIC_ROOT/scripts/guest-image.sh" "$work" \
        "$ERNIC_ROOT/guest/init-verbs.sh" "${kos[0]}" \
        "$ERNIC_ROOT/guest/ulp-lib.sh" \
        kdep:rdma_cm kdep:ib_uverbs kdep:virtio_pci kdep:virtio_net \
        kdep:rdma_rxe kdep:crc32_generic kdep:rdma_ucm "tree:$rdma_root" \
        deb:perftest deb:libpci3 deb:libudev1 deb:zlib1g deb:libnl-3-200 \
        deb:libnl-route-3-200 deb:libgcc-s1 \
        deb:iproute2 deb:libc6 deb:libmnl0 deb:libbsd0 deb:libcap2 \
        deb:libmd0)
}

guest_cmd() {
    local vmlinux=$1 initrd=$2 append=$3 iommu=()
    shift 3
    if [ -n "${ERNIC_GUEST_IOMMU:-}" ]; then
        iommu=(-device intel-iommu)
        append+=" intel_iommu=on iommu.passthrough=0 iommu.strict=1"
    fi
    cmd=("$qemu" -M q35,sata=off -accel tcg -m "${guest_mem:-512}" -smp 1
         -nodefaults
         -display none -serial stdio -no-reboot
         -kernel "$vmlinux" -initrd "$initrd"
         -append "console=ttyS0 panic=-1 quiet loglevel=3 no_timer_check $append"
         "${iommu[@]}" "$@")
    # shellcheck disable=SC2206 # words of a command line, on purpose
    cmd+=(${ERNIC_GUEST_QEMU_ARGS:-})
}

# RoCE wants a lossless segment (PFC on a switch). A tap drops what its
# queue cannot hold while its QEMU is not reading, and a 1 MiB message is a
# burst of 1024 frames: the default 1000 lost a frame now and then, which
# UCX's RC QPs (1 s timeout) paid a second for.
netns_bridge() {
    local br=$1 t
    shift
    ip link set lo up
    ip link add "$br" type bridge
    ip link set "$br" mtu 9000 up
    for t in "$@"; do
        ip tuntap add dev "$t" mode tap
        ip link set "$t" mtu 9000 txqueuelen 20000 master "$br" up
    done
}

guest_boot() {
    local vmlinux=$1 initrd=$2 start
    shift 2
    guest_cmd "$vmlinux" "$initrd" "${guest_append:-}" "$@"
    log "booting: ${cmd[*]}"
    start=$(date +%s%N)
    out=$(timeout 300 "${cmd[@]}" 2>&1 </dev/null) || true
    ms=$((($(date +%s%N) - start) / 1000000))
    transcript=$(printf '%s\n' "$out" | tr -d '\r' | grep '^guest:' || true)
}

pair_transcript() {
    local dir=$1 a=$2 b=$3
    pair_a=$a
    pair_b=$b
    out=$(sed "s/^/$a| /" "$dir/$a"; sed "s/^/$b| /" "$dir/$b")
    transcript=$( (grep -a '^guest:' "$dir/$a" | tr -d '\r' |
                   sed "s/^guest: /$a: /"
                   grep -a '^guest:' "$dir/$b" | tr -d '\r' |
                   sed "s/^guest: /$b: /") || true)
}

show_transcript() {
    printf '%s\n' "$transcript"
    log "QEMU ran for ${ms} ms (boot to poweroff, TCG)"
    printf '%s\n' "$transcript" | grep -q 'RESULT PASS'
    exit
}

show_pair_transcript() {
    printf '%s\n' "$transcript"
    log "$1"
    # Each guest's own last word; "RESULT PASS (0 failed)" lines of a
    # round are not it.
    printf '%s\n' "$transcript" | grep -q "^$pair_a: RESULT PASS\$" &&
        printf '%s\n' "$transcript" | grep -q "^$pair_b: RESULT PASS\$"
    exit
}

tap() {
    n=$((n + 1))
    if [ "$(printf '%s\n' "$transcript" | grep -c -- "$2")" -ge "${3:-1}" ]
    then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1"
        fail=1
    fi
}

tap_none() {
    n=$((n + 1))
    if printf '%s\n' "$transcript" | grep -q -- "$2"; then
        echo "not ok $n - $1"
        fail=1
    else
        echo "ok $n - $1"
    fi
}

tap_end() {
    if [ "$fail" = 1 ]; then
        printf '%s\n' "$out" | tr -d '\r' | tail -n 40 | sed 's/^/# /'
    fi
    exit "$fail"
}

# Whether the QEMU the guests run on has netdev polling: the optional
# QEMU patches that hw/rdma/meson.build found in its tree (README,
# "Which QEMU").
qemu_polls() {
    grep -qx '#define CONFIG_ERNIC_NET_POLL' \
        "$qemu_bld/hw/rdma/ernic-config.h" 2>/dev/null
}
