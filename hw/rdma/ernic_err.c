/*
 * ERNIC error reporting: the error buffer (ERRBUFBA, PG332 v3.1 p.33),
 * where packets that fail the checks of Table 2-3 are logged, and the
 * incoming packet error status queue (IPKTERRQBA, p.17, Fig. 2-3), where
 * each QP that goes FATAL leaves one entry.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "ernic_core.h"
#include "trace.h"

/*
 * Log a failing packet in the error buffer: a 4-byte syndrome, then as
 * much of the frame as fits, headers first (PG332 p.16; Table 3-2 sizes
 * the entries at 256 bytes). A peer can make this happen for every frame,
 * so a failed write is traced, not logged.
 */
void ernic_err_log(ErnicCore *c, const uint8_t *buf, size_t len,
                   uint32_t synd)
{
    uint64_t base = ((uint64_t)ernic_gcsr(c, ERNIC_ERRBUFBAMSB) << 32) |
                    ernic_gcsr(c, ERNIC_ERRBUFBA);
    uint32_t sz = ernic_gcsr(c, ERNIC_ERRBUFSZ);
    uint32_t num = sz & 0xffff, size = sz >> 16;
    uint32_t wptr = ernic_gcsr(c, ERNIC_ERRBUFWPTR);
    uint64_t addr;
    uint8_t s[ERNIC_ERRBUF_SYND_SIZE];

    if (!num || size <= ERNIC_ERRBUF_SYND_SIZE) {
        return;
    }
    addr = base + (uint64_t)(wptr % num) * size;
    stl_le_p(s, synd);
    if (ernic_dma_write(c, addr, s, sizeof(s))) {
        ernic_dma_write(c, addr + sizeof(s), buf, MIN(len, size - sizeof(s)));
    }
    ernic_gcsr_set(c, ERNIC_ERRBUFWPTR, (wptr + 1) & 0xffff);
}

/*
 * A packet that failed validation (Table 2-3): it is not executed, whether
 * the reaction is a drop, a NAK or FATAL, so it counts as invalid and
 * dropped.
 */
void ernic_err_count_invalid(ErnicCore *c, uint32_t synd,
                             uint32_t qpn)
{
    trace_ernic_rx_invalid(qpn, synd);
    ernic_gcsr_count16(c, ERNIC_INALLDRPPKTCNT, true);
    ernic_gcsr_count16(c, ERNIC_ININVDUPCNT, false);
}

void ernic_err_rx(ErnicCore *c, const uint8_t *buf, size_t len,
                  uint32_t synd, uint32_t qpn)
{
    ernic_err_count_invalid(c, synd, qpn);
    if (ernic_gcsr(c, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_ERRBUF_EN) {
        ernic_err_log(c, buf, len, synd);
    }
    ernic_irq_raise(c, ERNIC_INT_PKT_VALIDATION_ERR);
}

/*
 * The status queue entry of QP @qpn gone FATAL with @code. The queue is
 * written circularly; overflow is software's problem (PG332 p.34). With
 * no entries configured nothing is written.
 */
void ernic_err_status(ErnicCore *c, uint32_t qpn, uint16_t code)
{
    uint64_t base = ((uint64_t)ernic_gcsr(c, ERNIC_IPKTERRQBAMSB) << 32) |
                    ernic_gcsr(c, ERNIC_IPKTERRQBA);
    uint32_t num = ernic_gcsr(c, ERNIC_IPKTERRQSZ) & 0xffff;
    uint32_t wptr = ernic_gcsr(c, ERNIC_IPKTERRQWPTR);
    uint8_t entry[ERNIC_IPKTERRQ_ENTRY_SIZE] = { 0 };
    uint64_t addr;

    if (!num) {
        return;
    }
    addr = base + (uint64_t)(wptr % num) * ERNIC_IPKTERRQ_ENTRY_SIZE;
    stl_le_p(entry, code | (qpn << ERNIC_IPKTERRQ_QPID_SHIFT));
    if (!ernic_dma_write(c, addr, entry, sizeof(entry))) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: status queue write to 0x%"
                      PRIx64 " failed\n", addr);
    }
    ernic_gcsr_set(c, ERNIC_IPKTERRQWPTR, (wptr % num + 1) % num);
}
