/*
 * ERNIC memory regions: R_Key lookup, PD/access/bounds checks, and DMA
 * to and from a region (as rxe_mr.c is to rxe). Every access the device
 * makes through a key goes through here.
 *
 * Two tables: PG332's PD/MR table (256 entries of registers, p.31,
 * Fig. 2-9; each region one physically contiguous buffer), and, once a
 * driver turns on ERNIC-X's MR feature, the extended table of
 * ernic_ext.c whose regions are page lists (docs/extension.md, "Keys").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ernic_core.h"
#include "trace.h"

/* Both failing is its own FATAL code (PG332 Table 2-4). */
static uint16_t ernic_mr_code(bool key_bad, bool range_bad)
{
    if (key_bad) {
        return range_bad ? ERNIC_FATAL_RKEY_AND_LENGTH : ERNIC_FATAL_RKEY;
    }
    return range_bad ? ERNIC_FATAL_RETH_LENGTH : 0;
}

/* [va, va + len) lies in [base, base + mrlen); *off is va - base. */
static bool ernic_mr_in_range(uint64_t va, uint64_t len, uint64_t base,
                              uint64_t mrlen, uint64_t *off)
{
    *off = va - base;
    return va >= base && *off <= mrlen && len <= mrlen - *off;
}

/*
 * PG332's PD/MR table: the R_Key's upper bits index the table, its low
 * byte must equal BUFRKEY, the PD must be the QP's and the access type
 * must allow the operation (FATAL 0x15); the range must lie in the
 * region (0x16); both failing is 0x17.
 */
static uint16_t ernic_mr_check_pdt(ErnicCore *c, uint32_t qpn, uint32_t rkey,
                                   uint64_t va, uint64_t len, bool write,
                                   ErnicMrAccess *a)
{
    uint32_t idx = rkey >> 8;
    const uint32_t *mr;
    uint64_t off;
    bool key_bad, range_bad;

    if (idx >= ERNIC_PDT_ENTRIES) {
        return ERNIC_FATAL_RKEY;
    }
    mr = c->pdt[idx];
    key_bad = (mr[ERNIC_W(ERNIC_BUFRKEY)] & 0xff) != (rkey & 0xff) ||
              (mr[ERNIC_W(ERNIC_PDPDNUM)] & 0xffffff) !=
              ernic_qp_pd(c, qpn) ||
              !ernic_pdt_allows(mr, write);
    range_bad = !ernic_mr_in_range(va, len, ernic_pdt_va(mr),
                                   ernic_pdt_len(mr), &off);
    if (key_bad || range_bad) {
        return ernic_mr_code(key_bad, range_bad);
    }
    memset(a, 0, sizeof(*a));
    a->addr = (((uint64_t)mr[ERNIC_W(ERNIC_BUFBASEADDRMSB)] << 32) |
               mr[ERNIC_W(ERNIC_BUFBASEADDRLSB)]) + off;
    return 0;
}

/*
 * The extended table (docs/extension.md, "Keys"): the entry is sampled
 * into @a, so the access keeps the translation it was checked with.
 */
static uint16_t ernic_mr_check_ext(ErnicCore *c, uint32_t qpn, uint32_t rkey,
                                   uint64_t va, uint64_t len, uint32_t need,
                                   ErnicMrAccess *a)
{
    const ErnicExtMr *mr = ernic_ext_mr(c, rkey >> 8);
    bool write = need != ERNIC_MRACC_REMOTE_READ;
    uint64_t off = 0;
    bool key_bad, range_bad;

    if (!mr) {
        /* No entry, no range to check: as an index past the PD/MR table. */
        trace_ernic_mr_refused(qpn, rkey, va, len, write);
        return ERNIC_FATAL_RKEY;
    }
    key_bad = mr->state != ERNIC_MR_VALID || mr->key != (rkey & 0xff) ||
              mr->pd != ernic_qp_pd(c, qpn) ||
              (need && !(mr->acc & need));
    range_bad = !ernic_mr_in_range(va, len, mr->iova, mr->len, &off);
    if (key_bad || range_bad) {
        trace_ernic_mr_refused(qpn, rkey, va, len, write);
        return ernic_mr_code(key_bad, range_bad);
    }
    memset(a, 0, sizeof(*a));
    if (mr->acc & ERNIC_MRACC_PHYS) {
        a->addr = mr->pbl + off;
    } else {
        /* Offsets count from the first page's start. */
        a->addr = off + (mr->iova & ((1ull << mr->shift) - 1));
        a->pbl = mr->pbl;
        a->npages = mr->npages;
        a->shift = mr->shift;
        a->paged = true;
    }
    return 0;
}

uint16_t ernic_mr_check_rkey(ErnicCore *c, uint32_t qpn, uint32_t rkey,
                             uint64_t va, uint64_t len, bool write,
                             ErnicMrAccess *a)
{
    if (ernic_ext_on(c, ERNIC_EXT_F_MR)) {
        return ernic_mr_check_ext(c, qpn, rkey, va, len,
                                  write ? ERNIC_MRACC_REMOTE_WRITE :
                                          ERNIC_MRACC_REMOTE_READ, a);
    }
    return ernic_mr_check_pdt(c, qpn, rkey, va, len, write, a);
}

/*
 * The 8 bytes of an atomic (ERNIC-X ATOMIC, docs/extension.md): an
 * extended region needs MRACC's remote atomic bit; PG332's table has no
 * such bit, so one of its regions needs read and write access.
 */
uint16_t ernic_mr_check_atomic(ErnicCore *c, uint32_t qpn, uint32_t rkey,
                               uint64_t va, ErnicMrAccess *a)
{
    uint16_t code;

    if (ernic_ext_on(c, ERNIC_EXT_F_MR)) {
        return ernic_mr_check_ext(c, qpn, rkey, va, ERNIC_ATOMIC_LEN,
                                  ERNIC_MRACC_REMOTE_ATOMIC, a);
    }
    code = ernic_mr_check_pdt(c, qpn, rkey, va, ERNIC_ATOMIC_LEN, true, a);
    if (!code) {
        code = ernic_mr_check_pdt(c, qpn, rkey, va, ERNIC_ATOMIC_LEN, false,
                                  a);
    }
    return code;
}

/*
 * The range of a FLUSH (ERNIC-X PLACE, docs/extension.md): an extended
 * region needs MRACC's FLUSH bit; PG332's table has no such bit, so one
 * of its regions needs remote write access, the writes a FLUSH makes
 * visible. With @whole (selectivity "memory region", IBTA A19) the
 * range is the region's own and the RETH's is ignored.
 */
uint16_t ernic_mr_check_flush(ErnicCore *c, uint32_t qpn, uint32_t rkey,
                              uint64_t va, uint64_t len, bool whole)
{
    ErnicMrAccess a;

    if (ernic_ext_on(c, ERNIC_EXT_F_MR)) {
        const ErnicExtMr *mr = ernic_ext_mr(c, rkey >> 8);

        if (whole && mr) {
            va = mr->iova;
            len = 0;
        }
        return ernic_mr_check_ext(c, qpn, rkey, va, len, ERNIC_MRACC_FLUSH,
                                  &a);
    }
    if (whole && (rkey >> 8) < ERNIC_PDT_ENTRIES) {
        va = ernic_pdt_va(c->pdt[rkey >> 8]);
        len = 0;
    }
    return ernic_mr_check_pdt(c, qpn, rkey, va, len, true, &a);
}

/*
 * An L_Key of an ERNIC-X WQE for @len bytes at @va (docs/extension.md,
 * "Receive WQEs", "Keyed SGEs"): 0 names bus addresses (the reserved
 * L_Key); any other key needs an entry of the extended table with the
 * access bits @need (local write where the device writes; none beyond
 * the PD where it reads). Returns 0 or a FATAL code, as for an R_Key.
 */
uint16_t ernic_mr_check_lkey(ErnicCore *c, uint32_t qpn, uint32_t lkey,
                             uint64_t va, uint64_t len, uint32_t need,
                             ErnicMrAccess *a)
{
    const ErnicExtMr *mr = ernic_ext_mr(c, lkey >> 8);

    if (!lkey && va + len - 1 >= va && !ernic_ext_user_qp(c, qpn)) {
        memset(a, 0, sizeof(*a));
        a->addr = va;
        return 0;
    }
    /* A memory window is reached through R_Keys only (IBTA 10.6.7). */
    if (!lkey || !ernic_ext_on(c, ERNIC_EXT_F_MR) ||
        (mr && (mr->acc & ERNIC_MRACC_MW))) {
        trace_ernic_mr_refused(qpn, lkey, va, len, true);
        return ERNIC_FATAL_RKEY;
    }
    return ernic_mr_check_ext(c, qpn, lkey, va, len, need, a);
}

/* The bus address of byte @pos of a paged access; false if none. */
static bool ernic_mr_page(ErnicCore *c, const ErnicMrAccess *a, uint64_t pos,
                          uint64_t *bus)
{
    uint64_t page = pos >> a->shift;
    uint8_t ent[8];

    if (page >= a->npages ||
        !ernic_dma_read(c, a->pbl + page * 8, ent, sizeof(ent))) {
        return false;
    }
    *bus = (ldq_le_p(ent) & ~((1ull << a->shift) - 1)) +
           (pos & ((1ull << a->shift) - 1));
    return true;
}

/*
 * Visit the bus addresses of @len bytes at offset @off of an access
 * checked by ernic_mr_check_rkey(), in order, as runs that are
 * contiguous on the bus: one for a contiguous region, a page at most
 * each for a paged one. False when a page-list read or @fn failed (the
 * caller applies its DMA-error reaction).
 */
static bool ernic_mr_walk_access(ErnicCore *c, const ErnicMrAccess *a,
                                 uint64_t off, uint32_t len,
                                 ErnicMrSegFn fn, void *opaque)
{
    uint64_t pos, bus, psize = 1ull << a->shift;
    uint32_t n;

    if (!a->paged) {
        return fn(c, a->addr + off, len, opaque);
    }
    for (; len; off += n, len -= n) {
        pos = a->addr + off;
        n = MIN(len, psize - (pos & (psize - 1)));
        if (!ernic_mr_page(c, a, pos, &bus) || !fn(c, bus, n, opaque)) {
            return false;
        }
    }
    return true;
}

/* A copy through ernic_mr_walk_access(): into @rbuf, or from @wbuf. */
typedef struct ErnicMrCopy {
    uint8_t *rbuf;
    const uint8_t *wbuf;
} ErnicMrCopy;

static bool ernic_mr_copy_seg(ErnicCore *c, uint64_t bus, uint32_t len,
                              void *opaque)
{
    ErnicMrCopy *m = opaque;

    if (m->wbuf) {
        m->wbuf += len;
        return ernic_dma_write(c, bus, m->wbuf - len, len);
    }
    m->rbuf += len;
    return ernic_dma_read(c, bus, m->rbuf - len, len);
}

static bool ernic_mr_dma(ErnicCore *c, const ErnicMrAccess *a, uint64_t off,
                         uint8_t *rbuf, const uint8_t *wbuf, uint32_t len)
{
    ErnicMrCopy m = { .rbuf = rbuf, .wbuf = wbuf };

    return ernic_mr_walk_access(c, a, off, len, ernic_mr_copy_seg, &m);
}

bool ernic_mr_read(ErnicCore *c, const ErnicMrAccess *a, uint64_t off,
                   void *buf, uint32_t len)
{
    return ernic_mr_dma(c, a, off, buf, NULL, len);
}

bool ernic_mr_write(ErnicCore *c, const ErnicMrAccess *a, uint64_t off,
                    const void *buf, uint32_t len)
{
    return ernic_mr_dma(c, a, off, NULL, buf, len);
}

/*
 * Sample @n SGEs of 16 bytes at @w ({address, length, L_Key}) into @sge,
 * each key checked once for @need. Returns the bytes they hold; sets
 * *@key_bad when a key failed.
 */
uint64_t ernic_mr_sge_take(ErnicCore *c, uint32_t qpn, const uint8_t *w,
                           unsigned n, uint32_t need, ErnicSge *sge,
                        bool *key_bad)
{
    uint64_t total = 0;

    *key_bad = false;
    for (unsigned i = 0; i < n; i++) {
        const uint8_t *s = &w[i * ERNIC_SGE_SIZE];

        memset(&sge[i], 0, sizeof(sge[i]));
        sge[i].len = ldl_le_p(s + ERNIC_SGE_LEN);
        if (sge[i].len &&
            ernic_mr_check_lkey(c, qpn, ldl_le_p(s + ERNIC_SGE_LKEY),
                                ldq_le_p(s + ERNIC_SGE_ADDR), sge[i].len,
                                need, &sge[i].a)) {
            *key_bad = true;
        }
        total += sge[i].len;
    }
    return total;
}

/*
 * Visit the bus addresses of @len bytes at offset @off of the message
 * that @n sampled SGEs hold, in order (ernic_mr_walk_access()). The
 * caller has checked that they hold that much. False when a DMA failed.
 */
static bool ernic_mr_sge_walk(ErnicCore *c, const ErnicSge *sge, unsigned n,
                              uint64_t off, uint32_t len, ErnicMrSegFn fn,
                              void *opaque)
{
    for (unsigned i = 0; i < n && len; i++) {
        uint32_t k;

        if (off >= sge[i].len) {
            off -= sge[i].len;
            continue;
        }
        k = MIN(len, sge[i].len - off);
        if (!ernic_mr_walk_access(c, &sge[i].a, off, k, fn, opaque)) {
            return false;
        }
        len -= k;
        off = 0;
    }
    return !len;
}

bool ernic_mr_sge_dma(ErnicCore *c, const ErnicSge *sge, unsigned n,
                      uint64_t off, uint8_t *rbuf, const uint8_t *wbuf,
                      uint32_t len)
{
    ErnicMrCopy m = { .rbuf = rbuf, .wbuf = wbuf };

    return ernic_mr_sge_walk(c, sge, n, off, len, ernic_mr_copy_seg, &m);
}

/*
 * Every payload byte the engine moves goes through here (as rxe's
 * copy_data(), hw/nvme's NvmeSg): a PG332 WQE's LADDR and an RQ buffer
 * are a physical SGE of one entry, so that they and ERNIC-X's keyed SGEs
 * take the same path. The caller has checked that @off + @len lies in
 * the message.
 */
bool ernic_mr_msg_walk(ErnicCore *c, const ErnicSge *sge, unsigned n,
                       uint64_t laddr, uint32_t total, uint64_t off,
                       uint32_t len, ErnicMrSegFn fn, void *opaque)
{
    ErnicSge phys = { .a = { .addr = laddr }, .len = total };

    if (!n) {
        sge = &phys;
        n = 1;
    }
    return ernic_mr_sge_walk(c, sge, n, off, len, fn, opaque);
}

bool ernic_mr_msg_dma(ErnicCore *c, const ErnicSge *sge, unsigned n,
                      uint64_t laddr, uint32_t total, uint64_t off,
                      uint8_t *rbuf, const uint8_t *wbuf, uint32_t len)
{
    ErnicMrCopy m = { .rbuf = rbuf, .wbuf = wbuf };

    return ernic_mr_msg_walk(c, sge, n, laddr, total, off, len,
                             ernic_mr_copy_seg, &m);
}
