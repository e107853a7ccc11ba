// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <ctype.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/budget.h"

/* Big enough for small objects to stay in the heap, small enough that a
 * segment's arrays (grown by doubling) soon live in their own mappings. */
#define MMAP_THRESHOLD (128 * 1024)
#define ARENA_MAX 2  /* the consumer and the writer */

int budget_parse_size(const char *arg, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!isdigit((unsigned char)*arg))
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno)
		return -ERANGE;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	default:
		return -EINVAL;
	}
	if (*end && end[1])
		return -EINVAL;
	if (!v || v > (BUDGET_MAX_MEMORY >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

void budget_tune_malloc(void)
{
	/* A fixed threshold also stops glibc raising it after each free of a
	 * mapped chunk, which would move later big arrays back into the heap,
	 * whose top is rarely given back. */
	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	mallopt(M_ARENA_MAX, ARENA_MAX);
}

uint64_t budget_rss_now(void)
{
	unsigned long long size, resident;
	FILE *f = fopen("/proc/self/statm", "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%llu %llu", &size, &resident);
	fclose(f);
	return n == 2 ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

uint64_t budget_rss_peak(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)ru.ru_maxrss * 1024; /* Linux: kilobytes */
}

static void note_max(_Atomic uint64_t *peak, uint64_t now)
{
	uint64_t p = atomic_load(peak);

	while (now > p && !atomic_compare_exchange_weak(peak, &p, now))
		;
}

/* The tables' hook: refused past their share (none when not limited). */
static int tables_take(void *ctx, uint64_t bytes)
{
	struct budget *m = ctx;
	uint64_t held = atomic_load(&m->tables_held);

	do {
		if (m->tables && (bytes > m->tables || held > m->tables - bytes))
			return -ENOSPC;
	} while (!atomic_compare_exchange_weak(&m->tables_held, &held, held + bytes));
	note_max(&m->tables_peak, held + bytes);
	return 0;
}

static void tables_give(void *ctx, uint64_t bytes)
{
	struct budget *m = ctx;

	atomic_fetch_sub(&m->tables_held, bytes);
}

int budget_setup(struct budget *m, uint64_t max_memory, uint64_t ringbuf_bytes)
{
	uint64_t used, room;

	m->max_memory = max_memory;
	m->rss_setup = budget_rss_now();
	/* The consumer maps the ring's data pages twice (wrap-around), and
	 * both count in RSS once touched. */
	m->slack = BUDGET_SLACK + 2 * ringbuf_bytes;
	used = m->rss_setup + m->slack;
	room = max_memory > used ? max_memory - used : 0;
	m->tables = room / BUDGET_TABLES_PART;
	m->budget = room - m->tables;
	m->tables_charge = (struct charge_hook){ tables_take, tables_give, m };
	return m->budget >= BUDGET_MIN ? 0 : -ENOSPC;
}

uint64_t budget_least(const struct budget *m)
{
	return m->rss_setup + m->slack +
	       (BUDGET_MIN * BUDGET_TABLES_PART + BUDGET_TABLES_PART - 2) /
	       (BUDGET_TABLES_PART - 1);
}

static void note_peak(struct budget *m, uint64_t now)
{
	note_max(&m->peak, now);
}

void budget_charge(struct budget *m, uint64_t bytes)
{
	note_peak(m, atomic_fetch_add(&m->held, bytes) + bytes);
}

void budget_release(struct budget *m, uint64_t bytes)
{
	atomic_fetch_sub(&m->held, bytes);
}

uint64_t budget_share(const struct budget *m)
{
	return m->budget / 3;
}

bool budget_pressure(struct budget *m)
{
	return m->budget && atomic_load(&m->held) > budget_share(m);
}

/* Only the consumer charges while it checks (the writer releases, or
 * charges what it holds for the one segment it writes: a spilled segment
 * read back, pftrace's sorted copy of its slices), so a check and a
 * charge need no lock.  The writer's charges are seen by the next check;
 * pftrace's copy (40 bytes a slice) is not held to the third. */
size_t budget_grant(struct budget *m, uint64_t seg_bytes, size_t cap, size_t want, size_t size)
{
	uint64_t held = atomic_load(&m->held), room, seg_room;
	size_t ncap;

	if (!m->budget) {
		budget_charge(m, (uint64_t)(want - cap) * size);
		return want;
	}
	room = held < m->budget ? m->budget - held : 0;
	seg_room = seg_bytes < budget_share(m) ? budget_share(m) - seg_bytes : 0;
	if (seg_room < room)
		room = seg_room;
	ncap = (uint64_t)(want - cap) * size <= room ? want : cap + (size_t)(room / size);
	if (ncap <= cap)
		return 0;
	budget_charge(m, (uint64_t)(ncap - cap) * size);
	return ncap;
}
