// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <zlib.h>

#include "util/crc32_fast.h"

#if defined(__x86_64__)
#include <immintrin.h>

/*
 * The reflected CRC-32 (no inversions) of @len bytes, @len a multiple of
 * 16 and at least 16: 128-bit blocks folded by carry-less multiplication,
 * then Barrett reduction, with the constants of Intel's "Fast CRC
 * Computation for Generic Polynomials Using PCLMULQDQ" as the Linux
 * kernel's crc32-pclmul uses them (x^(128+32) mod P and so on, bit-reflected).
 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc_fold(uint32_t crc, const unsigned char *p, size_t len)
{
	const __m128i k34 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
	const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124LL);
	const __m128i mu = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
	const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i x, a, b;

	x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)crc));
	for (p += 16, len -= 16; len >= 16; p += 16, len -= 16) {
		a = _mm_clmulepi64_si128(x, k34, 0x00);
		b = _mm_clmulepi64_si128(x, k34, 0x11);
		x = _mm_xor_si128(_mm_xor_si128(a, b), _mm_loadu_si128((const __m128i *)p));
	}
	/* 128 -> 64 bits */
	a = _mm_clmulepi64_si128(x, k34, 0x10);
	x = _mm_xor_si128(a, _mm_srli_si128(x, 8));
	/* 64 -> 32 bits */
	a = _mm_srli_si128(x, 4);
	x = _mm_clmulepi64_si128(_mm_and_si128(x, mask32), k5, 0x00);
	x = _mm_xor_si128(x, a);
	/* Barrett reduction */
	a = x;
	x = _mm_clmulepi64_si128(_mm_and_si128(x, mask32), mu, 0x10);
	x = _mm_clmulepi64_si128(_mm_and_si128(x, mask32), mu, 0x00);
	x = _mm_xor_si128(x, a);
	return (uint32_t)_mm_extract_epi32(x, 1);
}

static int have_fold(void)
{
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}
#else
static uint32_t crc_fold(uint32_t crc, const unsigned char *p, size_t len)
{
	(void)p;
	(void)len;
	return crc;
}

static int have_fold(void)
{
	return 0;
}
#endif

uint32_t crc32_fast(uint32_t crc, const unsigned char *p, size_t len)
{
	size_t n = len & ~(size_t)15;

	/* zlib's crc is the raw one of the inverted start, inverted */
	if (n >= 64 && have_fold()) {
		crc = ~crc_fold(~crc, p, n);
		p += n;
		len -= n;
	}
	while (len) { /* crc32_z takes a z_size_t; zlib's crc32() an unsigned int */
		uInt k = len > (1u << 30) ? (1u << 30) : (uInt)len;

		crc = (uint32_t)crc32(crc, p, k);
		p += k;
		len -= k;
	}
	return crc;
}
