// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Segments of every rank grouped by training step (step_pairs.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "offline/step_pairs.h"

#define NONE SIZE_MAX

/* What sorting needs beside the segments (qsort has no context). */
static const struct manifest *sort_ms;
static const struct step_pairs *sort_p;

static const struct mf_file *seg_file(const struct sp_seg *s)
{
	return &sort_ms[s->m].files[s->f];
}

/* The stream key of a segment: host, rank, restart, pid (when files are
 * named by pid), directory. */
static int cmp_stream_key(const struct sp_seg *a, const struct sp_seg *b)
{
	const struct mf_file *x = seg_file(a), *y = seg_file(b);
	int px = x->pid_named ? x->pid : 0, py = y->pid_named ? y->pid : 0;
	int c = strcmp(sort_ms[a->m].hostname, sort_ms[b->m].hostname);

	if (c)
		return c;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->restart != y->restart)
		return x->restart < y->restart ? -1 : 1;
	if (px != py)
		return px < py ? -1 : 1;
	return a->m < b->m ? -1 : a->m > b->m;
}

static int cmp_time(const struct sp_seg *a, const struct sp_seg *b)
{
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return 0;
}

/* Streams together, each in time order. */
static int cmp_by_stream(const void *x, const void *y)
{
	const struct sp_seg *a = x, *b = y;
	int c = cmp_stream_key(a, b);

	if (!c)
		c = cmp_time(a, b);
	return c ? c : a->f < b->f ? -1 : a->f > b->f;
}

/* Indexes into sort_p->segs: in time order (by stream on ties). */
static int cmp_idx_time(const void *x, const void *y)
{
	const struct sp_seg *a = &sort_p->segs[*(const size_t *)x];
	const struct sp_seg *b = &sort_p->segs[*(const size_t *)y];
	int c = cmp_time(a, b);

	if (c)
		return c;
	return a->stream < b->stream ? -1 : a->stream > b->stream;
}

/* ... by step key, then time. */
static int cmp_idx_key(const void *x, const void *y)
{
	const struct sp_seg *a = &sort_p->segs[*(const size_t *)x];
	const struct sp_seg *b = &sort_p->segs[*(const size_t *)y];
	int c = strcmp(seg_file(a)->step_key, seg_file(b)->step_key);

	return c ? c : cmp_idx_time(x, y);
}

/* The final order: by step, then stream. */
static int cmp_by_step(const void *x, const void *y)
{
	const struct sp_seg *a = x, *b = y;

	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return cmp_time(a, b);
}

int64_t sp_overlap(const struct sp_seg *a, const struct sp_seg *b)
{
	int64_t s = a->start > b->start ? a->start : b->start, e = a->end < b->end ? a->end : b->end, d;

	if (e <= s)
		return 0;
	return __builtin_sub_overflow(e, s, &d) ? INT64_MAX : d;
}

static bool wanted(const struct mf_file *f, const char *region)
{
	return f->have_summary && f->region && !strcmp(f->region, region);
}

/* The segments of @region with their wall-clock times. */
static int collect(struct step_pairs *p, const struct manifest *ms, size_t n, const char *region,
		   bool with_uncounted, struct mf_budget *b)
{
	size_t i, j, total = 0;
	uint64_t bytes;
	int ret;

	for (i = 0; i < n; i++)
		for (j = 0; j < ms[i].nfiles; j++)
			total += wanted(&ms[i].files[j], region);
	/* the segments, an order of them, and per stream its last step */
	bytes = MF_ALLOC((total ? total : 1) * (sizeof(struct sp_seg) + 2 * sizeof(size_t)));
	ret = mf_charge(b, bytes);
	if (ret)
		return ret;
	p->charged += bytes;
	p->segs = malloc((total ? total : 1) * sizeof(*p->segs));
	if (!p->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		for (j = 0; j < ms[i].nfiles; j++) {
			const struct mf_file *f = &ms[i].files[j];
			struct sp_seg *s = &p->segs[p->nsegs];

			if (!wanted(f, region))
				continue;
			if (!f->counted) {
				p->uncounted++;
				if (!with_uncounted)
					continue;
			}
			*s = (struct sp_seg){ .m = i, .f = j, .step = NONE };
			if (mf_file_wallclock(&ms[i], f, &s->start, &s->end)) {
				p->no_times++;
				continue;
			}
			p->nsegs++;
		}
	return 0;
}

static int make_streams(struct step_pairs *p, struct mf_budget *b)
{
	size_t i, n = 0;
	uint64_t bytes;
	int ret;

	if (p->nsegs)
		qsort(p->segs, p->nsegs, sizeof(*p->segs), cmp_by_stream);
	for (i = 0; i < p->nsegs; i++)
		n += !i || cmp_stream_key(&p->segs[i - 1], &p->segs[i]);
	bytes = MF_ALLOC((n ? n : 1) * sizeof(*p->streams));
	ret = mf_charge(b, bytes);
	if (ret)
		return ret;
	p->charged += bytes;
	p->streams = calloc(n ? n : 1, sizeof(*p->streams));
	if (!p->streams)
		return -ENOMEM;
	for (i = 0; i < p->nsegs; i++) {
		if (!i || cmp_stream_key(&p->segs[i - 1], &p->segs[i]))
			p->streams[p->nstreams++] = (struct sp_stream){ p->segs[i].m, p->segs[i].f, 0 };
		p->segs[i].stream = p->nstreams - 1;
		p->streams[p->nstreams - 1].nsegs++;
	}
	return 0;
}

static bool all_keyed(const struct step_pairs *p)
{
	size_t i;

	for (i = 0; i < p->nsegs; i++)
		if (!seg_file(&p->segs[i])->step_key[0])
			return false;
	return p->nsegs > 0;
}

/* By key: a run of one key is a step, a stream's second segment of it
 * begins another. */
static size_t pair_by_key(struct step_pairs *p, const size_t *order, size_t *last)
{
	size_t i, steps = 0, cur = NONE;
	struct sp_seg *s, *prev = NULL;

	for (i = 0; i < p->nsegs; i++) {
		s = &p->segs[order[i]];
		if (!prev || strcmp(seg_file(prev)->step_key, seg_file(s)->step_key) ||
		    last[s->stream] == cur)
			cur = steps++;
		s->step = cur;
		last[s->stream] = cur;
		prev = s;
	}
	return steps;
}

struct active {
	size_t step, anchor;      /* the step, its first segment */
};

/* By time: each segment into the step it overlaps most (step_pairs.h). */
static size_t pair_by_time(struct step_pairs *p, const size_t *order, size_t *last,
			   struct active *act)
{
	size_t i, k, nact = 0, steps = 0, best;
	int64_t ov, best_ov;
	struct sp_seg *s;

	for (i = 0; i < p->nsegs; i++) {
		s = &p->segs[order[i]];
		best = NONE;
		best_ov = 0;
		for (k = 0; k < nact;) {
			const struct sp_seg *a = &p->segs[act[k].anchor];

			if (a->end <= s->start && a->start < s->start) { /* over: no later one meets it */
				act[k] = act[--nact];
				continue;
			}
			ov = sp_overlap(a, s);
			if ((last[s->stream] == NONE || act[k].step > last[s->stream]) &&
			    (ov > best_ov || (ov == best_ov && ov && act[k].step < best))) {
				best = act[k].step;
				best_ov = ov;
			}
			k++;
		}
		if (best == NONE) {
			best = steps++;
			if (nact == SP_ACTIVE_MAX) { /* the oldest candidate makes room */
				size_t old = 0;

				for (k = 1; k < nact; k++)
					if (act[k].step < act[old].step)
						old = k;
				act[old] = act[--nact];
			}
			act[nact++] = (struct active){ best, order[i] };
		}
		s->step = best;
		last[s->stream] = best;
	}
	return steps;
}

/* Indexes into a step's members, by start. */
static const struct sp_seg *sort_members;

static int cmp_member_start(const void *x, const void *y)
{
	const struct sp_seg *a = &sort_members[*(const size_t *)x];
	const struct sp_seg *b = &sort_members[*(const size_t *)y];

	return a->start < b->start ? -1 : a->start > b->start;
}

/* Whether the @n members' times form more than one piece (@tmp: room for @n). */
static bool is_disjoint(const struct sp_seg *m, size_t n, size_t *tmp)
{
	int64_t reach;
	size_t i;

	if (n < 2)
		return false;
	for (i = 0; i < n; i++)
		tmp[i] = i;
	sort_members = m;
	qsort(tmp, n, sizeof(*tmp), cmp_member_start);
	reach = m[tmp[0]].end;
	for (i = 1; i < n; i++) {
		if (m[tmp[i]].start >= reach)
			return true;
		if (m[tmp[i]].end > reach)
			reach = m[tmp[i]].end;
	}
	return false;
}

static int alloc_steps(struct step_pairs *p, size_t nsteps, struct mf_budget *b)
{
	uint64_t bytes = MF_ALLOC((nsteps ? nsteps : 1) * sizeof(*p->steps));
	int ret = mf_charge(b, bytes);

	if (ret)
		return ret;
	p->charged += bytes;
	p->steps = calloc(nsteps ? nsteps : 1, sizeof(*p->steps));
	if (!p->steps)
		return -ENOMEM;
	p->nsteps = nsteps;
	return 0;
}

struct step_start {
	int64_t start;
	size_t old;
};

static int cmp_step_start(const void *x, const void *y)
{
	const struct step_start *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->old < b->old ? -1 : a->old > b->old; /* equal starts: the key order */
}

/* By key, steps come out in key order: renumbered by their earliest start
 * (by time they are begun in that order already). */
static int renumber(struct step_pairs *p, struct mf_budget *b)
{
	size_t n = p->nsteps ? p->nsteps : 1, *to, i;
	uint64_t bytes = MF_ALLOC(n * (sizeof(struct step_start) + sizeof(*to)));
	struct step_start *v;
	int ret;

	ret = mf_charge(b, bytes);
	if (ret)
		return ret;
	v = malloc(n * sizeof(*v));
	to = malloc(n * sizeof(*to));
	if (!v || !to) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nsteps; i++)
		v[i] = (struct step_start){ INT64_MAX, i };
	for (i = 0; i < p->nsegs; i++)
		if (p->segs[i].start < v[p->segs[i].step].start)
			v[p->segs[i].step].start = p->segs[i].start;
	qsort(v, p->nsteps, sizeof(*v), cmp_step_start);
	for (i = 0; i < p->nsteps; i++)
		to[v[i].old] = i;
	for (i = 0; i < p->nsegs; i++)
		p->segs[i].step = to[p->segs[i].step];
out:
	free(v);
	free(to);
	mf_uncharge(b, bytes);
	return ret;
}

/* Each step's members (@p's segments sorted by step), bounds and shape. */
static void fill_steps(struct step_pairs *p, size_t *tmp)
{
	size_t i;

	for (i = 0; i < p->nsteps; i++) {
		p->steps[i].start = INT64_MAX;
		p->steps[i].end = INT64_MIN;
	}
	for (i = 0; i < p->nsegs; i++) {
		struct sp_step *t = &p->steps[p->segs[i].step];

		if (!t->n)
			t->first = i;
		t->n++;
		if (p->segs[i].start < t->start)
			t->start = p->segs[i].start;
		if (p->segs[i].end > t->end)
			t->end = p->segs[i].end;
	}
	for (i = 0; i < p->nsteps; i++)
		p->steps[i].disjoint = p->by_key &&
				       is_disjoint(&p->segs[p->steps[i].first], p->steps[i].n, tmp);
}

int step_pairs_build(struct step_pairs *p, const struct manifest *ms, size_t n, const char *region,
		     bool with_uncounted, struct mf_budget *b)
{
	struct active *act = NULL;
	size_t *order = NULL, *last = NULL, i, nsteps;

	int ret;

	memset(p, 0, sizeof(*p));
	sort_ms = ms;
	sort_p = p;
	ret = collect(p, ms, n, region, with_uncounted, b);
	if (!ret)
		ret = make_streams(p, b);
	if (ret)
		return ret;
	/* charged in collect(): two size_t per segment */
	order = malloc((p->nsegs ? p->nsegs : 1) * sizeof(*order));
	last = malloc((p->nsegs ? p->nsegs : 1) * sizeof(*last));
	act = malloc(SP_ACTIVE_MAX * sizeof(*act));
	if (!order || !last || !act) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nsegs; i++)
		order[i] = i;
	for (i = 0; i < p->nstreams; i++)
		last[i] = NONE;
	p->by_key = all_keyed(p);
	sort_p = p;
	if (p->nsegs)
		qsort(order, p->nsegs, sizeof(*order), p->by_key ? cmp_idx_key : cmp_idx_time);
	nsteps = p->by_key ? pair_by_key(p, order, last) : pair_by_time(p, order, last, act);
	ret = alloc_steps(p, nsteps, b);
	if (!ret && p->by_key)
		ret = renumber(p, b);
	if (ret)
		goto out;
	if (p->nsegs)
		qsort(p->segs, p->nsegs, sizeof(*p->segs), cmp_by_step);
	fill_steps(p, order);
out:
	free(order);
	free(last);
	free(act);
	sort_ms = NULL;
	sort_p = NULL;
	return ret;
}

size_t sp_missing(const struct step_pairs *p, size_t s, size_t *out, size_t max)
{
	const struct sp_step *t = &p->steps[s];
	size_t i, k = 0, got = 0;

	for (i = 0; i < p->nstreams; i++) {
		while (k < t->n && p->segs[t->first + k].stream < i)
			k++;
		if (k < t->n && p->segs[t->first + k].stream == i)
			continue;
		if (out && got < max)
			out[got] = i;
		got++;
	}
	return got;
}

void step_pairs_free(struct step_pairs *p, struct mf_budget *b)
{
	free(p->segs);
	free(p->streams);
	free(p->steps);
	mf_uncharge(b, p->charged);
	memset(p, 0, sizeof(*p));
}
