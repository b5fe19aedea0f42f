/*
 * QEMU model of the Xilinx/AMD ERNIC RoCEv2 RDMA NIC (PG332 v3.1) as a PCIe
 * endpoint: QOM type, properties, BARs, MSI-X/MSI, the NIC backend and
 * reset. The device itself lives in ernic_core.c and its companions.
 *
 * Usage: -device ernic,netdev=<id>[,mac=<addr>][,num-qp=<8..256>]
 *                      [,ext=on|off][,mr-entries=<256..65536>]
 *                      [,layout=ernic|reconic][,card-mem=<size>]
 *                      [,card-memdev=<memory backend id>]
 *
 * ext=off removes ERNIC-X, the verbs extension (docs/extension.md): no
 * discovery capability, no extension registers; the bare PG332 device.
 *
 * layout=ernic (default):
 * BAR0  256 KiB ERNIC register window (PG332 Table 2-7)
 * BAR2  MSI-X table and PBA; vector 0 is the ERNIC interrupt, vector 1
 *       the Ethernet path's
 * BAR3  1 MiB, with ERNIC-X: the doorbell pages of user QPs, 4 KiB each
 * BAR4  Ethernet path for non-RoCE frames (docs/engine.md)
 *
 * layout=reconic, a RecoNIC card (docs/boards.md; device ID 0x903f):
 * BAR0  MSI-X table and PBA
 * BAR1  Ethernet path
 * BAR2  4 MiB: ERNIC at 0x40000, QDMA bridge windows at 0x16420
 * BAR4  card memory (card-mem, default 64 MiB, preallocated; or the
 *       memory backend card-memdev), which the engine reaches at
 *       0xa350000000000000
 *
 * Documentation: docs/user-guide.md, docs/registers.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/module.h"
#include "qemu/range.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "ernic_qemu.h"
#include "migration/vmstate.h"
#include "net/net.h"
#include "qom/object.h"
#include "system/hostmem.h"
#include "system/kvm.h"
#include "ernic_core.h"
#include "ernic_poll.h"
#include "trace.h"

#define TYPE_ERNIC "ernic"
OBJECT_DECLARE_SIMPLE_TYPE(ErnicState, ERNIC)

struct ErnicState {
    PCIDevice parent_obj;

    NICState *nic;
    NICConf conf;
    uint32_t num_qp;
    bool ext;
    uint32_t mr_entries;
    char *layout;
    uint64_t card_mem;
    HostMemoryBackend *card_memdev;
    bool reconic;
    OnOffAuto tx_map;
    OnOffAuto db_eventfd;
    ErnicPoll poll;

    MemoryRegion regs;
    MemoryRegion msix;
    MemoryRegion eth;
    MemoryRegion udb;

    ErnicCore core;
    ErnicReconic rn;
};

static uint64_t ernic_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    ErnicState *s = opaque;
    uint64_t val = ernic_core_read(&s->core, addr, size);

    if (ernic_poll_vcpu_watched() &&
        ernic_core_spinning(&s->core, addr, val)) {
        ernic_poll_vcpu_spins(&s->poll);
    }
    return val;
}

/*
 * Every handler that can start device work counts itself as ernic code on
 * the stack (ernic_dma_enter()): the device's DMA can reach another ernic's
 * registers. Reads start nothing.
 */
static void ernic_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    ErnicState *s = opaque;

    ernic_dma_enter();
    ernic_core_write(&s->core, addr, val, size);
    ernic_dma_leave();
    ernic_poll_vcpu_sent(&s->poll);
}

/*
 * Every access size reaches the core, which defines what odd sizes and
 * misaligned accesses do (read 0, write ignored).
 */
#define ERNIC_MMIO_OPS(rd, wr) {                                \
    .read = (rd),                                               \
    .write = (wr),                                              \
    .endianness = DEVICE_LITTLE_ENDIAN,                         \
    .valid = {                                                  \
        .min_access_size = 1,                                   \
        .max_access_size = 8,                                   \
        .unaligned = true,                                      \
    },                                                          \
    .impl = {                                                   \
        .min_access_size = 1,                                   \
        .max_access_size = 8,                                   \
        .unaligned = true,                                      \
    },                                                          \
}

static const MemoryRegionOps ernic_mmio_ops =
    ERNIC_MMIO_OPS(ernic_mmio_read, ernic_mmio_write);

static uint64_t ernic_eth_mmio_read(void *opaque, hwaddr addr,
                                    unsigned size)
{
    ErnicState *s = opaque;

    return ernic_eth_read(&s->core, addr, size);
}

static void ernic_eth_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
    ErnicState *s = opaque;

    ernic_dma_enter();
    ernic_eth_write(&s->core, addr, val, size);
    ernic_dma_leave();
    ernic_poll_vcpu_sent(&s->poll);
}

static const MemoryRegionOps ernic_eth_ops =
    ERNIC_MMIO_OPS(ernic_eth_mmio_read, ernic_eth_mmio_write);

static uint64_t ernic_udb_mmio_read(void *opaque, hwaddr addr,
                                    unsigned size)
{
    ErnicState *s = opaque;
    uint64_t val = ernic_udb_read(&s->core, addr, size);

    /* A process polls its QP's page as a driver polls BAR0 (ERNIC-X UPOLL) */
    if (size == 4 && ernic_poll_vcpu_watched() &&
        ernic_udb_spinning(&s->core, addr, val)) {
        ernic_poll_vcpu_spins(&s->poll);
    }
    return val;
}

static void ernic_udb_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
    ErnicState *s = opaque;

    ernic_dma_enter();
    ernic_udb_write(&s->core, addr, val, size);
    ernic_dma_leave();
    ernic_poll_vcpu_sent(&s->poll);
}

static const MemoryRegionOps ernic_udb_ops =
    ERNIC_MMIO_OPS(ernic_udb_mmio_read, ernic_udb_mmio_write);

static bool ernic_nc_can_receive(NetClientState *nc)
{
    ErnicState *s = qemu_get_nic_opaque(nc);

    /* Frames are taken while the function may master the bus. */
    return s->parent_obj.config[PCI_COMMAND] & PCI_COMMAND_MASTER;
}

/*
 * Frames a backend queued while bus mastering was off are delivered once
 * it is on; without this a backend such as -netdev stream would stay
 * paused for good (as e1000's PCI config hook does it).
 */
static void ernic_write_config(PCIDevice *pci_dev, uint32_t addr,
                               uint32_t val, int len)
{
    ErnicState *s = ERNIC(pci_dev);

    pci_default_write_config(pci_dev, addr, val, len);
    if (range_covers_byte(addr, len, PCI_COMMAND) &&
        (pci_dev->config[PCI_COMMAND] & PCI_COMMAND_MASTER)) {
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
}

static ssize_t ernic_nc_receive(NetClientState *nc, const uint8_t *buf,
                                size_t size)
{
    ErnicState *s = qemu_get_nic_opaque(nc);

    ernic_dma_enter();
    ernic_link_receive(&s->core, buf, size);
    ernic_dma_leave();
    ernic_poll_rx(&s->poll);
    return size;
}

static void ernic_tx_done(NetClientState *nc, ssize_t len)
{
    ErnicState *s = qemu_get_nic_opaque(nc);

    ernic_link_resume(&s->core);
}

static bool ernic_tx(void *opaque, const struct iovec *iov, unsigned n)
{
    ErnicState *s = opaque;

    return qemu_sendv_packet_async(qemu_get_queue(s->nic), iov, n,
                                   ernic_tx_done) != 0;
}

/*
 * Whether payload is sent in place (docs/engine.md, "Payload in place"):
 * by default only to a backend that takes a frame's pieces as they are
 * (tap, stream, l2tpv3, netmap). Any other, a hub included, would copy
 * them into one buffer for each receiver, which costs more than the
 * copy the mapping saves.
 */
static bool ernic_tx_map(ErnicState *s)
{
    NetClientState *peer = qemu_get_queue(s->nic)->peer;

    if (s->tx_map != ON_OFF_AUTO_AUTO) {
        return s->tx_map == ON_OFF_AUTO_ON;
    }
    return peer && peer->info->receive_iov &&
           peer->info->type != NET_CLIENT_DRIVER_HUBPORT;
}

/*
 * Whether the doorbells of QPs with ERNIC-X doorbell records are
 * ioeventfds (docs/extension.md, "Doorbell records"): by default only
 * under KVM, where a vCPU's write then costs no exit to QEMU. Under TCG
 * a doorbell served within its MMIO write sends sooner (docs/engine.md,
 * "Doorbells"); there, on serves the eventfd in software, for tests.
 */
static bool ernic_db_eventfd(ErnicState *s)
{
    if (s->db_eventfd != ON_OFF_AUTO_AUTO) {
        return s->db_eventfd == ON_OFF_AUTO_ON;
    }
    return s->ext && kvm_enabled();
}

/* QMP/HMP set_link: the board's MAC reports it (BAR4 STATUS, INTSTS[2]). */
static void ernic_nc_link_status_changed(NetClientState *nc)
{
    ErnicState *s = qemu_get_nic_opaque(nc);

    ernic_eth_link(&s->core, !nc->link_down);
}

static NetClientInfo ernic_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = ernic_nc_can_receive,
    .receive = ernic_nc_receive,
    .link_status_changed = ernic_nc_link_status_changed,
};

/*
 * ERNIC-X discovery (docs/extension.md, "Discovery"): a vendor-specific
 * capability naming the extension's version, registers and features.
 */
static bool ernic_ext_cap_init(PCIDevice *pci_dev, Error **errp)
{
    ErnicState *s = ERNIC(pci_dev);
    uint32_t loc = s->reconic ?
        (ERNIC_RN_ERNIC_BASE + ERNIC_EXT_BASE) | ERNIC_RN_BAR_SHELL :
        ERNIC_EXT_BASE | ERNIC_BAR_REGS;
    int off = pci_add_capability(pci_dev, PCI_CAP_ID_VNDR, 0x40,
                                 ERNIC_EXT_CAP_LEN, errp);
    uint8_t *cap;

    if (off < 0) {
        return false;
    }
    cap = pci_dev->config + off;
    cap[PCI_CAP_FLAGS] = ERNIC_EXT_CAP_LEN;
    cap[ERNIC_EXT_CAP_VERSION] = ERNIC_EXT_VERSION;
    pci_set_long(cap + ERNIC_EXT_CAP_LOC, loc);
    pci_set_long(cap + ERNIC_EXT_CAP_FEAT, ernic_ext_features(s->reconic));
    pci_set_long(cap + ERNIC_EXT_CAP_SIZE, ERNIC_EXT_SIZE);
    return true;
}

/*
 * card-memdev: a memory backend not in use elsewhere (as ivshmem's memdev),
 * whose size stands for card-mem.
 */
static bool ernic_card_memdev_check(ErnicState *s, Error **errp)
{
    uint64_t size;

    if (host_memory_backend_is_mapped(s->card_memdev)) {
        error_setg(errp, "ernic: card-memdev '%s' is already in use",
                   object_get_canonical_path_component(
                       OBJECT(s->card_memdev)));
        return false;
    }
    size = memory_region_size(host_memory_backend_get_memory(s->card_memdev));
    if (s->card_mem && s->card_mem != size) {
        error_setg(errp, "ernic: card-mem (%" PRIu64 ") differs from the "
                   "size of card-memdev (%" PRIu64 ")", s->card_mem, size);
        return false;
    }
    s->card_mem = size;
    return true;
}

/*
 * layout: "ernic" (the default) or "reconic"; card-mem and card-memdev
 * belong to the latter. Card memory is a BAR, so its size is a power of
 * two.
 */
static bool ernic_layout_check(ErnicState *s, Error **errp)
{
    if (!s->layout || !strcmp(s->layout, "ernic")) {
        if (s->card_mem || s->card_memdev) {
            error_setg(errp, "ernic: %s needs layout=reconic",
                       s->card_mem ? "card-mem" : "card-memdev");
            return false;
        }
        return true;
    }
    if (strcmp(s->layout, "reconic")) {
        error_setg(errp, "ernic: layout must be ernic or reconic, not '%s'",
                   s->layout);
        return false;
    }
    s->reconic = true;
    if (s->card_memdev && !ernic_card_memdev_check(s, errp)) {
        return false;
    }
    if (!s->card_mem) {
        s->card_mem = ERNIC_RN_CARD_DEFAULT;
    }
    if (!is_power_of_2(s->card_mem) || s->card_mem < ERNIC_RN_CARD_MIN ||
        s->card_mem > ERNIC_RN_CARD_MAX) {
        error_setg(errp, "ernic: card-mem must be a power of two from 1M to "
                   "4G, not %" PRIu64, s->card_mem);
        return false;
    }
    return true;
}

/* RecoNIC's BARs (docs/boards.md), under its QDMA PF's device ID. */
static bool ernic_reconic_bars(ErnicState *s, Error **errp)
{
    PCIDevice *pci_dev = PCI_DEVICE(s);
    MemoryRegion *card = NULL;

    if (s->card_memdev) {
        card = host_memory_backend_get_memory(s->card_memdev);
    }
    if (!ernic_reconic_init(&s->rn, &s->core, OBJECT(s), &s->regs, card,
                            s->card_mem, errp)) {
        return false;
    }
    pci_config_set_device_id(pci_dev->config, ERNIC_RN_PCI_DEVICE_ID);
    pci_set_word(pci_dev->config + PCI_SUBSYSTEM_ID, ERNIC_RN_PCI_DEVICE_ID);
    pci_register_bar(pci_dev, ERNIC_RN_BAR_MSIX,
                     PCI_BASE_ADDRESS_SPACE_MEMORY, &s->msix);
    pci_register_bar(pci_dev, ERNIC_RN_BAR_ETH,
                     PCI_BASE_ADDRESS_SPACE_MEMORY, &s->eth);
    pci_register_bar(pci_dev, ERNIC_RN_BAR_SHELL,
                     PCI_BASE_ADDRESS_SPACE_MEMORY, &s->rn.bar);
    pci_register_bar(pci_dev, ERNIC_RN_BAR_CARD,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, s->rn.card);
    return true;
}

/* The properties, checked before anything is built. */
static bool ernic_check_props(ErnicState *s, Error **errp)
{
    if (s->num_qp < ERNIC_NUM_QP_MIN || s->num_qp > ERNIC_NUM_QP_MAX) {
        error_setg(errp, "ernic: num-qp must be between %d and %d "
                   "(PG332 C_NUM_QP), not %" PRIu32,
                   ERNIC_NUM_QP_MIN, ERNIC_NUM_QP_MAX, s->num_qp);
        return false;
    }
    if (s->ext && (s->mr_entries < ERNIC_EXT_MR_MIN ||
                   s->mr_entries > ERNIC_EXT_MR_MAX)) {
        error_setg(errp, "ernic: mr-entries must be between %d and %d, "
                   "not %" PRIu32, ERNIC_EXT_MR_MIN, ERNIC_EXT_MR_MAX,
                   s->mr_entries);
        return false;
    }
    if (s->poll.idle_us > ERNIC_IDLE_POLL_MAX_US) {
        error_setg(errp, "ernic: idle-poll must be at most %d (microseconds), "
                   "not %" PRIu32, ERNIC_IDLE_POLL_MAX_US, s->poll.idle_us);
        return false;
    }
    if (!s->ext && s->db_eventfd == ON_OFF_AUTO_ON) {
        error_setg(errp, "ernic: db-eventfd=on needs ext=on (doorbell "
                   "records are an ERNIC-X feature)");
        return false;
    }
    return ernic_layout_check(s, errp);
}

/* The BARs of the layout (the file's header comment lists them). */
static bool ernic_init_bars(ErnicState *s, Error **errp)
{
    PCIDevice *pci_dev = PCI_DEVICE(s);

    memory_region_init_io(&s->regs, OBJECT(s), &ernic_mmio_ops, s,
                          "ernic-regs", ERNIC_REG_WINDOW_SIZE);
    memory_region_init(&s->msix, OBJECT(s), "ernic-msix", 0x1000);
    memory_region_init_io(&s->eth, OBJECT(s), &ernic_eth_ops, s,
                          "ernic-eth", ERNIC_ETH_BAR_SIZE);
    if (s->reconic) {
        return ernic_reconic_bars(s, errp);
    }
    pci_register_bar(pci_dev, ERNIC_BAR_REGS,
                     PCI_BASE_ADDRESS_SPACE_MEMORY, &s->regs);
    pci_register_bar(pci_dev, ERNIC_BAR_MSIX,
                     PCI_BASE_ADDRESS_SPACE_MEMORY, &s->msix);
    pci_register_bar(pci_dev, ERNIC_BAR_ETH,
                     PCI_BASE_ADDRESS_SPACE_MEMORY, &s->eth);
    if (s->ext) {
        /* ERNIC-X doorbell pages of user QPs (docs/extension.md). */
        memory_region_init_io(&s->udb, OBJECT(s), &ernic_udb_ops, s,
                              "ernic-udb", ERNIC_UDB_BAR_SIZE);
        pci_register_bar(pci_dev, ERNIC_BAR_UDB,
                         PCI_BASE_ADDRESS_SPACE_MEMORY, &s->udb);
    }
    return true;
}

/* Capabilities, in reverse order of the list they form. */
static bool ernic_init_caps(ErnicState *s, Error **errp)
{
    PCIDevice *pci_dev = PCI_DEVICE(s);
    int ret, msix_bar = s->reconic ? ERNIC_RN_BAR_MSIX : ERNIC_BAR_MSIX;

    ret = pcie_endpoint_cap_init(pci_dev, 0xa0);
    if (ret < 0) {
        error_setg(errp, "ernic: cannot add the PCIe capability");
        return false;
    }
    ret = msix_init(pci_dev, ERNIC_MSIX_VECTORS, &s->msix, msix_bar, 0,
                    &s->msix, msix_bar, 0x800, 0x70, errp);
    if (ret < 0) {
        return false;
    }
    for (int i = 0; i < ERNIC_MSIX_VECTORS; i++) {
        msix_vector_use(pci_dev, i);
    }
    /*
     * MSI is the fallback when the guest does not enable MSI-X; a machine
     * without working MSI keeps MSI-X and INTx.
     */
    ret = msi_init(pci_dev, 0x50, 1, true, false, NULL);
    if (ret < 0 && ret != -ENOTSUP) {
        error_setg(errp, "ernic: cannot add the MSI capability");
        msix_uninit(pci_dev, &s->msix, &s->msix);
        return false;
    }
    if (s->ext && !ernic_ext_cap_init(pci_dev, errp)) {
        msi_uninit(pci_dev);
        msix_uninit(pci_dev, &s->msix, &s->msix);
        return false;
    }
    return true;
}

static void ernic_realize(PCIDevice *pci_dev, Error **errp)
{
    ErnicState *s = ERNIC(pci_dev);
    DeviceState *dev = DEVICE(pci_dev);

    if (!ernic_check_props(s, errp)) {
        return;
    }
    pci_dev->config[PCI_INTERRUPT_PIN] = 1;
    if (!ernic_init_bars(s, errp) || !ernic_init_caps(s, errp)) {
        return;
    }
    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->nic = qemu_new_nic(&ernic_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);

    ernic_ext_realize(&s->core, s->ext ? s->mr_entries : 0);
    ernic_core_realize(&s->core, pci_dev, s->num_qp, s->conf.macaddr.a,
                       ernic_tx, s);
    s->core.link_down = qemu_get_queue(s->nic)->link_down;
    ernic_poll_realize(&s->poll, qemu_get_queue(s->nic));
    s->core.tx_map = ernic_tx_map(s);
    s->core.db_eventfd = ernic_db_eventfd(s);
    s->core.db_regs = &s->regs;
    s->core.db_udb = s->ext && !s->reconic ? &s->udb : NULL;
    if (s->card_memdev) {
        host_memory_backend_set_mapped(s->card_memdev, true);
    }
}

static void ernic_exit(PCIDevice *pci_dev)
{
    ErnicState *s = ERNIC(pci_dev);

    ernic_poll_unrealize(&s->poll);
    ernic_core_unrealize(&s->core);
    ernic_ext_unrealize(&s->core);
    qemu_del_nic(s->nic);
    msi_uninit(pci_dev);
    msix_unuse_all_vectors(pci_dev);
    msix_uninit(pci_dev, &s->msix, &s->msix);
    if (s->reconic) {
        ernic_reconic_exit(&s->rn, DEVICE(s));
    }
    if (s->card_memdev) {
        host_memory_backend_set_mapped(s->card_memdev, false);
    }
}

static void ernic_reset_hold(Object *obj, ResetType type)
{
    ErnicState *s = ERNIC(obj);

    ernic_core_reset(&s->core);
    ernic_reconic_reset(&s->rn);
}

/*
 * Migration (docs/migration.md): PCI config space (MSI and INTx state
 * with it), the MSI-X table and PBA, and the core with its engine.
 */
static bool ernic_reconic_needed(void *opaque)
{
    return ((ErnicState *)opaque)->reconic;
}

/* The card memory itself is a RAM block and migrates as guest RAM does. */
static const VMStateDescription ernic_vmstate_rn = {
    .name = "ernic/layout-reconic",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_reconic_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(rn, ErnicState, 1, ernic_vmstate_reconic,
                       ErnicReconic),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription ernic_vmstate = {
    .name = "ernic",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, ErnicState),
        VMSTATE_MSIX(parent_obj, ErnicState),
        VMSTATE_STRUCT(core, ErnicState, 1, ernic_vmstate_core, ErnicCore),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &ernic_vmstate_rn,
        NULL
    },
};

static const Property ernic_properties[] = {
    DEFINE_NIC_PROPERTIES(ErnicState, conf),
    DEFINE_PROP_UINT32("num-qp", ErnicState, num_qp, ERNIC_NUM_QP_DEFAULT),
    DEFINE_PROP_BOOL("ext", ErnicState, ext, true),
    DEFINE_PROP_UINT32("mr-entries", ErnicState, mr_entries,
                       ERNIC_EXT_MR_DEFAULT),
    DEFINE_PROP_STRING("layout", ErnicState, layout),
    DEFINE_PROP_SIZE("card-mem", ErnicState, card_mem, 0),
    DEFINE_PROP_LINK("card-memdev", ErnicState, card_memdev,
                     TYPE_MEMORY_BACKEND, HostMemoryBackend *),
    /* Payload sent in place, not copied (docs/engine.md). */
    DEFINE_PROP_ON_OFF_AUTO("x-tx-map", ErnicState, tx_map,
                            ON_OFF_AUTO_AUTO),
    /* ERNIC-X doorbell records through ioeventfds (docs/extension.md). */
    DEFINE_PROP_ON_OFF_AUTO("db-eventfd", ErnicState, db_eventfd,
                            ON_OFF_AUTO_AUTO),
    /* A spinning vCPU reads the backend's frames (docs/engine.md). */
    DEFINE_PROP_BOOL("busy-poll", ErnicState, poll.busy, true),
    /* The main loop polls the backend while the guest idles (same). */
    DEFINE_PROP_UINT32("idle-poll", ErnicState, poll.idle_us, 50),
};

/*
 * Fault injection (docs/debugging.md): host-side QOM properties, which
 * the guest cannot reach. "fault" takes a command and reads back what is
 * armed; "fault-stats" counts what was injected.
 */
static char *ernic_get_fault(Object *obj, Error **errp)
{
    return ernic_fault_describe(&ERNIC(obj)->core);
}

static void ernic_set_fault(Object *obj, const char *cmd, Error **errp)
{
    ernic_fault_command(&ERNIC(obj)->core, cmd, errp);
}

static void ernic_get_fault_stats(Object *obj, Visitor *v, const char *name,
                                  void *opaque, Error **errp)
{
    ernic_fault_visit_stats(&ERNIC(obj)->core, v, name, errp);
}

static void ernic_class_init(ObjectClass *klass, ErnicClassData *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = ernic_realize;
    k->config_write = ernic_write_config;
    k->exit = ernic_exit;
    k->vendor_id = ERNIC_PCI_VENDOR_ID;
    k->device_id = ERNIC_PCI_DEVICE_ID;
    k->revision = ERNIC_PCI_REVISION;
    k->class_id = PCI_CLASS_NETWORK_ETHERNET;
    k->subsystem_vendor_id = ERNIC_PCI_VENDOR_ID;
    k->subsystem_id = ERNIC_PCI_DEVICE_ID;

    rc->phases.hold = ernic_reset_hold;

    dc->desc = "Xilinx ERNIC RoCEv2 RDMA NIC (PG332 v3.1)";
    dc->vmsd = &ernic_vmstate;
    device_class_set_props(dc, ernic_properties);
    object_class_property_set_description(klass, "num-qp",
        "QPs of the device, QP1 included (PG332 C_NUM_QP, 8..256)");
    object_class_property_set_description(klass, "ext",
        "ERNIC-X, the verbs extension (docs/extension.md); off: the bare "
        "PG332 device");
    object_class_property_set_description(klass, "mr-entries",
        "entries of ERNIC-X's MR table (256..65536)");
    object_class_property_set_description(klass, "layout",
        "ernic (PG332 BARs) or reconic (a RecoNIC card, docs/boards.md)");
    object_class_property_set_description(klass, "card-mem",
        "layout=reconic: card memory, a power of two from 1M to 4G "
        "(default 64M, preallocated)");
    object_class_property_set_description(klass, "card-memdev",
        "layout=reconic: a memory backend as card memory, instead of "
        "card-mem");
    object_class_property_set_description(klass, "db-eventfd",
        "ERNIC-X doorbell records: SQ doorbells as ioeventfds (auto: "
        "under KVM; docs/extension.md)");
    object_class_property_set_description(klass, "busy-poll",
        "a vCPU spinning on a status register takes the netdev's frames "
        "(needs the optional QEMU patches; docs/engine.md)");
    object_class_property_set_description(klass, "idle-poll",
        "microseconds the main loop polls the netdev while the guest "
        "idles, 0..1000 (needs the optional QEMU patches)");
    object_class_property_add_str(klass, "fault", ernic_get_fault,
                                  ernic_set_fault);
    object_class_property_set_description(klass, "fault",
        "fault injection command (docs/debugging.md); reads what is armed");
    object_class_property_add(klass, "fault-stats", "ErnicFaultStats",
                              ernic_get_fault_stats, NULL, NULL, NULL);
    object_class_property_set_description(klass, "fault-stats",
        "counts of the faults injected");
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo ernic_info = {
    .name = TYPE_ERNIC,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(ErnicState),
    .class_init = ernic_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void ernic_register_types(void)
{
    type_register_static(&ernic_info);
}

type_init(ernic_register_types)
