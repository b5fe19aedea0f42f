#!/bin/sh
# /init of the enumeration demo guest (busybox). Lists the PCI functions,
# finds the ernic device by its PCI ID and reads and writes a few of its
# PG332 registers through /dev/mem. Builtins only in loops: no fork per
# sysfs entry.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

echo "guest: PCI functions"
found=
for d in /sys/bus/pci/devices/*; do
    read -r ven <"$d/vendor"
    read -r dev <"$d/device"
    read -r cls <"$d/class"
    echo "guest:   ${d##*/} ${ven#0x}:${dev#0x} class ${cls#0x}"
    [ "$ven:$dev" = "0x10ee:0xe332" ] && found=$d
done

if [ -z "$found" ]; then
    echo "guest: RESULT FAIL no ernic (10ee:e332) device"
    poweroff -f
fi
echo "guest: ernic found: ${found##*/} (10ee:e332, Xilinx ERNIC PG332 v3.1)"
echo 1 >"$found/enable"
read -r bar0 _ <"$found/resource"
echo "guest: BAR0 at $bar0 (256 KiB register window)"

reg() { devmem $((bar0 + $1)) 32; }
thr=$(reg 0x20008)
msb=$(reg 0x20014)
lsb=$(reg 0x20010)
echo "guest: XRNIC_BUF_THRESHOLD_ROCE = $thr (PG332 reset value 0x965A)"
echo "guest: MACXADDMSB/LSB = $msb $lsb"
devmem $((bar0 + 0x20000)) 32 0x8cd10000
conf=$(reg 0x20000)
echo "guest: XRNICCONF <- 0x8CD10000 (UDP source port 0x8CD1), reads $conf"
devmem $((bar0 + 0x20300 + 0x48)) 32 0x00123456
dqp=$(reg 0x20348)
echo "guest: DESTQPCONF2 <- 0x123456, reads $dqp"

if [ "$thr" = 0x0000965A ] && [ "$conf" = 0x8CD10000 ] && [ "$dqp" = 0x00123456 ]; then
    echo "guest: RESULT PASS"
else
    echo "guest: RESULT FAIL register values"
fi
poweroff -f
