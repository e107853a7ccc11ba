/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A tiny TAP harness for the C unit tests: each TEST() is one TAP line,
 * a failed CHECK() fails the test it is in and says where.
 */
#ifndef FVBPF_UNIT_H
#define FVBPF_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_failed_total, unit_count, unit_cur_failed;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("# %s:%d: CHECK(%s) failed\n", __FILE__,        \
			       __LINE__, #cond);                               \
			unit_cur_failed = 1;                                   \
		}                                                              \
	} while (0)

#define CHECK_EQ(a, b)                                                         \
	do {                                                                   \
		long long _a = (long long)(a), _b = (long long)(b);            \
		if (_a != _b) {                                                \
			printf("# %s:%d: %s == %s failed: %lld != %lld\n",     \
			       __FILE__, __LINE__, #a, #b, _a, _b);            \
			unit_cur_failed = 1;                                   \
		}                                                              \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *_a = (a), *_b = (b);                               \
		if (!_a || !_b || strcmp(_a, _b)) {                            \
			printf("# %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
			       __FILE__, __LINE__, #a, #b, _a ? _a : "(null)", \
			       _b ? _b : "(null)");                            \
			unit_cur_failed = 1;                                   \
		}                                                              \
	} while (0)

#define RUN(fn)                                                                \
	do {                                                                   \
		unit_cur_failed = 0;                                           \
		fn();                                                          \
		unit_count++;                                                  \
		printf("%sok %d - %s\n", unit_cur_failed ? "not " : "",        \
		       unit_count, #fn);                                       \
		unit_failed_total += unit_cur_failed;                          \
	} while (0)

/* TAP plan at the end ("1..N"), exit status 1 when anything failed. */
#define UNIT_DONE()                                                            \
	do {                                                                   \
		printf("1..%d\n", unit_count);                                 \
		return unit_failed_total ? 1 : 0;                              \
	} while (0)

#endif /* FVBPF_UNIT_H */
