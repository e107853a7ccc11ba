// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "util/start_time.h"

#define NS 1000000000ull

/* Decimal digits, then optionally '.' and up to 9 more: whole and
 * nanoseconds; false on anything else (a sign, spaces, exponents). */
static bool decimal(const char *s, const char *end, uint64_t max_whole, uint64_t *whole,
		    uint64_t *frac_ns)
{
	uint64_t w = 0, f = 0, scale = NS / 10;
	const char *p = s;

	if (p == end || *p < '0' || *p > '9')
		return false;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		w = w * 10 + (uint64_t)(*p - '0');
		if (w > max_whole)
			return false;
	}
	if (p < end && *p == '.') {
		if (++p == end)
			return false;
		for (; p < end && *p >= '0' && *p <= '9'; p++, scale /= 10)
			f += scale * (uint64_t)(*p - '0'); /* digits past the 9th add 0 */
	}
	if (p != end)
		return false;
	*whole = w;
	*frac_ns = f;
	return true;
}

static int parse_every(const char *s, uint64_t *every_ns)
{
	size_t n = strlen(s);
	uint64_t v, frac, unit;

	if (n < 3 || (s[n - 1] != 's' && s[n - 1] != 'm'))
		return -EINVAL;
	unit = s[n - 1] == 'm' ? 60 : 1;
	if (!decimal(s + 1, s + n - 1, START_EVERY_MAX_S, &v, &frac) || frac)
		return -EINVAL;
	if (!v || v * unit > START_EVERY_MAX_S)
		return -ERANGE;
	*every_ns = v * unit * NS;
	return 0;
}

/* HH:MM:SS[.frac] of the local day that holds @now. */
static int parse_clock(const char *s, uint64_t now_real_ns, uint64_t *at_ns)
{
	uint64_t h, m, sec, frac, dummy;
	time_t now = (time_t)(now_real_ns / NS), t;
	struct tm tm;

	if (strlen(s) < 8 || s[2] != ':' || s[5] != ':' || !decimal(s, s + 2, 23, &h, &dummy) ||
	    !decimal(s + 3, s + 5, 59, &m, &dummy) || !decimal(s + 6, s + strlen(s), 60, &sec, &frac) ||
	    dummy)
		return -EINVAL;
	if (!localtime_r(&now, &tm))
		return -EINVAL;
	tm.tm_hour = (int)h;
	tm.tm_min = (int)m;
	tm.tm_sec = (int)sec;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1 || t < 0)
		return -EINVAL;
	*at_ns = (uint64_t)t * NS + frac;
	return 0;
}

int start_time_parse(const char *s, uint64_t now_real_ns, uint64_t *at_ns, uint64_t *every_ns)
{
	uint64_t whole, frac;
	int err;

	*at_ns = *every_ns = 0;
	if (s[0] == '/')
		return parse_every(s, every_ns);
	if (strchr(s, ':'))
		err = parse_clock(s, now_real_ns, at_ns);
	else if (decimal(s, s + strlen(s), UINT64_MAX / NS - 1, &whole, &frac))
		err = (*at_ns = whole * NS + frac, 0);
	else
		err = -EINVAL;
	if (!err && *at_ns > now_real_ns && *at_ns - now_real_ns > START_AHEAD_MAX_S * NS)
		err = -ERANGE;
	if (err)
		*at_ns = 0;
	return err;
}

uint64_t start_time_instant(uint64_t at_ns, uint64_t every_ns, uint64_t now_real_ns)
{
	if (every_ns)
		return (now_real_ns / every_ns + 1) * every_ns;
	return at_ns;
}
