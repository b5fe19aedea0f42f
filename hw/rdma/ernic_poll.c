/*
 * ERNIC netdev polling (docs/engine.md, "Busy polling" and "Idle
 * polling"), with QEMU's optional net and CPU changes (ernic_poll.h).
 *
 * No function here releases the BQL or runs within a device access:
 * a spinning vCPU is only marked (cpu_spin_hint()), and its thread
 * polls later, outside the access, as a bottom half would run.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "hw/core/cpu.h"
#include "system/qtest.h"
#include "system/runstate.h"
#include "ernic_core.h"
#include "ernic_poll.h"
#include "trace.h"

#ifdef CONFIG_ERNIC_NET_POLL

/*
 * Idle polling: the main loop polls the backend while the guest idles,
 * for idle-poll microseconds after a frame that came alone
 * (ERNIC_POLL_IDLE_GAP after the one before it), unless a poll found
 * the guest running within ERNIC_POLL_IDLE_HOLD. A frame that then
 * comes is taken at once, not after the host has woken the main loop's
 * thread on an idle CPU (18-34 us measured on a nested host). Frames in
 * a stream, and a guest that works between them, are left to the main
 * loop's wake-ups: polling for them cost bandwidth (measured).
 */
#define ERNIC_POLL_IDLE_GAP     (10 * SCALE_US)
#define ERNIC_POLL_IDLE_HOLD    (1 * SCALE_MS)

bool ernic_poll_available(void)
{
    return true;
}

/* Frames the backend holds, taken now; true if any came. */
static bool ernic_poll_take(ErnicPoll *p)
{
    return qemu_net_busy_poll(p->nc);
}

/*
 * Whether every vCPU has halted: the guest waits for an interrupt. Under
 * KVM the kernel keeps halts to itself and this is never true.
 */
static bool ernic_poll_guest_idle(void)
{
    CPUState *cpu;

    CPU_FOREACH(cpu) {
        if (!qatomic_read(&cpu->halted)) {
            return false;
        }
    }
    return true;
}

/*
 * One poll per main-loop turn: the bottom half scheduled again keeps the
 * loop's ppoll() from sleeping, which still serves every other source
 * and lets the BQL go between turns.
 */
static void ernic_poll_idle_bh(void *opaque)
{
    ErnicPoll *p = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);

    if (!ernic_poll_guest_idle()) {
        p->idle_busy = now;
        return;
    }
    if (now > p->idle_end || !runstate_is_running() || !ernic_dma_idle()) {
        return;
    }
    if (ernic_poll_take(p)) {
        trace_ernic_idle_poll();
    }
    qemu_bh_schedule(p->idle_bh);
}

/*
 * A frame has come: open the window, or close it (see above). A frame for
 * a running guest opens none (the first poll would find it running) and
 * the hold starts at the next frame that finds the guest idle: a stream
 * to a working guest then reads no clock per frame.
 */
void ernic_poll_rx(ErnicPoll *p)
{
    int64_t now, gap;

    if (!p->idle_us || qtest_enabled()) {
        return;
    }
    if (!ernic_poll_guest_idle()) {
        p->idle_ran = true;
        p->idle_end = 0;
        return;
    }
    now = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
    if (p->idle_ran) {
        p->idle_ran = false;
        p->idle_busy = now;
    }
    gap = now - p->idle_rx;
    p->idle_rx = now;
    if (gap < ERNIC_POLL_IDLE_GAP ||
        now - p->idle_busy < ERNIC_POLL_IDLE_HOLD) {
        p->idle_end = 0;
        return;
    }
    p->idle_end = now + p->idle_us * SCALE_US;
    qemu_bh_schedule(p->idle_bh);
}

/*
 * An access made by a vCPU itself: not by qtest, whose accesses stay
 * deterministic, nor by an ernic's DMA (a doorbell served within a vCPU's
 * write reaching another ernic's registers; docs/security.md, rule 4).
 */
static bool ernic_poll_vcpu_access(void)
{
    return current_cpu && ernic_dma_idle();
}

/*
 * The end of a vCPU's access: the frames it made the device send go to
 * the backend now, not when the main loop next has a turn, which on a
 * busy host can be a time slice later.
 */
void ernic_poll_vcpu_sent(ErnicPoll *p)
{
    if (ernic_poll_vcpu_access()) {
        qemu_net_uncork(p->nc);
    }
}

#ifdef CONFIG_ERNIC_SPIN_HINT
/*
 * The spinning vCPU's thread, out of its access and holding the BQL:
 * frames the backend holds are taken here, and the vCPU keeps its host
 * CPU; else it gives it to the main loop (cpu_spin_relax()).
 */
static bool ernic_poll_spin(CPUSpinPoller *poller)
{
    ErnicPoll *p = container_of(poller, ErnicPoll, spin);

    if (!p->busy || !ernic_poll_take(p)) {
        return false;
    }
    trace_ernic_busy_poll();
    qemu_net_uncork(p->nc);
    return true;
}
#endif

/*
 * A vCPU spinning on a status register (RecoNIC's poll_cq_cidb() reads
 * CQHEADi in a tight loop): QEMU ends its translation block, takes what
 * the backend holds for the device and, finding nothing, gives its host
 * CPU away, as KVM's pause-loop exiting does for a spinning guest.
 */
bool ernic_poll_vcpu_watched(void)
{
#ifdef CONFIG_ERNIC_SPIN_HINT
    return ernic_poll_vcpu_access();
#else
    return false;
#endif
}

void ernic_poll_vcpu_spins(ErnicPoll *p)
{
#ifdef CONFIG_ERNIC_SPIN_HINT
    cpu_spin_hint(current_cpu);
#endif
}

void ernic_poll_realize(ErnicPoll *p, NetClientState *nc)
{
    p->nc = nc;
    /*
     * Unguarded: the bottom half touches no register and no guest memory;
     * the frames it takes are delivered through the net layer, which
     * engages the device's guard.
     */
    p->idle_bh = qemu_bh_new(ernic_poll_idle_bh, p);
#ifdef CONFIG_ERNIC_SPIN_HINT
    p->spin.poll = ernic_poll_spin;
    cpu_spin_poller_add(&p->spin);
#endif
}

void ernic_poll_unrealize(ErnicPoll *p)
{
#ifdef CONFIG_ERNIC_SPIN_HINT
    cpu_spin_poller_del(&p->spin);
#endif
    qemu_bh_delete(p->idle_bh);
}

#else /* !CONFIG_ERNIC_NET_POLL: QEMU as released, nothing to poll with */

bool ernic_poll_available(void)
{
    return false;
}

void ernic_poll_realize(ErnicPoll *p, NetClientState *nc)
{
    p->nc = nc;
}

void ernic_poll_unrealize(ErnicPoll *p)
{
}

void ernic_poll_vcpu_sent(ErnicPoll *p)
{
}

bool ernic_poll_vcpu_watched(void)
{
    return false;
}

void ernic_poll_vcpu_spins(ErnicPoll *p)
{
}

void ernic_poll_rx(ErnicPoll *p)
{
}

#endif
