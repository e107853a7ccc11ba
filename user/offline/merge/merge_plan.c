// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf merge`: which segment of each rank goes into the merged trace, and
 * the shift that aligns it. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "offline/step_pairs.h"
#include "offline/merge/trace_merge.h"
#include "offline/merge/merge_internal.h"
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

/* A merge needs the monotonic times (the trace's ts) and the offset. */
static bool mergeable(const struct manifest *m, const struct mf_file *f)
{
	(void)m;
	return f->have_times;
}

/* Every segment of @region: its times with the node's offset fit in
 * int64 (else the directory is not believed, and said so). */
static int check_times(struct manifest *ms, size_t n, const char *region, char *err, size_t errlen)
{
	char name[PATH_MAX + 256], shownb[PATH_MAX];
	int64_t s, e;
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < ms[i].nfiles; j++) {
			const struct mf_file *f = &ms[i].files[j];

			if (!in_region(f, region) ||
			    (!__builtin_add_overflow(f->start_ns, mf_node_offset(&ms[i]), &s) &&
			     !__builtin_add_overflow(f->end_ns, mf_node_offset(&ms[i]), &e)))
				continue;
			snprintf(name, sizeof(name), "%s/%s", ms[i].dir, f->summary_json);
			snprintf(err, errlen, "%s: start_us and end_us with the node's clock offset "
				 "do not fit in 64-bit nanoseconds: not a real segment",
				 text_shown(shownb, sizeof(shownb), name));
			return -ERANGE;
		}
	return 0;
}

/* The stream of the lowest rank (rank, restart, host, pid, directory). */
static size_t lowest_stream(const struct step_pairs *sp, const struct manifest *ms,
			    const struct sp_region *r)
{
	size_t i, best = r->first_stream;

	for (i = r->first_stream + 1; i < r->first_stream + r->nstreams; i++) {
		const struct sp_stream *a = &sp->streams[i], *b = &sp->streams[best];
		int c = cmp_key(&ms[a->m].files[a->f], &ms[a->m], &ms[b->m].files[b->f], &ms[b->m]);

		if (c < 0 || (!c && a->m < b->m))
			best = i;
	}
	return best;
}

/* Members of step @s that are complete. */
static size_t complete_members(const struct step_pairs *sp, const struct manifest *ms, size_t s)
{
	size_t i, n = 0;

	for (i = sp->steps[s].first; i < sp->steps[s].first + sp->steps[s].n; i++)
		n += !sp_file(sp, ms, i)->incomplete;
	return n;
}

/* By default: the first step every rank has complete, else the first with
 * the most ranks (complete ones first). */
static size_t default_step(const struct step_pairs *sp, const struct manifest *ms,
			   const struct sp_region *r, const char **chosen)
{
	size_t s, best = r->first_step, bn = 0, bc = 0, c;

	for (s = r->first_step; s < r->first_step + r->nsteps; s++) {
		c = complete_members(sp, ms, s);
		if (c == r->nstreams) {
			*chosen = "the first step every rank has complete";
			return s;
		}
		if (sp->steps[s].n > bn || (sp->steps[s].n == bn && c > bc)) {
			best = s;
			bn = sp->steps[s].n;
			bc = c;
		}
	}
	*chosen = "the first step with the most ranks (no step has every rank complete)";
	return best;
}

/* The step asked for (--step, --segment) or the default: its index in
 * sp->steps, or -ENOENT with the message said. */
static long choose_step(const struct step_pairs *sp, const struct manifest *ms,
			const struct sp_region *r, const struct tm_opts *o, const char **chosen,
			char *err, size_t errlen)
{
	char label[512], shownb[512], shownr[512];
	size_t i, ref;

	text_shown(shownr, sizeof(shownr), r->name);
	if (o->step >= 0) {
		*chosen = "--step";
		if ((unsigned long long)o->step < r->nsteps)
			return (long)(r->first_step + (size_t)o->step);
		snprintf(err, errlen, "region '%s' has %zu step%s (0 to %zu): no step %lld", shownr,
			 r->nsteps, r->nsteps == 1 ? "" : "s", r->nsteps ? r->nsteps - 1 : 0, o->step);
		return -ENOENT;
	}
	if (o->segment < 0)
		return (long)default_step(sp, ms, r, chosen);
	*chosen = "--segment: the step of the reference rank's segment";
	ref = lowest_stream(sp, ms, r);
	for (i = 0; i < sp->nsegs; i++)
		if (sp->segs[i].stream == ref && sp_file(sp, ms, i)->segment == (uint64_t)o->segment)
			return (long)sp->segs[i].step;
	tm_key_label(&ms[sp->streams[ref].m], &ms[sp->streams[ref].m].files[sp->streams[ref].f],
		     label, sizeof(label));
	snprintf(err, errlen, "%s has no segment %lld of region '%s'%s",
		 text_shown(shownb, sizeof(shownb), label), o->segment, shownr,
		 o->with_uncounted ? "" : " that counts (--include-uncounted takes the others)");
	return -ENOENT;
}

static int add_missing(struct tm_plan *p, size_t *mcap, struct mf_budget *b,
		       const struct manifest *m, const struct mf_file *f)
{
	char label[512];
	int ret;

	tm_key_label(m, f, label, sizeof(label));
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
static int plan_shifts(struct tm_plan *p, char *err, size_t errlen)
{
	int64_t start;
	size_t i;

	p->base_ns = INT64_MAX;
	for (i = 0; i < p->n; i++) {
		/* checked: check_times() */
		start = p->picks[i].f->start_ns + mf_node_offset(p->picks[i].m);
		if (start < p->base_ns)
			p->base_ns = start;
	}
	for (i = 0; i < p->n; i++)
		if (__builtin_sub_overflow(mf_node_offset(p->picks[i].m), p->base_ns,
					   &p->picks[i].shift_ns)) {
			snprintf(err, errlen, "the clock offsets of the directories are too far apart "
				 "to align (not a real job)");
			return -ERANGE;
		}
	return 0;
}

static const struct manifest *pick_ms;

/* Picks in rank order (rank, restart, host, pid, directory). */
static int cmp_pick(const void *x, const void *y)
{
	const struct sp_seg *a = *(const struct sp_seg *const *)x, *b = *(const struct sp_seg *const *)y;
	int c = cmp_key(&pick_ms[a->m].files[a->f], &pick_ms[a->m], &pick_ms[b->m].files[b->f],
			&pick_ms[b->m]);

	return c ? c : a->m < b->m ? -1 : a->m > b->m;
}

/* The members of step @s as picks, the lowest rank first; the region's
 * other ranks as missing. */
static int plan_picks(struct tm_plan *p, const struct step_pairs *sp, const struct manifest *ms,
		      size_t s, struct mf_budget *b)
{
	const struct sp_step *t = &sp->steps[s];
	const struct sp_seg **v;
	size_t i, mcap = 0, nmiss, *miss;
	uint64_t bytes;
	int ret;

	nmiss = sp_missing(sp, s, NULL, 0);
	bytes = MF_ALLOC(t->n * (sizeof(*p->picks) + sizeof(*v))) + MF_ALLOC(nmiss * sizeof(*miss));
	ret = mf_charge(b, bytes);
	if (ret)
		return ret;
	p->picks = calloc(t->n ? t->n : 1, sizeof(*p->picks));
	v = malloc((t->n ? t->n : 1) * sizeof(*v));
	miss = malloc((nmiss ? nmiss : 1) * sizeof(*miss));
	if (!p->picks || !v || !miss) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->n; i++)
		v[i] = &sp->segs[t->first + i];
	pick_ms = ms;
	qsort(v, t->n, sizeof(*v), cmp_pick);
	for (i = 0; i < t->n; i++) {
		struct tm_pick *k = &p->picks[p->n++];

		k->m = &ms[v[i]->m];
		k->f = &ms[v[i]->m].files[v[i]->f];
		k->how = !i ? "reference" : p->by_key ? "same step (step key)" : "same step (time overlap)";
		k->overlap_ns = sp_overlap(v[0], v[i]);
		if (i && !k->overlap_ns)
			p->apart++;
	}
	sp_missing(sp, s, miss, nmiss);
	for (i = 0; i < nmiss && !ret; i++)
		ret = add_missing(p, &mcap, b, &ms[sp->streams[miss[i]].m],
				  &ms[sp->streams[miss[i]].m].files[sp->streams[miss[i]].f]);
out:
	free(v);
	free(miss);
	mf_uncharge(b, bytes - MF_ALLOC(t->n * sizeof(*p->picks)));
	return ret;
}

static int clocks_known(struct manifest *ms, size_t n, char *err, size_t errlen)
{
	char shownb[512];
	size_t i;

	for (i = 0; i < n; i++)
		if (ms[i].clock_source == MF_CLOCK_NONE) {
			snprintf(err, errlen, "%s: cannot align clocks: manifest.json has no usable \"clock\" "
				 "and no summary gives start_wallclock with start_us",
				 text_shown(shownb, sizeof(shownb), ms[i].dir));
			return -EINVAL;
		}
	return 0;
}

int tm_plan_build(struct manifest *ms, size_t n, const struct tm_opts *o, struct tm_plan *p,
		  char *err, size_t errlen)
{
	struct sp_opts so = { .with_uncounted = o->with_uncounted, .keep = mergeable };
	struct mf_budget *b = n ? ms->budget : NULL;
	const char *region = o->region;
	const struct sp_region *r;
	struct step_pairs sp = { 0 };
	char shownb[512];
	long s;
	int ret;

	memset(p, 0, sizeof(*p));
	err[0] = 0;
	ret = clocks_known(ms, n, err, errlen);
	if (ret)
		return ret;
	if (!region)
		ret = common_region(ms, n, &region);
	if (!ret && !region) {
		snprintf(err, errlen, "no segment with start and end times in the given directories");
		return -ENOENT;
	}
	if (!ret && !(p->region = strdup(region)))
		ret = -ENOMEM;
	if (!ret)
		ret = check_times(ms, n, region, err, errlen);
	so.region = region;
	if (!ret)
		ret = step_pairs_build(&sp, ms, n, &so, b);
	if (ret)
		goto cleanup;
	r = sp_region_find(&sp, region);
	if (!r || !r->nsteps) {
		snprintf(err, errlen, "no segment of region '%s' in the given directories%s",
			 text_shown(shownb, sizeof(shownb), region), sp.uncounted && !o->with_uncounted ?
			 " that counts (--include-uncounted takes the others)" : "");
		ret = -ENOENT;
		goto cleanup;
	}
	if (r->nstreams > TM_SOURCES_MAX) {
		snprintf(err, errlen, "%zu ranks: more than %d", r->nstreams, TM_SOURCES_MAX);
		ret = -E2BIG;
		goto cleanup;
	}
	p->by_key = r->by_key;
	p->uncounted = r->uncounted;
	s = choose_step(&sp, ms, r, o, &p->chosen, err, errlen);
	if (s < 0) {
		ret = (int)s;
		goto cleanup;
	}
	p->step = sp.steps[s].number;
	ret = plan_picks(p, &sp, ms, (size_t)s, b);
	if (!ret)
		ret = plan_shifts(p, err, errlen);
cleanup:
	if (ret == -ENOSPC)
		mf_budget_error(b, err, errlen);
	else if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	step_pairs_free(&sp, b);
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
