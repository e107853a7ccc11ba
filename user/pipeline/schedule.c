// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* --schedule (schedule.h), as torch.profiler.schedule() counts steps. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/schedule.h"
#include "util/parse_count.h"

static const char *const keys[] = { "skip_first", "wait", "warmup", "active", "repeat" };

static unsigned int *field(struct step_schedule *s, size_t i)
{
	unsigned int *f[] = { &s->skip_first, &s->wait, &s->warmup, &s->active, &s->repeat };

	return f[i];
}

static int one(const char *item, size_t len, struct step_schedule *s, unsigned int *seen,
	       char *err, size_t errlen)
{
	const char *eq = memchr(item, '=', len);
	unsigned long long v;
	char num[24];
	size_t i, klen;

	if (!len) {
		snprintf(err, errlen, "an empty item: give KEY=N items separated by commas");
		return -EINVAL;
	}
	klen = eq ? (size_t)(eq - item) : len;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i]) == klen && !memcmp(item, keys[i], klen))
			break;
	if (i == sizeof(keys) / sizeof(keys[0]) || !eq) {
		snprintf(err, errlen, "'%.*s': give KEY=N with KEY one of skip_first, wait, "
			 "warmup, active, repeat", (int)(len > 40 ? 40 : len), item);
		return -EINVAL;
	}
	if (*seen & (1u << i)) {
		snprintf(err, errlen, "%s given twice", keys[i]);
		return -EINVAL;
	}
	*seen |= 1u << i;
	len -= klen + 1;
	if (!len || len >= sizeof(num)) {
		snprintf(err, errlen, "%s: give a count from 0 to %u", keys[i], SCHEDULE_VALUE_MAX);
		return -EINVAL;
	}
	memcpy(num, eq + 1, len);
	num[len] = '\0';
	if (parse_count(num, 0, SCHEDULE_VALUE_MAX, &v)) {
		snprintf(err, errlen, "%s=%s: give a count from 0 to %u", keys[i], num,
			 SCHEDULE_VALUE_MAX);
		return -EINVAL;
	}
	*field(s, i) = (unsigned int)v;
	return 0;
}

int schedule_parse(const char *text, struct step_schedule *s, char *err, size_t errlen)
{
	const char *p = text, *comma;
	unsigned int seen = 0;
	int ret;

	memset(s, 0, sizeof(*s));
	for (;;) {
		comma = strchr(p, ',');
		ret = one(p, comma ? (size_t)(comma - p) : strlen(p), s, &seen, err, errlen);
		if (ret)
			return ret;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (!s->active) {
		snprintf(err, errlen, "give active=N, N at least 1 (the steps written each cycle)");
		return -EINVAL;
	}
	s->set = true;
	return 0;
}

static uint64_t cycle(const struct step_schedule *s)
{
	return (uint64_t)s->wait + s->warmup + s->active;
}

bool schedule_keep(const struct step_schedule *s, uint64_t k)
{
	uint64_t c = cycle(s);

	if (!s->set)
		return true;
	if (k < s->skip_first)
		return false;
	k -= s->skip_first;
	if (s->repeat && k / c >= s->repeat)
		return false;
	return k % c >= (uint64_t)s->wait + s->warmup;
}

uint64_t schedule_total(const struct step_schedule *s)
{
	return s->set && s->repeat ? s->skip_first + cycle(s) * s->repeat : 0;
}
