/*
 * ERNIC netdev polling: a spinning vCPU and an idle guest take the
 * backend's frames without waiting for the main loop to wake
 * (docs/engine.md, "Busy polling" and "Idle polling").
 *
 * These need two optional QEMU core changes (patches/qemu/): the net
 * layer's qemu_net_busy_poll()/qemu_net_uncork() and the CPU layer's
 * cpu_spin_hint(). hw/rdma/meson.build finds them in the tree it is
 * overlaid onto; without them every function here does nothing and the
 * device behaves as on any other QEMU.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_ERNIC_POLL_H
#define HW_RDMA_ERNIC_POLL_H

#include "net/net.h"
#include "hw/rdma/ernic-config.h"
#ifdef CONFIG_ERNIC_SPIN_HINT
#include "hw/core/cpu.h"
#endif

#define ERNIC_IDLE_POLL_MAX_US  1000

typedef struct ErnicPoll {
    NetClientState *nc;
    bool busy;                  /* property busy-poll */
    uint32_t idle_us;           /* property idle-poll */
    QEMUBH *idle_bh;
    int64_t idle_end;
    int64_t idle_busy;
    int64_t idle_rx;
    bool idle_ran;
#ifdef CONFIG_ERNIC_SPIN_HINT
    CPUSpinPoller spin;
#endif
} ErnicPoll;

/* Whether this build has the QEMU changes polling needs. */
bool ernic_poll_available(void);
void ernic_poll_realize(ErnicPoll *p, NetClientState *nc);
void ernic_poll_unrealize(ErnicPoll *p);
/* A vCPU's access is over: what it made the device send goes out now. */
void ernic_poll_vcpu_sent(ErnicPoll *p);
/*
 * Whether a read is to be watched for a spin: a vCPU's, where QEMU has
 * the spin hint (the caller's check for a spin is work of its own).
 */
bool ernic_poll_vcpu_watched(void);
/* A vCPU's read found a status register unchanged: it spins. */
void ernic_poll_vcpu_spins(ErnicPoll *p);
/* A frame came in: perhaps poll for the next while the guest idles. */
void ernic_poll_rx(ErnicPoll *p);

#endif
