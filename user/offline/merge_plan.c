// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf merge`: which segment of each rank goes into the merged trace, and
 * the shift that aligns it. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "offline/trace_merge.h"
#include "offline/merge_internal.h"
#include "util/text_copy.h"

static int cmp_key(const struct mf_file *a, const struct manifest *ma, const struct mf_file *b,
		   const struct manifest *mb)
{
	int pa = a->pid_named ? a->pid : 0, pb = b->pid_named ? b->pid : 0, c;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->restart != b->restart)
		return a->restart < b->restart ? -1 : 1;
	c = strcmp(ma->hostname, mb->hostname);
	if (c)
		return c;
	return pa < pb ? -1 : pa > pb;
}

/* A segment of the region, with its times aligned. */
struct cand {
	const struct manifest *m;
	const struct mf_file *f;
	size_t mi;                /* which directory: its ranks stay its own */
	int64_t start, end;       /* realtime ns */
};

/* Rank order, a rank's segments together, by number. */
static int cmp_cand(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	int c = cmp_key(a->f, a->m, b->f, b->m);

	if (c)
		return c;
	if (a->mi != b->mi)
		return a->mi < b->mi ? -1 : 1;
	if (a->f->segment != b->f->segment)
		return a->f->segment < b->f->segment ? -1 : 1;
	return a->f < b->f ? -1 : a->f > b->f;
}

static bool same_rank(const struct cand *a, const struct cand *b)
{
	return a->mi == b->mi && !cmp_key(a->f, a->m, b->f, b->m);
}

static bool in_region(const struct mf_file *f, const char *region)
{
	return f->have_summary && f->have_times && f->region && !strcmp(f->region, region);
}

struct region_count {
	const char *name;
	size_t count;
};

static void count_key(const void *arr, size_t i, const char **name, const char **kind)
{
	*name = ((const struct region_count *)arr)[i].name;
	*kind = "";
}

/* The region with the most segments (ties: the first name) into *@out
 * (NULL: none); 0, -ENOSPC or -ENOMEM. */
static int common_region(struct manifest *ms, size_t n, const char **out)
{
	struct region_count *seen = NULL;
	struct pair_index index = { 0 };
	size_t i, j, pos, nseen = 0, cap = 0, best_count = 0;
	const char *r;
	int ret = 0;

	*out = NULL;
	for (i = 0; i < n && !ret; i++)
		for (j = 0; j < ms[i].nfiles && !ret; j++) {
			r = ms[i].files[j].region;
			if (!r || !ms[i].files[j].have_times)
				continue;
			ret = mf_index_find(ms->budget, &index, seen, nseen, count_key, r, "", &pos);
			if (ret == 1) {
				seen[pos].count++;
				ret = 0;
			} else if (!ret) {
				ret = mf_grow(ms->budget, &seen, nseen, &cap, sizeof(*seen), 8);
				if (!ret) {
					seen[nseen] = (struct region_count){ r, 1 };
					pair_index_set(&index, pos, nseen++);
				}
			}
		}
	for (i = 0; i < nseen && !ret; i++)
		if (seen[i].count > best_count ||
		    (seen[i].count == best_count && strcmp(seen[i].name, *out) < 0)) {
			*out = seen[i].name;
			best_count = seen[i].count;
		}
	free(seen);
	pair_index_free(&index);
	return ret;
}

void tm_key_label(const struct manifest *m, const struct mf_file *f, char *buf, size_t len)
{
	int k = f->rank < 0 ? snprintf(buf, len, "no rank") : snprintf(buf, len, "rank %d", f->rank);

	if (k > 0 && (size_t)k < len && f->restart)
		k += snprintf(buf + k, len - (size_t)k, " restart %d", f->restart);
	if (k > 0 && (size_t)k < len && f->pid_named)
		k += snprintf(buf + k, len - (size_t)k, " pid %d", f->pid);
	if (k > 0 && (size_t)k < len && m->hostname[0])
		snprintf(buf + k, len - (size_t)k, " (%s)", m->hostname);
}

/* Saturated: a span too long for int64 is the longest. */
static int64_t span(int64_t s, int64_t e)
{
	int64_t d;

	return __builtin_sub_overflow(e, s, &d) ? INT64_MAX : d;
}

static int64_t overlap(int64_t s1, int64_t e1, int64_t s2, int64_t e2)
{
	int64_t s = s1 > s2 ? s1 : s2, e = e1 < e2 ? e1 : e2;

	return e > s ? span(s, e) : 0;
}

/* Every segment of @region with aligned times, sorted (cmp_cand). */
static int collect(struct manifest *ms, size_t n, const char *region, struct cand **out,
		   size_t *count, char *err, size_t errlen)
{
	struct cand *c = NULL, *k;
	size_t i, j, cap = 0, nc = 0;
	char name[PATH_MAX + 256], shownb[PATH_MAX];
	int ret = 0;

	for (i = 0; i < n && !ret; i++)
		for (j = 0; j < ms[i].nfiles && !ret; j++) {
			if (!in_region(&ms[i].files[j], region))
				continue;
			ret = mf_grow(ms->budget, &c, nc, &cap, sizeof(*c), 64);
			if (ret)
				break;
			k = &c[nc++];
			*k = (struct cand){ &ms[i], &ms[i].files[j], i, 0, 0 };
			if (__builtin_add_overflow(k->f->start_ns, ms[i].offset_ns, &k->start) ||
			    __builtin_add_overflow(k->f->end_ns, ms[i].offset_ns, &k->end)) {
				snprintf(name, sizeof(name), "%s/%s", ms[i].dir, k->f->summary_json);
				snprintf(err, errlen, "%s: start_us and end_us with the node's clock offset "
					 "do not fit in 64-bit nanoseconds: not a real segment",
					 text_shown(shownb, sizeof(shownb), name));
				ret = -ERANGE;
			}
		}
	if (ret) {
		free(c);
		return ret;
	}
	if (nc) /* qsort(NULL, 0, ...) is undefined */
		qsort(c, nc, sizeof(*c), cmp_cand);
	*out = c;
	*count = nc;
	return 0;
}

/* The end of the rank that starts at @i. */
static size_t rank_end(const struct cand *c, size_t n, size_t i)
{
	size_t j = i + 1;

	while (j < n && same_rank(&c[i], &c[j]))
		j++;
	return j;
}

/* The reference: the lowest rank's first complete segment, or segment N. */
static const struct cand *pick_reference(const struct cand *c, size_t end, long long segment)
{
	const struct cand *ref = NULL;
	size_t j;

	for (j = 0; j < end; j++) {
		const struct mf_file *f = c[j].f;

		if (segment >= 0) {
			if (f->segment == (uint64_t)segment)
				ref = &c[j];
		} else if (!ref || (ref->f->incomplete && !f->incomplete) ||
			   (ref->f->incomplete == f->incomplete && f->segment < ref->f->segment)) {
			ref = &c[j]; /* complete first, then the lowest number */
		}
	}
	return ref;
}

/* The segment of the rank c[i..end) to merge with @ref, or NULL. */
static const struct cand *pick_other(const struct cand *c, size_t i, size_t end,
				     const struct cand *ref, const char **how, int64_t *best_ov)
{
	const struct cand *best = NULL;
	int64_t ov;
	size_t j;

	*how = "largest overlap";
	*best_ov = 0;
	for (j = i; j < end; j++) {
		ov = overlap(ref->start, ref->end, c[j].start, c[j].end);
		if (ov > *best_ov || (ov == *best_ov && ov && c[j].f->segment < best->f->segment)) {
			best = &c[j];
			*best_ov = ov;
		}
	}
	if (best)
		return best;
	*how = "same segment number";
	for (j = i; j < end; j++)
		if (c[j].f->segment == ref->f->segment)
			best = &c[j];
	return best;
}

static int add_missing(struct tm_plan *p, size_t *mcap, struct mf_budget *b,
		       const struct cand *k)
{
	char label[512];
	int ret;

	tm_key_label(k->m, k->f, label, sizeof(label));
	ret = mf_grow(b, &p->missing, p->nmissing, mcap, sizeof(char *), 8);
	if (!ret)
		ret = mf_charge(b, MF_ALLOC(strlen(label) + 1));
	if (ret)
		return ret;
	p->missing[p->nmissing] = strdup(label);
	if (!p->missing[p->nmissing])
		return -ENOMEM;
	p->nmissing++;
	return 0;
}

/* base: the earliest aligned start of the picks; each one's shift. */
static int plan_shifts(struct tm_plan *p, const int64_t *starts, char *err, size_t errlen)
{
	size_t i;

	p->base_ns = INT64_MAX;
	for (i = 0; i < p->n; i++)
		if (starts[i] < p->base_ns)
			p->base_ns = starts[i];
	for (i = 0; i < p->n; i++)
		if (__builtin_sub_overflow(p->picks[i].m->offset_ns, p->base_ns, &p->picks[i].shift_ns)) {
			snprintf(err, errlen, "the clock offsets of the directories are too far apart "
				 "to align (not a real job)");
			return -ERANGE;
		}
	return 0;
}

static int plan_picks(struct tm_plan *p, const struct cand *c, size_t nc, size_t nkeys,
		      long long segment, struct mf_budget *b, char *err, size_t errlen)
{
	const struct cand *ref, *best;
	size_t i, end, mcap = 0;
	char label[512], shownb[512];
	int64_t *starts, ov;
	const char *how;
	int ret;

	end = rank_end(c, nc, 0);
	ref = pick_reference(c, end, segment);
	if (!ref) {
		tm_key_label(c[0].m, c[0].f, label, sizeof(label));
		snprintf(err, errlen, "%s has no segment %lld of region '%s'",
			 text_shown(shownb, sizeof(shownb), label), segment, p->region);
		return -ENOENT;
	}
	ret = mf_charge(b, MF_ALLOC(nkeys * (sizeof(*p->picks) + sizeof(*starts))));
	if (ret)
		return ret;
	p->picks = calloc(nkeys, sizeof(*p->picks));
	starts = calloc(nkeys, sizeof(*starts));
	if (!p->picks || !starts) {
		free(starts);
		return -ENOMEM;
	}
	starts[0] = ref->start;
	p->picks[p->n++] = (struct tm_pick){ ref->m, ref->f, "reference", span(ref->start, ref->end), 0 };
	for (i = end; i < nc && !ret; i = end) {
		end = rank_end(c, nc, i);
		best = pick_other(c, i, end, ref, &how, &ov);
		if (!best) {
			ret = add_missing(p, &mcap, b, &c[i]);
			continue;
		}
		starts[p->n] = best->start;
		p->picks[p->n++] = (struct tm_pick){ best->m, best->f, how, ov, 0 };
	}
	if (!ret)
		ret = plan_shifts(p, starts, err, errlen);
	free(starts);
	return ret;
}

static size_t count_ranks(const struct cand *c, size_t nc)
{
	size_t i, n = 0;

	for (i = 0; i < nc; i = rank_end(c, nc, i))
		n++;
	return n;
}

int tm_plan_build(struct manifest *ms, size_t n, const char *region, long long segment,
		  struct tm_plan *p, char *err, size_t errlen)
{
	struct mf_budget *b = n ? ms->budget : NULL;
	struct cand *c = NULL;
	size_t i, nc = 0, nkeys;
	char shownb[512];
	int ret = 0;

	memset(p, 0, sizeof(*p));
	err[0] = 0;
	for (i = 0; i < n; i++)
		if (ms[i].clock_source == MF_CLOCK_NONE) {
			snprintf(err, errlen, "%s: cannot align clocks: manifest.json has no usable \"clock\" "
				 "and no summary gives start_wallclock with start_us",
				 text_shown(shownb, sizeof(shownb), ms[i].dir));
			return -EINVAL;
		}
	if (!region)
		ret = common_region(ms, n, &region);
	if (!ret && !region) {
		snprintf(err, errlen, "no segment with start and end times in the given directories");
		return -ENOENT;
	}
	if (!ret && !(p->region = strdup(region)))
		ret = -ENOMEM;
	if (!ret)
		ret = collect(ms, n, region, &c, &nc, err, errlen);
	if (ret)
		goto cleanup;
	nkeys = count_ranks(c, nc);
	if (!nkeys) {
		snprintf(err, errlen, "no segment of region '%s' in the given directories",
			 text_shown(shownb, sizeof(shownb), region));
		ret = -ENOENT;
		goto cleanup;
	}
	if (nkeys > TM_SOURCES_MAX) {
		snprintf(err, errlen, "%zu ranks: more than %d", nkeys, TM_SOURCES_MAX);
		ret = -E2BIG;
		goto cleanup;
	}
	ret = plan_picks(p, c, nc, nkeys, segment, b, err, errlen);
cleanup:
	if (ret == -ENOSPC)
		mf_budget_error(b, err, errlen);
	else if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(c);
	if (ret)
		tm_plan_free(p);
	return ret;
}

void tm_plan_free(struct tm_plan *p)
{
	size_t i;

	for (i = 0; i < p->nmissing; i++)
		free(p->missing[i]);
	free(p->missing);
	free(p->picks);
	free(p->region);
	memset(p, 0, sizeof(*p));
}
