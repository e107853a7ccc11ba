/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Arithmetic on numbers the target controls (GPU record fields, call
 * arguments, timestamps it reports): never undefined, never wrapped into a
 * small plausible value.  Sums and products saturate; spans of a reversed
 * interval are 0.
 */
#ifndef FVBPF_CHECKED_MATH_H
#define FVBPF_CHECKED_MATH_H

#include <stdint.h>

static inline uint64_t sat_add_u64(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Signed: past either end, that end. */
static inline int64_t sat_add_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (!__builtin_add_overflow(a, b, &r))
		return r;
	return b > 0 ? INT64_MAX : INT64_MIN;
}

static inline uint64_t sat_mul_u64(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* @end - @start, or 0 when the target reports an end before its start. */
static inline uint64_t span_u64(uint64_t start, uint64_t end)
{
	return end > start ? end - start : 0;
}

#endif /* FVBPF_CHECKED_MATH_H */
