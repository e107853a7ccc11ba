// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Segments of every rank grouped by training step (step_pairs.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "offline/step_pairs.h"

#define NONE SIZE_MAX

/* What sorting needs beside the array it sorts (qsort has no context). */
static const struct manifest *sort_ms;
static const struct sp_seg *sort_segs;

static const struct mf_file *seg_file(const struct sp_seg *s)
{
	return &sort_ms[s->m].files[s->f];
}

static int cmp_region(const struct sp_seg *a, const struct sp_seg *b)
{
	return strcmp(seg_file(a)->region, seg_file(b)->region);
}

/* The stream key of a segment: region, host, rank, restart, pid (when
 * files are named by pid), directory. */
static int cmp_stream_key(const struct sp_seg *a, const struct sp_seg *b)
{
	const struct mf_file *x = seg_file(a), *y = seg_file(b);
	int px = x->pid_named ? x->pid : 0, py = y->pid_named ? y->pid : 0;
	int c = cmp_region(a, b);

	if (!c)
		c = strcmp(sort_ms[a->m].hostname, sort_ms[b->m].hostname);
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

/* Indexes into sort_segs: by time (by stream on ties). */
static int cmp_idx_time(const void *x, const void *y)
{
	const struct sp_seg *a = &sort_segs[*(const size_t *)x];
	const struct sp_seg *b = &sort_segs[*(const size_t *)y];
	int c = cmp_time(a, b);

	if (c)
		return c;
	return a->stream < b->stream ? -1 : a->stream > b->stream;
}

/* ... by region, then time. */
static int cmp_idx_region_time(const void *x, const void *y)
{
	int c = cmp_region(&sort_segs[*(const size_t *)x], &sort_segs[*(const size_t *)y]);

	return c ? c : cmp_idx_time(x, y);
}

/* ... by step key, then time (one region). */
static int cmp_idx_key(const void *x, const void *y)
{
	const struct sp_seg *a = &sort_segs[*(const size_t *)x];
	const struct sp_seg *b = &sort_segs[*(const size_t *)y];
	int c = strcmp(seg_file(a)->step_key, seg_file(b)->step_key);

	return c ? c : cmp_idx_time(x, y);
}

/* The final order: by step (steps are by region), then stream. */
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

static bool wanted(const struct manifest *m, const struct mf_file *f, const struct sp_opts *o)
{
	return f->have_summary && f->region && (!o->region || !strcmp(f->region, o->region)) &&
	       (!o->keep || o->keep(m, f));
}

/* The segments with their wall-clock times; counted-false ones and those
 * without times counted in @uncounted and @no_times (per file, for the
 * regions to take theirs once they are known). */
static int collect(struct step_pairs *p, const struct manifest *ms, size_t n,
		   const struct sp_opts *o, struct mf_budget *b)
{
	size_t i, j, total = 0;
	uint64_t bytes;
	int ret;

	for (i = 0; i < n; i++)
		for (j = 0; j < ms[i].nfiles; j++)
			total += wanted(&ms[i], &ms[i].files[j], o);
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

			if (!wanted(&ms[i], f, o) || (!f->counted && !o->with_uncounted))
				continue;
			*s = (struct sp_seg){ .m = i, .f = j, .step = NONE };
			if (mf_file_wallclock(&ms[i], f, &s->start, &s->end))
				continue;
			p->nsegs++;
		}
	return 0;
}

static int charge_array(struct step_pairs *p, struct mf_budget *b, void **arr, size_t n,
			size_t size)
{
	uint64_t bytes = MF_ALLOC((n ? n : 1) * size);
	int ret = mf_charge(b, bytes);

	if (ret)
		return ret;
	p->charged += bytes;
	*arr = calloc(n ? n : 1, size);
	return *arr ? 0 : -ENOMEM;
}

static int make_streams(struct step_pairs *p, struct mf_budget *b)
{
	size_t i, n = 0;
	int ret;

	if (p->nsegs)
		qsort(p->segs, p->nsegs, sizeof(*p->segs), cmp_by_stream);
	for (i = 0; i < p->nsegs; i++)
		n += !i || cmp_stream_key(&p->segs[i - 1], &p->segs[i]);
	ret = charge_array(p, b, (void **)&p->streams, n, sizeof(*p->streams));
	if (ret)
		return ret;
	for (i = 0; i < p->nsegs; i++) {
		if (!i || cmp_stream_key(&p->segs[i - 1], &p->segs[i]))
			p->streams[p->nstreams++] = (struct sp_stream){ p->segs[i].m, p->segs[i].f, 0 };
		p->segs[i].stream = p->nstreams - 1;
		p->streams[p->nstreams - 1].nsegs++;
	}
	return 0;
}

/* The regions, by name, each with its streams (contiguous: sorted so). */
static int make_regions(struct step_pairs *p, struct mf_budget *b)
{
	size_t i, n = 0;
	int ret;

	for (i = 0; i < p->nsegs; i++)
		n += !i || cmp_region(&p->segs[i - 1], &p->segs[i]);
	ret = charge_array(p, b, (void **)&p->regions, n, sizeof(*p->regions));
	if (ret)
		return ret;
	for (i = 0; i < p->nstreams; i++) {
		const char *name = sort_ms[p->streams[i].m].files[p->streams[i].f].region;
		struct sp_region *r = &p->regions[p->nregions ? p->nregions - 1 : 0];

		if (!p->nregions || strcmp(r->name, name)) {
			r = &p->regions[p->nregions++];
			r->name = name;
			r->first_stream = i;
		}
		r->nstreams++;
	}
	return 0;
}

/* By key: a run of one key is a step, a stream's second segment of it
 * begins another. */
static void pair_by_key(struct step_pairs *p, const size_t *order, size_t n, size_t *last,
			size_t *steps)
{
	struct sp_seg *s, *prev = NULL;
	size_t i, cur = NONE;

	for (i = 0; i < n; i++) {
		s = &p->segs[order[i]];
		if (!prev || strcmp(seg_file(prev)->step_key, seg_file(s)->step_key) ||
		    last[s->stream] == cur)
			cur = (*steps)++;
		s->step = cur;
		last[s->stream] = cur;
		prev = s;
	}
}

struct active {
	size_t step, anchor;      /* the step, its first segment */
};

/* By time: each segment into the step it overlaps most (step_pairs.h). */
static void pair_by_time(struct step_pairs *p, const size_t *order, size_t n, size_t *last,
			 struct active *act, size_t *steps)
{
	size_t i, k, nact = 0, best, old;
	int64_t ov, best_ov;
	struct sp_seg *s;

	for (i = 0; i < n; i++) {
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
			best = (*steps)++;
			if (nact == SP_ACTIVE_MAX) { /* the oldest candidate makes room */
				for (old = 0, k = 1; k < nact; k++)
					if (act[k].step < act[old].step)
						old = k;
				act[old] = act[--nact];
			}
			act[nact++] = (struct active){ best, order[i] };
		}
		s->step = best;
		last[s->stream] = best;
	}
}

/* Each region's segments (@order: by region, then time) paired its way. */
static void pair_regions(struct step_pairs *p, size_t *order, size_t *last, struct active *act,
			 size_t *nsteps)
{
	struct sp_region *r;
	size_t lo, hi;
	bool keyed;

	for (lo = 0; lo < p->nsegs; lo = hi) {
		keyed = true;
		for (hi = lo; hi < p->nsegs && !cmp_region(&p->segs[order[lo]], &p->segs[order[hi]]);
		     hi++)
			keyed = keyed && seg_file(&p->segs[order[hi]])->step_key[0];
		r = (struct sp_region *)sp_region_find(p, seg_file(&p->segs[order[lo]])->region);
		if (r)
			r->by_key = keyed;
		if (keyed) {
			qsort(order + lo, hi - lo, sizeof(*order), cmp_idx_key);
			pair_by_key(p, order + lo, hi - lo, last, nsteps);
		} else {
			pair_by_time(p, order + lo, hi - lo, last, act, nsteps);
		}
	}
}

/* Indexes into a step's members, by start. */
static int cmp_member_start(const void *x, const void *y)
{
	const struct sp_seg *a = &sort_segs[*(const size_t *)x];
	const struct sp_seg *b = &sort_segs[*(const size_t *)y];

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
	sort_segs = m;
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

struct step_start {
	const char *region;
	int64_t start;
	size_t old;
};

static int cmp_step_start(const void *x, const void *y)
{
	const struct step_start *a = x, *b = y;
	int c = strcmp(a->region, b->region);

	if (c)
		return c;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->old < b->old ? -1 : a->old > b->old; /* equal starts: the pairing's order */
}

/* Steps by region, then earliest start (by key they come in key order). */
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
		v[i] = (struct step_start){ "", INT64_MAX, i };
	for (i = 0; i < p->nsegs; i++) {
		struct step_start *t = &v[p->segs[i].step];

		t->region = seg_file(&p->segs[i])->region;
		if (p->segs[i].start < t->start)
			t->start = p->segs[i].start;
	}
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

/* Each step's members (@p's segments sorted by step), bounds, region, number. */
static void fill_steps(struct step_pairs *p, size_t *tmp)
{
	struct sp_region *r;
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
	for (i = 0, r = NULL; i < p->nsteps; i++) {
		struct sp_step *t = &p->steps[i];
		const struct sp_seg *first = &p->segs[t->first];
		const char *name = seg_file(first)->region;

		if (!r || strcmp(r->name, name))
			r = (struct sp_region *)sp_region_find(p, name);
		if (!r) /* every step's region is one of them: not reached */
			continue;
		if (!r->nsteps)
			r->first_step = i;
		t->region = (size_t)(r - p->regions);
		t->number = r->nsteps++;
		t->disjoint = r->by_key && is_disjoint(first, t->n, tmp);
	}
}

/* What was left out, per region (of the regions that were paired). */
static void count_left_out(struct step_pairs *p, const struct manifest *ms, size_t n,
			   const struct sp_opts *o)
{
	struct sp_region *r;
	int64_t s, e;
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < ms[i].nfiles; j++) {
			const struct mf_file *f = &ms[i].files[j];
			bool left = !f->counted && !o->with_uncounted;

			if (!wanted(&ms[i], f, o))
				continue;
			if (!left && !mf_file_wallclock(&ms[i], f, &s, &e))
				continue;
			r = (struct sp_region *)sp_region_find(p, f->region);
			if (left)
				p->uncounted++;
			else
				p->no_times++;
			if (r && left)
				r->uncounted++;
			else if (r)
				r->no_times++;
		}
	for (i = 0; o->with_uncounted && i < p->nsegs; i++)
		if (!sp_file(p, ms, i)->counted) {
			p->uncounted++;
			p->regions[p->steps[p->segs[i].step].region].uncounted++;
		}
}

int step_pairs_build(struct step_pairs *p, const struct manifest *ms, size_t n,
		     const struct sp_opts *o, struct mf_budget *b)
{
	struct active *act = NULL;
	size_t *order = NULL, *last = NULL, i, nsteps = 0;
	int ret;

	memset(p, 0, sizeof(*p));
	sort_ms = ms;
	ret = collect(p, ms, n, o, b);
	if (!ret)
		ret = make_streams(p, b);
	if (!ret)
		ret = make_regions(p, b);
	if (ret)
		goto out;
	/* charged in collect(): two size_t per segment */
	order = malloc((p->nsegs ? p->nsegs : 1) * sizeof(*order));
	last = malloc((p->nsegs ? p->nsegs : 1) * sizeof(*last));
	act = malloc(SP_ACTIVE_MAX * sizeof(*act));
	if (!order || !last || !act) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nsegs; i++)
		order[i] = last[i] = i;
	for (i = 0; i < p->nstreams; i++)
		last[i] = NONE;
	sort_segs = p->segs;
	if (p->nsegs)
		qsort(order, p->nsegs, sizeof(*order), cmp_idx_region_time);
	pair_regions(p, order, last, act, &nsteps);
	ret = charge_array(p, b, (void **)&p->steps, nsteps, sizeof(*p->steps));
	if (ret)
		goto out;
	p->nsteps = nsteps;
	ret = renumber(p, b);
	if (ret)
		goto out;
	if (p->nsegs)
		qsort(p->segs, p->nsegs, sizeof(*p->segs), cmp_by_step);
	fill_steps(p, order);
	count_left_out(p, ms, n, o);
out:
	free(order);
	free(last);
	free(act);
	sort_ms = NULL;
	sort_segs = NULL;
	return ret;
}

const struct sp_region *sp_region_find(const struct step_pairs *p, const char *name)
{
	size_t lo = 0, hi = p->nregions, mid;
	int c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = strcmp(p->regions[mid].name, name);
		if (!c)
			return &p->regions[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

size_t sp_missing(const struct step_pairs *p, size_t s, size_t *out, size_t max)
{
	const struct sp_step *t = &p->steps[s];
	const struct sp_region *r = &p->regions[t->region];
	size_t i, k = 0, got = 0;

	/* members are distinct streams of the region, sorted: the walk stops
	 * after the first @max missing ones, within n + max streams */
	for (i = r->first_stream; out && got < max && i < r->first_stream + r->nstreams; i++) {
		while (k < t->n && p->segs[t->first + k].stream < i)
			k++;
		if (k < t->n && p->segs[t->first + k].stream == i)
			continue;
		out[got++] = i;
	}
	return r->nstreams - t->n;
}

bool sp_has_stream(const struct step_pairs *p, size_t s, size_t stream)
{
	const struct sp_step *t = &p->steps[s];
	size_t lo = t->first, hi = t->first + t->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->segs[mid].stream == stream)
			return true;
		if (p->segs[mid].stream < stream)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

void step_pairs_free(struct step_pairs *p, struct mf_budget *b)
{
	free(p->segs);
	free(p->streams);
	free(p->steps);
	free(p->regions);
	mf_uncharge(b, p->charged);
	memset(p, 0, sizeof(*p));
}
