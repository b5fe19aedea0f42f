# Device set of the project's QEMU build (configure
# --without-default-devices --with-devices-x86_64=ernic). Kconfig adds what
# these select.
CONFIG_Q35=y
CONFIG_PCIE_PORT=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_E1000E_PCI_EXPRESS=y
CONFIG_ERNIC=y
# The Intel IOMMU, to test the guest driver with translated DMA
# (ERNIC_GUEST_IOMMU=1, scripts/guest-lib.sh).
CONFIG_VTD=y
