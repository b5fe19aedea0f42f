/*
 * ERNIC ICRC arithmetic: CRC-32 (IEEE 802.3, reflected, the polynomial
 * of the RoCEv2 ICRC, IBTA vol. 1 7.8.1), as zlib's crc32() computes it,
 * folded 64 bytes at a time with carry-less multiplication where the host
 * has PCLMULQDQ, 256 bytes at a time where it has VPCLMULQDQ and AVX-512.
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

/*
 * The ways of computing it, narrowest first. A test that includes this
 * file sets ernic_crc_max to run each of those the host has.
 */
typedef enum ErnicCrcPath {
    ERNIC_CRC_TABLE,            /* zlib's byte tables */
    ERNIC_CRC_PCLMUL,
    ERNIC_CRC_VPCLMUL,
} ErnicCrcPath;

static int ernic_crc_max = ERNIC_CRC_VPCLMUL;

#if defined(__x86_64__)
#include "host/cpuinfo.h"
#include "qemu/cpuid.h"
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
 * The 0 to 3 lanes @p holds after @x0 (@len a multiple of 16), folded into
 * it 16 bytes at a time; then the CRC register of it all: 128 bits to 64
 * (appending 32 zero bits), 64 to 32, Barrett's reduction.
 */
static inline uint32_t ERNIC_CRC_ACCEL ernic_crc32_reduce(__m128i x0,
                                                          const uint8_t *p,
                                                          size_t len)
{
    const __m128i k34 = _mm_set_epi64x(K3, K4);
    const __m128i k5 = _mm_set_epi64x(0, K5), pu = _mm_set_epi64x(KP, KU);
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, ~0);
    __m128i t;

    for (; len >= 16; p += 16, len -= 16) {
        x0 = _mm_xor_si128(ernic_crc32_fold(x0, k34),
                           _mm_loadu_si128((const __m128i *)p));
    }
    x0 = _mm_xor_si128(_mm_clmulepi64_si128(k34, x0, 0x01),
                       _mm_srli_si128(x0, 8));
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), k5, 0x00);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 4), t);
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), pu, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), pu, 0x00);
    return _mm_cvtsi128_si32(_mm_srli_si128(_mm_xor_si128(x0, t), 4));
}

/*
 * Four lanes @x0..@x3 (a 64-byte block), then @len more bytes at @p (a
 * multiple of 16): folded 64 bytes at a time, then into one lane.
 */
static inline uint32_t ERNIC_CRC_ACCEL ernic_crc32_lanes(__m128i x0,
                                                         __m128i x1,
                                                         __m128i x2,
                                                         __m128i x3,
                                                         const uint8_t *p,
                                                         size_t len)
{
    const __m128i k12 = _mm_set_epi64x(K1, K2), k34 = _mm_set_epi64x(K3, K4);

    for (; len >= 64; p += 64, len -= 64) {
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
    return ernic_crc32_reduce(x0, p, len);
}

/*
 * The CRC register after @len bytes (a multiple of 16, at least 16),
 * from register @crc: no inversion on either side.
 */
static uint32_t ERNIC_CRC_ACCEL ernic_crc32_clmul(uint32_t crc,
                                                  const uint8_t *p,
                                                  size_t len)
{
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p),
                               _mm_cvtsi32_si128(crc));

    if (len < 64) {
        return ernic_crc32_reduce(x0, p + 16, len - 16);
    }
    return ernic_crc32_lanes(x0, _mm_loadu_si128((const __m128i *)(p + 16)),
                             _mm_loadu_si128((const __m128i *)(p + 32)),
                             _mm_loadu_si128((const __m128i *)(p + 48)),
                             p + 64, len - 64);
}

/*
 * With VPCLMULQDQ and AVX-512, one instruction multiplies four lanes:
 * four 64-byte blocks at a time (256 bytes) instead of one. With
 * ernic_crc32_clmul() the ICRC took 29.5 % of a QEMU moving 4 KiB frames
 * between two devices (perf, docs/engine.md "Benchmark"). The constants
 * are x^(16*128-32) and x^(16*128+32) mod P, folding 256 bytes ahead,
 * as Chromium's zlib has them (crc32_simd.c).
 */
#define ERNIC_CRC_WIDE \
    __attribute__((target("pclmul,avx512f,avx512vl,vpclmulqdq")))
#define K1W     0x00000001322d1430ULL
#define K2W     0x000000011542778aULL

static inline __m512i ERNIC_CRC_WIDE ernic_crc32_fold4(__m512i x, __m512i k,
                                                      __m512i d)
{
    /* 0x96: the three-way exclusive or. */
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                     _mm512_clmulepi64_epi128(x, k, 0x11),
                                     d, 0x96);
}

/* As ernic_crc32_clmul(), for @len of at least 256. */
static uint32_t ERNIC_CRC_WIDE ernic_crc32_vclmul(uint32_t crc,
                                                  const uint8_t *p,
                                                  size_t len)
{
    const __m512i kw = _mm512_set_epi64(K1W, K2W, K1W, K2W,
                                        K1W, K2W, K1W, K2W);
    const __m512i k12 = _mm512_set_epi64(K1, K2, K1, K2, K1, K2, K1, K2);
    __m512i z0, z1, z2, z3;
    __m128i x[4];

    z0 = _mm512_xor_si512(_mm512_loadu_si512(p),
                          _mm512_zextsi128_si512(_mm_cvtsi32_si128(crc)));
    z1 = _mm512_loadu_si512(p + 64);
    z2 = _mm512_loadu_si512(p + 128);
    z3 = _mm512_loadu_si512(p + 192);
    for (p += 256, len -= 256; len >= 256; p += 256, len -= 256) {
        z0 = ernic_crc32_fold4(z0, kw, _mm512_loadu_si512(p));
        z1 = ernic_crc32_fold4(z1, kw, _mm512_loadu_si512(p + 64));
        z2 = ernic_crc32_fold4(z2, kw, _mm512_loadu_si512(p + 128));
        z3 = ernic_crc32_fold4(z3, kw, _mm512_loadu_si512(p + 192));
    }
    /*
     * Four 64-byte blocks into one, whose lanes go on as four (through
     * memory: GCC 12's lane extraction warns of an undefined operand).
     */
    z0 = ernic_crc32_fold4(z0, k12, z1);
    z0 = ernic_crc32_fold4(z0, k12, z2);
    z0 = ernic_crc32_fold4(z0, k12, z3);
    _mm512_storeu_si512(x, z0);
    return ernic_crc32_lanes(x[0], x[1], x[2], x[3], p, len);
}

/*
 * The host's widest path: VPCLMULQDQ from CPUID, AVX-512 (with the OS
 * saving its registers) from QEMU's cpuinfo, found on the first call
 * (every value it could store is the same), narrowed to ernic_crc_max.
 */
static int ernic_crc_cap = -1;

static ErnicCrcPath ernic_crc32_path(void)
{
    if (ernic_crc_cap < 0) {
        unsigned a, b, c = 0, d;

        if (__get_cpuid_max(0, NULL) >= 7) {
            __cpuid_count(7, 0, a, b, c, d);
        }
        ernic_crc_cap = !(cpuinfo & CPUINFO_PCLMUL) ? ERNIC_CRC_TABLE :
                        (c & bit_VPCLMULQDQ) &&
                        (cpuinfo & CPUINFO_AVX512F) &&
                        (cpuinfo & CPUINFO_AVX512VL) ? ERNIC_CRC_VPCLMUL :
                        ERNIC_CRC_PCLMUL;
    }
    return MIN(ernic_crc_cap, ernic_crc_max);
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
    ErnicCrcPath path = ernic_crc32_path();
    uint32_t reg;

    if (path == ERNIC_CRC_TABLE) {
        return crc32(crc, p, len);
    }
    /* zlib's value is the register inverted, before and after. */
    reg = ~crc;
    if (n >= 256 && path == ERNIC_CRC_VPCLMUL) {
        reg = ernic_crc32_vclmul(reg, p, n);
    } else if (n) {
        reg = ernic_crc32_clmul(reg, p, n);
    }
    for (p += n, len -= n; len; len--) {
        reg = ernic_crc_table[(reg ^ *p++) & 0xff] ^ (reg >> 8);
    }
    return ~reg;
}

#else

static G_GNUC_UNUSED ErnicCrcPath ernic_crc32_path(void)
{
    return MIN(ERNIC_CRC_TABLE, ernic_crc_max);
}

uint32_t ernic_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
    return crc32(crc, p, len);
}

#endif
