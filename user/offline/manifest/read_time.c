// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Times of an output directory read back: microsecond text, wall clock, the
 * realtime - monotonic offset. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "offline/manifest/manifest_read.h"

int mf_us_text_to_ns(const char *s, int64_t *ns)
{
	int64_t whole = 0, frac = 0;
	int neg = 0, digits = 0, fd = 0;
	const char *p = s;
	char *end;
	double d;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (whole > (INT64_MAX / 1000 - 9) / 10)
			goto as_double;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, fd++)
			if (fd < 3)
				frac = frac * 10 + (*p - '0');
			else if (fd == 3 && *p >= '5')
				frac++; /* round half up at the nanosecond */
		if (!fd)
			return -EINVAL;
		while (fd < 3) {
			frac *= 10;
			fd++;
		}
	}
	if (!digits)
		return -EINVAL;
	if (*p)
		goto as_double;
	*ns = (neg ? -1 : 1) * (whole * 1000 + frac);
	return 0;
as_double:
	errno = 0;
	d = strtod(s, &end);
	if (errno || *end || end == s || !(d > -9.2e15 && d < 9.2e15))
		return -EINVAL;
	*ns = (int64_t)(d * 1000.0 + (d < 0 ? -0.5 : 0.5));
	return 0;
}

int mf_json_us_to_ns(json_object *o, int64_t *ns)
{
	if (!o)
		return -ENOENT;
	if (json_object_is_type(o, json_type_int)) {
		int64_t v = json_object_get_int64(o);

		if (v > INT64_MAX / 1000 || v < INT64_MIN / 1000)
			return -ERANGE;
		*ns = v * 1000;
		return 0;
	}
	if (!json_object_is_type(o, json_type_double))
		return -EINVAL;
	return mf_us_text_to_ns(json_object_get_string(o), ns);
}

int mf_parse_wallclock(const char *s, int64_t *ns)
{
	struct tm tm = { 0 };
	const char *p;
	int64_t frac = 0, sec_ns;
	int fd = 0;
	time_t t;

	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -EINVAL;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, fd++)
			if (fd < 9)
				frac = frac * 10 + (*p - '0');
	while (fd++ < 9)
		frac *= 10;
	if (*p != 'Z' || p[1])
		return -EINVAL;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	/* a year past 2262 does not fit in int64 nanoseconds */
	if (__builtin_mul_overflow((int64_t)t, (int64_t)1000000000, &sec_ns) ||
	    __builtin_add_overflow(sec_ns, frac, ns))
		return -ERANGE;
	return 0;
}

int mf_clock_offset(const struct mf_clock_pair *start, const struct mf_clock_pair *end,
		    int64_t *offset_ns, int64_t *uncertainty_ns)
{
	int64_t os, oe, d, u;

	/* Both clocks count from boot or 1970 and a read span is a
	 * duration: a negative one is a made-up manifest. */
	if (start->mono_ns < 0 || start->real_ns < 0 || start->span_ns < 0 || end->mono_ns < 0 ||
	    end->real_ns < 0 || end->span_ns < 0)
		return -ERANGE;
	os = start->real_ns - start->mono_ns; /* both >= 0: cannot overflow */
	oe = end->real_ns - end->mono_ns;
	if (__builtin_sub_overflow(oe, os, &d) || d == INT64_MIN)
		return -ERANGE;
	if (__builtin_add_overflow(d < 0 ? -d : d, start->span_ns, &u) ||
	    __builtin_add_overflow(u, end->span_ns, &u))
		return -ERANGE;
	/* os + (oe - os) / 2: between the two, where (os + oe) / 2 could
	 * overflow */
	*offset_ns = os + d / 2;
	*uncertainty_ns = u;
	return 0;
}
