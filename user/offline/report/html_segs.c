// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report --html`: the segments of every region, grouped once, so
 * that a page over many regions and segments reads each segment a bounded
 * number of times (a hostile manifest may list 100,000 regions). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "offline/report/html_internal.h"

struct named {
	const char *name;
	size_t idx;
};

static int cmp_named(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

/* The region of @x in @v (sorted by name), or -1 when none (no summary). */
static long region_of(const struct named *v, size_t nr, const struct mf_file *x)
{
	struct named key = { x->region ? x->region : "", 0 }, *hit;

	if (!x->have_summary || !nr)
		return -1;
	hit = bsearch(&key, v, nr, sizeof(*v), cmp_named);
	return hit ? (long)hit->idx : -1;
}

static uint64_t segs_bytes(size_t nfiles, size_t nr)
{
	return MF_ALLOC(nfiles * sizeof(struct jr_seg_ref)) + 2 * MF_ALLOC((nr + 1) * sizeof(size_t)) +
	       MF_ALLOC(nr * sizeof(struct named));
}

/* Count (@fill false) or place (@fill true, @pos the next slot of each region). */
static void each_file(struct jr_segs *s, const struct named *v, size_t nr, const struct manifest *ms,
		      size_t n, size_t *pos, bool fill)
{
	size_t i, j;
	long g;

	for (i = 0; i < n; i++)
		for (j = 0; j < ms[i].nfiles; j++) {
			g = region_of(v, nr, &ms[i].files[j]);
			if (g < 0)
				continue;
			if (!fill) {
				pos[g + 1]++;
				continue;
			}
			s->refs[pos[g]].m = i;
			s->refs[pos[g]++].f = j;
		}
}

int jr_segs_build(struct jr_segs *s, const struct job_report *r, const struct manifest *ms, size_t n)
{
	size_t i, nfiles = 0, nr = r->nregions;
	struct named *v = NULL;
	size_t *pos = NULL;
	int ret;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++)
		nfiles += ms[i].nfiles;
	ret = mf_charge(r->budget, segs_bytes(nfiles, nr));
	if (ret)
		return ret;
	s->charged = segs_bytes(nfiles, nr);
	s->refs = malloc((nfiles ? nfiles : 1) * sizeof(*s->refs));
	s->start = calloc(nr + 1, sizeof(*s->start));
	pos = calloc(nr + 1, sizeof(*pos));
	v = malloc((nr ? nr : 1) * sizeof(*v));
	if (!s->refs || !s->start || !pos || !v) {
		ret = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < nr; i++) {
		v[i].name = r->regions[i].name;
		v[i].idx = i;
	}
	if (nr)
		qsort(v, nr, sizeof(*v), cmp_named);
	each_file(s, v, nr, ms, n, s->start, false);
	for (i = 0; i < nr; i++)
		s->start[i + 1] += s->start[i];
	memcpy(pos, s->start, (nr + 1) * sizeof(*pos));
	each_file(s, v, nr, ms, n, pos, true);
cleanup:
	free(pos);
	free(v);
	return ret;
}

void jr_segs_free(struct jr_segs *s, struct mf_budget *b)
{
	free(s->refs);
	free(s->start);
	mf_uncharge(b, s->charged);
	memset(s, 0, sizeof(*s));
}
