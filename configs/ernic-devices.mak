# Device set of the project's QEMU build (configure
# --without-default-devices --with-devices-x86_64=ernic). Kconfig adds what
# these select.
CONFIG_Q35=y
# The i440FX machine "pc": libqos's x86_64 qos graph has only it, and
# qos-test runs the libqos driver's examples there (docs/qos.md).
CONFIG_I440FX=y
CONFIG_PCIE_PORT=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_E1000E_PCI_EXPRESS=y
CONFIG_ERNIC=y
# The Intel IOMMU, to test the guest driver with translated DMA
# (ERNIC_GUEST_IOMMU=1, scripts/guest-lib.sh).
CONFIG_VTD=y
# QEMU 10.2's x86 ACPI tables call into the CXL host code, whose stub
# lacks cxl_fmws_get_all_sorted(): without CXL, qemu-system-x86_64 of
# the newest QEMU does not link (README, "Which QEMU"). CXL needs PXB,
# and its mailbox code the memory device.
CONFIG_PXB=y
CONFIG_CXL=y
CONFIG_CXL_MEM_DEVICE=y
