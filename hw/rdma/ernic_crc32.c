/*
 * ERNIC ICRC arithmetic: CRC-32 (IEEE 802.3, reflected, the polynomial
 * of the RoCEv2 ICRC, IBTA vol. 1 7.8.1), as zlib's crc32() computes it,
 * folded 64 bytes at a time with carry-less multiplication where the host
 * has PCLMULQDQ.
 *
 * Why: the ICRC of every frame sent and received was 15 to 20 % of each
 * device thread's time between two guests (perf, ib_send_bw 1 MiB,
 * docs/driver.md "Where the time went"); zlib folds byte tables, about
 * 1.6 GB/s here. The folding and its constants are those of Intel's
 * "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
 * Instruction" (2009), for the reflected polynomial 0x1DB710641, as in
 * Linux's arch/x86/crypto/crc32-pclmul_asm.S; the 0..15 bytes after the
 * last whole 16 go through a byte table.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <zlib.h>
#include "ernic_wire.h"

#if defined(__x86_64__)
#include "host/cpuinfo.h"
#include <immintrin.h>

#define ERNIC_CRC_ACCEL __attribute__((target("pclmul")))

/* x^(4*128+32) mod P and x^(4*128-32) mod P: folds 64 bytes ahead. */
#define K1      0x00000001c6e41596ULL
#define K2      0x0000000154442bd4ULL
/* x^(128+32) mod P and x^(128-32) mod P: folds 16 bytes ahead. */
#define K3      0x00000000ccaa009eULL
#define K4      0x00000001751997d0ULL
/* x^64 mod P: the last 64 to 32 bits. */
#define K5      0x0000000163cd6124ULL
/* Barrett reduction: the polynomial P' and the quotient u'. */
#define KP      0x00000001f7011641ULL
#define KU      0x00000001db710641ULL

/* @x's two halves multiplied by @k's and added: 128 bits folded ahead. */
static inline __m128i ERNIC_CRC_ACCEL ernic_crc32_fold(__m128i x, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                         _mm_clmulepi64_si128(x, k, 0x11));
}

/*
 * The CRC register after @len bytes (a multiple of 16, at least 16),
 * from register @crc: no inversion on either side.
 */
static uint32_t ERNIC_CRC_ACCEL ernic_crc32_clmul(uint32_t crc,
                                                  const uint8_t *p,
                                                  size_t len)
{
    const __m128i k12 = _mm_set_epi64x(K1, K2), k34 = _mm_set_epi64x(K3, K4);
    const __m128i k5 = _mm_set_epi64x(0, K5), pu = _mm_set_epi64x(KP, KU);
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, ~0);
    __m128i x0, x1, x2, x3, t;

    x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p),
                       _mm_cvtsi32_si128(crc));
    if (len >= 64) {
        /* Four lanes 64 bytes at a time, then folded into one. */
        x1 = _mm_loadu_si128((const __m128i *)(p + 16));
        x2 = _mm_loadu_si128((const __m128i *)(p + 32));
        x3 = _mm_loadu_si128((const __m128i *)(p + 48));
        for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
            x0 = _mm_xor_si128(ernic_crc32_fold(x0, k12),
                               _mm_loadu_si128((const __m128i *)p));
            x1 = _mm_xor_si128(ernic_crc32_fold(x1, k12),
                               _mm_loadu_si128((const __m128i *)(p + 16)));
            x2 = _mm_xor_si128(ernic_crc32_fold(x2, k12),
                               _mm_loadu_si128((const __m128i *)(p + 32)));
            x3 = _mm_xor_si128(ernic_crc32_fold(x3, k12),
                               _mm_loadu_si128((const __m128i *)(p + 48)));
        }
        x0 = _mm_xor_si128(ernic_crc32_fold(x0, k34), x1);
        x0 = _mm_xor_si128(ernic_crc32_fold(x0, k34), x2);
        x0 = _mm_xor_si128(ernic_crc32_fold(x0, k34), x3);
    } else {
        p += 16;
        len -= 16;
    }
    for (; len >= 16; p += 16, len -= 16) {
        x0 = _mm_xor_si128(ernic_crc32_fold(x0, k34),
                           _mm_loadu_si128((const __m128i *)p));
    }
    /* 128 to 64 bits (appending 32 zero bits), then 64 to 32. */
    x0 = _mm_xor_si128(_mm_clmulepi64_si128(k34, x0, 0x01),
                       _mm_srli_si128(x0, 8));
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), k5, 0x00);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 4), t);
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), pu, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), pu, 0x00);
    return _mm_cvtsi128_si32(_mm_srli_si128(_mm_xor_si128(x0, t), 4));
}

/* The byte table of the reflected polynomial, for the last 0..15 bytes. */
static uint32_t ernic_crc_table[256];

static void __attribute__((constructor)) ernic_crc32_table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t r = i;

        for (int b = 0; b < 8; b++) {
            r = (r >> 1) ^ (r & 1 ? 0xedb88320 : 0);
        }
        ernic_crc_table[i] = r;
    }
}

uint32_t ernic_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
    size_t n = len & ~(size_t)15;
    uint32_t reg;

    if (!(cpuinfo & CPUINFO_PCLMUL)) {
        return crc32(crc, p, len);
    }
    /* zlib's value is the register inverted, before and after. */
    reg = ~crc;
    if (n) {
        reg = ernic_crc32_clmul(reg, p, n);
    }
    for (p += n, len -= n; len; len--) {
        reg = ernic_crc_table[(reg ^ *p++) & 0xff] ^ (reg >> 8);
    }
    return ~reg;
}

#else

uint32_t ernic_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
    return crc32(crc, p, len);
}

#endif
