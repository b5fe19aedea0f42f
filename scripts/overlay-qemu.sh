#!/usr/bin/env bash
# Overlay the ernic device, its header, its qtest and its device
# configuration onto a QEMU source tree, and apply the optional QEMU
# patches (patches/qemu/) unless --no-patches. Idempotent.
#
# usage: overlay-qemu.sh [--no-patches] QEMU_SRC
#
# The tree gets symlinks into this repository (so an edit here is seen by
# QEMU's ninja at once) and one line in each of: hw/Kconfig (source),
# hw/meson.build (subdir), meson.build (trace-events directory) and
# tests/qtest/meson.build (the qtest).
set -euo pipefail
. "$(dirname "$0")/common.sh"

patches=yes
if [ "${1:-}" = --no-patches ]; then
    patches=no
    shift
fi
src=${1:?usage: overlay-qemu.sh [--no-patches] QEMU_SRC}

link() {
    local target=$1 name=$2
    if [ "$(readlink "$name" 2>/dev/null)" != "$target" ]; then
        rm -rf "$name"
        ln -s "$target" "$name"
    fi
}

# add_line FILE LINE [AFTER_REGEX]: add LINE once, after the first line
# matching AFTER_REGEX, or at the end.
add_line() {
    local file=$1 line=$2 after=${3:-}
    grep -qxF "$line" "$file" && return 0
    if [ -n "$after" ]; then
        grep -qE "$after" "$file" || die "$file: no line matching '$after'"
        awk -v line="$line" -v re="$after" \
            '{ print } !done && $0 ~ re { print line; done = 1 }' \
            "$file" >"$file.tmp"
        mv "$file.tmp" "$file"
    else
        printf '%s\n' "$line" >>"$file"
    fi
}

# The optional changes to QEMU itself (patches/qemu/, a git format-patch
# series, each with its reason): applied once, in order, and listed in
# $src/.ernic-patches. A patch not listed there but already in the tree
# (applied before the list existed) is listed without applying it: it
# still reverses, as long as no later patch changed its lines. A tree
# overlaid --no-patches must never have had one.
applied=$src/.ernic-patches
touch "$applied"
if [ "$patches" = no ] && [ -s "$applied" ]; then
    die "$src has patches/qemu applied; it cannot be a stock tree"
fi
for p in "$ERNIC_ROOT"/patches/qemu/*.patch; do
    [ "$patches" = yes ] || break
    [ -e "$p" ] || continue
    name=$(basename "$p")
    grep -qxF "$name" "$applied" && continue
    if ! patch -d "$src" -p1 -R -s -f --dry-run <"$p" >/dev/null 2>&1; then
        patch -d "$src" -p1 -s -f <"$p" >/dev/null ||
            die "$p does not apply to $src"
        log "applied $name"
    fi
    echo "$name" >>"$applied"
done

link "$ERNIC_ROOT/hw/rdma" "$src/hw/rdma"
link "$ERNIC_ROOT/include/hw/rdma" "$src/include/hw/rdma"
for t in ernic-test.c ernic-rc-test.c ernic-fatal-test.c \
         ernic-hardening-test.c ernic-ext-test.c ernic-immdt-test.c \
         ernic-migrate-test.c ernic-fault-test.c ernic-qos-test.c \
         ernic-boards-test.c ernic-srq-test.c ernic-ud-test.c \
         ernic-uc-test.c ernic-atomic-test.c ernic-place-test.c \
         ernic-xrc-test.c ernic-dbrec-test.c \
         ernic-fuzz.c ernic-soak.c \
         ernic-rig.h ernic-rig.c libqos/ernic.c libqos/ernic.h; do
    link "$ERNIC_ROOT/qtest/$t" "$src/tests/qtest/$t"
done
link "$ERNIC_ROOT/bench/ernic-bench.c" "$src/tests/qtest/ernic-bench.c"
# The device's page of QEMU's manual, in the system emulation's device
# list (built where QEMU is configured --enable-docs: the stock build).
link "$ERNIC_ROOT/docs/system/devices/ernic.rst" \
     "$src/docs/system/devices/ernic.rst"
add_line "$src/docs/system/device-emulation.rst" "   devices/ernic.rst" \
    '^   devices/igb.rst'
link "$ERNIC_ROOT/configs/ernic-devices.mak" \
     "$src/configs/devices/x86_64-softmmu/ernic.mak"

add_line "$src/hw/Kconfig" "source rdma/Kconfig" '^source pci/Kconfig'
add_line "$src/hw/meson.build" "subdir('rdma')" "^subdir\('pci'\)"
add_line "$src/meson.build" "    'hw/rdma'," "^    'hw/pci',"
# The qtests; trees overlaid by older versions of this script list fewer.
qtest_line="qtests_x86_64 += ['ernic-test', 'ernic-rc-test', 'ernic-fatal-test', 'ernic-hardening-test', 'ernic-ext-test', 'ernic-immdt-test', 'ernic-migrate-test', 'ernic-fault-test', 'ernic-boards-test', 'ernic-srq-test', 'ernic-ud-test', 'ernic-uc-test', 'ernic-atomic-test', 'ernic-place-test', 'ernic-xrc-test', 'ernic-dbrec-test', 'ernic-fuzz', 'ernic-soak', 'ernic-bench']"
if ! grep -qxF "$qtest_line" "$src/tests/qtest/meson.build"; then
    sed -i "/^qtests_x86_64 += \['ernic-test'/d" "$src/tests/qtest/meson.build"
    add_line "$src/tests/qtest/meson.build" "$qtest_line" \
        '^qtests_x86_64 = qtests_i386'
fi

# The test rig (qtest/ernic-rig.c), compiled once and linked into each
# program that uses it, as libqos is; the block is replaced whole so that
# a tree overlaid by an older version of this script gets this one.
rig_block="# ernic: test rig (overlay-qemu.sh)
ernic_rig = declare_dependency(objects: static_library('ernic-rig',
    files('ernic-rig.c') + genh,
    build_by_default: false).extract_all_objects(recursive: false))
foreach t : ['ernic-rc-test', 'ernic-fatal-test', 'ernic-hardening-test',
             'ernic-ext-test', 'ernic-immdt-test', 'ernic-migrate-test',
             'ernic-fault-test', 'ernic-boards-test', 'ernic-srq-test',
             'ernic-ud-test', 'ernic-uc-test', 'ernic-atomic-test',
             'ernic-place-test', 'ernic-xrc-test', 'ernic-dbrec-test',
             'ernic-fuzz', 'ernic-soak', 'ernic-bench']
  qtests += {t: [ernic_rig]}
endforeach
# The benchmark measures the device's CRC-32 (ernic_crc32.c, zlib below),
# and the rc test checks each of its paths against zlib's.
qtests += {'ernic-bench': [ernic_rig, zlib]}
qtests += {'ernic-rc-test': [ernic_rig, zlib]}
# ernic: end of the test rig"
mb=$src/tests/qtest/meson.build
if [ "$(sed -n '/^# ernic: test rig/,/^# ernic: end of the test rig/p' \
        "$mb")" != "$rig_block" ]; then
    sed -i '/^# ernic: test rig/,/^# ernic: end of the test rig/d' "$mb"
    grep -qE '^qtest_executables = \{\}' "$mb" ||
        die "$mb: no line 'qtest_executables = {}'"
    awk -v block="$rig_block" \
        '!done && /^qtest_executables = \{\}/ { print block; print ""; done = 1 }
         { print }' "$mb" >"$mb.tmp"
    mv "$mb.tmp" "$mb"
fi

# The libqos driver (qtest/libqos/ernic.c, on the qos graph as igb's) and
# its example tests, run by qos-test (docs/qos.md).
add_line "$src/tests/qtest/libqos/meson.build" "        'ernic.c'," \
    "^        'e1000e.c',"
add_line "$src/tests/qtest/meson.build" "  'ernic-qos-test.c'," \
    "^  'igb-test.c',"

# QEMU's generic fuzzer (tests/qtest/fuzz/generic_fuzz.c) learns the ernic
# target: its MMIO and DMA fuzzed as igb's are (docs/fuzzing.md).
cfg=$src/tests/qtest/fuzz/generic_fuzz_configs.h
if ! grep -q '\.name = "ernic"' "$cfg"; then
    awk '!done && /\.name = "igb",/ {
             print "        .name = \"ernic\",";
             print "        .args = \"-M q35 -nodefaults \"";
             print "        \"-device ernic,netdev=net0 -netdev user,id=net0\",";
             print "        .objects = \"ernic*\",";
             print "    },{";
             done = 1 }
         { print }' "$cfg" >"$cfg.tmp"
    mv "$cfg.tmp" "$cfg"
fi
