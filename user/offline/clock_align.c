// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "offline/clock_align.h"
#include "util/grow.h"

struct exit_at {
	const char *pg;
	uint64_t seq;
	int64_t at;               /* CLOCK_REALTIME of its host */
};

static int cmp_exit(const void *x, const void *y)
{
	const struct exit_at *a = x, *b = y;
	int c = strcmp(a->pg, b->pg);

	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

/* Every collective exit of @m's segments on its own wall clock. */
static int exits_of(const struct manifest *m, struct exit_at **out, size_t *n)
{
	size_t i, j, cap = 0;
	struct exit_at *v = NULL;
	int64_t at;

	*n = 0;
	for (i = 0; i < m->nfiles; i++) {
		const struct mf_file *f = &m->files[i];

		for (j = 0; j < f->ncolls; j++) {
			const struct mf_coll *k = &f->colls[j];

			if (!k->pg[0] || mf_file_at(m, f, k->end_ns, &at))
				continue;
			if (grow_one(&v, *n, &cap, sizeof(*v), 256)) {
				free(v);
				return -ENOMEM;
			}
			v[(*n)++] = (struct exit_at){ k->pg, k->seq, at };
		}
	}
	*out = v;
	return 0;
}

/* The differences ref - @m for the collectives both have, into @d. */
static size_t diffs(const struct exit_at *ref, size_t nref, const struct exit_at *v, size_t n,
		    int64_t *d)
{
	const struct exit_at *hit;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		hit = bsearch(&v[i], ref, nref, sizeof(*ref), cmp_exit);
		if (hit && !__builtin_sub_overflow(hit->at, v[i].at, &d[k]))
			k++;
	}
	return k;
}

static void estimate(struct manifest *m, const struct exit_at *ref, size_t nref)
{
	struct exit_at *v;
	int64_t *d;
	size_t n, k;

	if (exits_of(m, &v, &n) || !n)
		return;
	d = malloc(n * sizeof(*d));
	k = d ? diffs(ref, nref, v, n, d) : 0;
	if (k >= CLOCK_ALIGN_MIN) {
		qsort(d, k, sizeof(*d), cmp_i64);
		m->skew_ns = d[k / 2];
		m->skew_spread_ns = d[k * 3 / 4] - d[k / 4];
		m->skew_pairs = k;
	}
	free(d);
	free(v);
}

static bool same_host(const struct manifest *a, const struct manifest *b)
{
	return a->hostname && b->hostname && a->hostname[0] && !strcmp(a->hostname, b->hostname);
}

int clock_align_collectives(struct manifest *ms, size_t n)
{
	struct exit_at *ref;
	size_t nref, i;
	int ret;

	if (n < 2)
		return 0;
	ret = exits_of(&ms[0], &ref, &nref);
	if (ret || !nref)
		return ret;
	qsort(ref, nref, sizeof(*ref), cmp_exit);
	for (i = 1; i < n; i++)
		if (!same_host(&ms[0], &ms[i]))
			estimate(&ms[i], ref, nref);
	free(ref);
	return 0;
}
