// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report`: aggregation across ranks, and its text and JSON forms. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked_math.h"
#include "util/row_table.h"
#include "offline/report/job_report.h"
#include "offline/report/job_report_colls.h"
#include "offline/report/job_report_dl.h"

/* The parent of a region row of a summary written before rows had one. */
#define SUB_UNKNOWN "\x1f"

/* strdup() charged to @b: 0, -ENOSPC or -ENOMEM. */
static int charged_strdup(struct mf_budget *b, const char *s, char **out)
{
	size_t len = strlen(s) + 1;
	int ret = mf_charge(b, MF_ALLOC(len));

	*out = NULL;
	if (ret)
		return ret;
	*out = malloc(len);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, s, len);
	return 0;
}

static void op_key(const void *arr, size_t i, const char **name, const char **kind)
{
	const struct jr_op *o = arr;

	*name = o[i].name;
	*kind = o[i].kind;
}

/* A new operator's name and kind, copies charged to the report's budget. */
static int op_init(void *row, const char *name, const char *kind, void *ctx)
{
	struct jr_op *o = row;
	int ret;

	ret = charged_strdup(ctx, name, &o->name);
	if (!ret)
		ret = charged_strdup(ctx, kind, &o->kind);
	if (ret)
		free(o->name);
	return ret;
}

static int op_get(struct job_report *r, struct jr_region *g, const char *name, const char *kind,
		  struct jr_op **out)
{
	struct charge_hook charge = mf_charger(r->budget);
	struct row_table t = { &g->ops, &g->nops, &g->opcap, sizeof(**out), 64, &g->index, op_key,
			       op_init, r->budget, &charge };
	void *o;
	int ret;

	ret = row_table_get(&t, name, kind, &o);
	*out = o;
	return ret;
}

static void region_name_key(const void *arr, size_t i, const char **name, const char **kind)
{
	*name = ((const struct jr_region *)arr)[i].name;
	*kind = "";
}

static int region_init(void *row, const char *name, const char *kind, void *ctx)
{
	(void)kind;
	return charged_strdup(ctx, name, &((struct jr_region *)row)->name);
}

static int region_get(struct job_report *r, const char *name, struct jr_region **out)
{
	struct charge_hook charge = mf_charger(r->budget);
	struct row_table t = { &r->regions, &r->nregions, &r->cap, sizeof(**out), 4,
			       &r->region_index, region_name_key, region_init, r->budget, &charge };
	void *g;
	int ret;

	ret = row_table_get(&t, name, "", &g);
	*out = g;
	return ret;
}

static void rank_key(const void *arr, size_t i, const char **name, const char **kind)
{
	const struct jr_rank *k = arr;

	*name = k[i].host;
	*kind = k[i].key;
}

struct rank_new {
	struct mf_budget *budget;
	const struct mf_file *f;
	int pid;
};

/* A new rank of a region: its host charged, its key and numbers from the file. */
static int rank_init(void *row, const char *host, const char *key, void *ctx)
{
	const struct rank_new *n = ctx;
	struct jr_rank *k = row;
	int ret;

	ret = charged_strdup(n->budget, host, &k->host);
	if (ret)
		return ret;
	snprintf(k->key, sizeof(k->key), "%s", key);
	k->rank = n->f->rank;
	k->restart = n->f->restart;
	k->pid = n->pid;
	return 0;
}

static int rank_get(struct job_report *r, struct jr_region *g, const char *host,
		    const struct mf_file *f, struct jr_rank **out)
{
	struct rank_new n = { r->budget, f, f->pid_named ? f->pid : 0 };
	struct charge_hook charge = mf_charger(r->budget);
	struct row_table t = { &g->ranks, &g->nranks, &g->cap, sizeof(**out), 16, &g->rank_index,
			       rank_key, rank_init, &n, &charge };
	char key[sizeof(g->ranks->key)];
	void *k;
	int ret;

	snprintf(key, sizeof(key), "%d %d %d", f->rank, f->restart, n.pid);
	ret = row_table_get(&t, host, key, &k);
	*out = k;
	return ret;
}

static int64_t row_ns(json_object *row, const char *key)
{
	json_object *v;
	int64_t ns;

	if (!json_object_object_get_ex(row, key, &v) || mf_json_us_to_ns(v, &ns))
		return 0;
	return ns;
}

static uint64_t row_count(json_object *row)
{
	json_object *v;

	if (json_object_object_get_ex(row, "count", &v) && json_object_is_type(v, json_type_int) &&
	    json_object_get_int64(v) > 0)
		return (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(row, "device_count", &v) &&
	    json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0)
		return (uint64_t)json_object_get_int64(v);
	return 0;
}

static void sub_key(const void *arr, size_t i, const char **name, const char **kind)
{
	const struct jr_sub *x = arr;

	*name = x[i].name;
	*kind = x[i].parent_known ? x[i].parent : SUB_UNKNOWN;
}

static int sub_init(void *row, const char *name, const char *kind, void *ctx)
{
	struct jr_sub *x = row;
	int ret;

	x->parent_known = strcmp(kind, SUB_UNKNOWN);
	ret = charged_strdup(ctx, name, &x->name);
	if (!ret)
		ret = charged_strdup(ctx, x->parent_known ? kind : "", &x->parent);
	if (ret)
		free(x->name);
	return ret;
}

/* The sub-region (@name in @parent) of @g: its index, or -E2BIG past
 * JR_SUBS_MAX of them (counted), -ENOSPC, -ENOMEM. */
static int sub_get(struct job_report *r, struct jr_region *g, const char *name, const char *parent,
		   size_t *idx)
{
	struct charge_hook charge = mf_charger(r->budget);
	struct row_table t = { &g->subs, &g->nsubs, &g->subcap, sizeof(*g->subs), 8, &g->sub_index,
			       sub_key, sub_init, r->budget, &charge };
	void *x;
	int ret;

	if (g->nsubs >= JR_SUBS_MAX) { /* only known ones from here on */
		size_t pos;

		ret = mf_index_find(r->budget, &g->sub_index, g->subs, g->nsubs, sub_key, name, parent,
				    &pos);
		if (ret < 0)
			return ret;
		if (!ret) {
			g->subs_dropped++;
			return -E2BIG;
		}
		*idx = pos;
		return 0;
	}
	ret = row_table_get(&t, name, parent, &x);
	if (!ret)
		*idx = (size_t)((struct jr_sub *)x - g->subs);
	return ret;
}

/* Rank @k's sub-region sums up to @n entries (new ones 0), charged. */
static int rank_subs(struct job_report *r, struct jr_rank *k, size_t n)
{
	uint64_t bytes;
	int64_t *ns;
	uint64_t *calls;
	int ret;

	if (k->nsub >= n)
		return 0;
	/* what the arrays gain (their first allocation: its header too) */
	bytes = (n - k->nsub) * (sizeof(*k->sub_ns) + sizeof(*k->sub_calls)) +
		(k->nsub ? 0 : 2 * MF_ALLOC(0));
	ret = mf_charge(r->budget, bytes);
	if (ret)
		return ret;
	ns = realloc(k->sub_ns, n * sizeof(*ns));
	if (ns)
		k->sub_ns = ns;
	calls = ns ? realloc(k->sub_calls, n * sizeof(*calls)) : NULL;
	if (!ns || !calls)
		return -ENOMEM;
	k->sub_calls = calls;
	memset(k->sub_ns + k->nsub, 0, (n - k->nsub) * sizeof(*ns));
	memset(k->sub_calls + k->nsub, 0, (n - k->nsub) * sizeof(*calls));
	k->nsub = n;
	return 0;
}

/* A region row of a segment of @g: a sub-region's time for its rank (the
 * region's own row, outermost, is the segment itself). */
static int add_sub_row(struct job_report *r, struct jr_region *g, const struct manifest *m,
		       const struct mf_file *f, const char *name, json_object *row)
{
	json_object *v;
	const char *parent = NULL;
	struct jr_rank *k;
	size_t idx;
	int ret;

	if (json_object_object_get_ex(row, "parent", &v))
		parent = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
	if (!strcmp(name, g->name) && (!parent || !parent[0]))
		return 0;
	ret = sub_get(r, g, name, parent ? parent : SUB_UNKNOWN, &idx);
	if (ret == -E2BIG)
		return 0; /* counted in subs_dropped */
	if (!ret)
		ret = rank_get(r, g, m->hostname, f, &k);
	if (!ret)
		ret = rank_subs(r, k, g->nsubs);
	if (ret)
		return ret;
	k->sub_ns[idx] = sat_add_i64(k->sub_ns[idx], row_ns(row, "cpu_us"));
	k->sub_calls[idx] = sat_add_u64(k->sub_calls[idx], row_count(row));
	return 0;
}

/* One row of a complete segment @f (of @m) of @g. */
static int add_row(struct job_report *r, struct jr_region *g, const struct manifest *m,
		   const struct mf_file *f, json_object *row)
{
	const char *name, *kind;
	struct jr_op *o;
	json_object *v;
	int ret;

	if (!json_object_is_type(row, json_type_object))
		return 0;
	name = json_object_object_get_ex(row, "name", &v) &&
	       json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
	kind = json_object_object_get_ex(row, "kind", &v) &&
	       json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
	if (!name)
		return 0;
	if (!strcmp(kind, "region"))
		return add_sub_row(r, g, m, f, name, row);
	ret = op_get(r, g, name, kind, &o);
	if (ret)
		return ret;
	o->device_ns = sat_add_i64(o->device_ns, row_ns(row, "device_us"));
	o->cpu_ns = sat_add_i64(o->cpu_ns, row_ns(row, "cpu_us"));
	o->self_cpu_ns = sat_add_i64(o->self_cpu_ns, row_ns(row, "self_cpu_us"));
	o->self_device_ns = sat_add_i64(o->self_device_ns, row_ns(row, "self_device_us"));
	o->count = sat_add_u64(o->count, row_count(row));
	return 0;
}

int jr_row(void *ctx, const struct manifest *m, const struct mf_file *f, json_object *row)
{
	struct job_report *r = ctx;
	struct jr_region *g;
	int ret;

	if (f->incomplete || (!f->counted && !r->with_uncounted))
		return 0; /* left out of every operator figure */
	ret = region_get(r, f->region ? f->region : "", &g);
	return ret ? ret : add_row(r, g, m, f, row);
}

static int cmp_rank(const void *a, const void *b)
{
	const struct jr_rank *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	if (c)
		return c;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->restart != y->restart)
		return x->restart < y->restart ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_region(const void *a, const void *b)
{
	const struct jr_region *x = a, *y = b;

	if (x->segments != y->segments)
		return x->segments > y->segments ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The median of @n values (sorted here). */
static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Slowest rank by mean, how far over the median of the rank means, and
 * whether that is more than noise (a straggler: job_report.h). */
static int region_finish(struct job_report *r, struct jr_region *g)
{
	uint64_t bytes = MF_ALLOC((g->nranks ? g->nranks : 1) * sizeof(double));
	double *means;
	size_t i, n = 0;
	int ret;

	pair_index_free(&g->rank_index); /* positions change with the sort */
	if (g->nranks)
		qsort(g->ranks, g->nranks, sizeof(*g->ranks), cmp_rank);
	ret = mf_charge(r->budget, bytes);
	if (ret)
		return ret;
	means = malloc((g->nranks ? g->nranks : 1) * sizeof(*means));
	if (!means) {
		mf_uncharge(r->budget, bytes);
		return -ENOMEM;
	}
	for (i = 0; i < g->nranks; i++) {
		struct jr_rank *k = &g->ranks[i];

		if (!k->complete)
			continue;
		k->mean_ms = (double)k->sum_ns / (double)k->complete / 1e6;
		means[n++] = k->mean_ms;
		if (!g->have_slowest || k->mean_ms > g->ranks[g->slowest].mean_ms)
			g->slowest = i;
		g->have_slowest = true;
	}
	if (n) {
		g->median_ms = median(means, n);
		g->over_ms = g->ranks[g->slowest].mean_ms - g->median_ms;
		g->over_pct = g->median_ms > 0 ? 100.0 * g->over_ms / g->median_ms : 0.0;
		/* the ranks' own step-to-step spread, in the same array */
		for (i = n = 0; i < g->nranks; i++)
			if (g->ranks[i].complete)
				means[n++] = (double)(g->ranks[i].max_ns - g->ranks[i].min_ns) / 1e6;
		g->spread_ms = median(means, n);
		g->straggler = n >= 2 && g->over_pct >= JR_STRAGGLER_PCT && g->over_ms > g->spread_ms;
	}
	free(means);
	mf_uncharge(r->budget, bytes);
	return 0;
}

/* Each sub-region's depth below @g, by the parents the summaries named. */
static void sub_depths(struct jr_region *g)
{
	struct jr_sub *x;
	size_t i, j, pass;

	for (i = 0; i < g->nsubs; i++) {
		x = &g->subs[i];
		x->depth = !x->parent_known || !strcmp(x->parent, g->name) ? 1 : 0;
	}
	for (pass = 1; pass < JR_SPLIT_DEPTH; pass++)
		for (i = 0; i < g->nsubs; i++) {
			x = &g->subs[i];
			if (x->depth || !x->parent[0])
				continue;
			for (j = 0; j < g->nsubs; j++)
				if (g->subs[j].depth == pass && !strcmp(g->subs[j].name, x->parent)) {
					x->depth = pass + 1;
					break;
				}
		}
}

static int64_t sub_total(const struct jr_region *g, size_t i)
{
	int64_t t = 0;
	size_t k;

	for (k = 0; k < g->nranks; k++)
		if (g->ranks[k].nsub > i)
			t = sat_add_i64(t, g->ranks[k].sub_ns[i]);
	return t;
}

/* The sub-regions at @depth inside @parent into sub_order, the biggest
 * first, each followed by its own. */
static void sub_emit(struct jr_region *g, const char *parent, size_t depth, bool *placed,
		     const int64_t *total, size_t *n)
{
	size_t i, best;

	for (;;) {
		best = SIZE_MAX;
		for (i = 0; i < g->nsubs; i++) {
			const struct jr_sub *x = &g->subs[i];

			if (placed[i] || x->depth != depth ||
			    (depth > 1 && strcmp(x->parent, parent)))
				continue;
			if (best == SIZE_MAX || total[i] > total[best])
				best = i;
		}
		if (best == SIZE_MAX)
			return;
		placed[best] = true;
		g->sub_order[(*n)++] = best;
		if (depth < JR_SPLIT_DEPTH)
			sub_emit(g, g->subs[best].name, depth + 1, placed, total, n);
	}
}

/* The split's order: the tree under @g, then the sub-regions not in it. */
static int subs_finish(struct job_report *r, struct jr_region *g)
{
	uint64_t bytes = MF_ALLOC(g->nsubs * (sizeof(size_t) + sizeof(bool) + sizeof(int64_t)));
	int64_t *total = NULL;
	bool *placed = NULL;
	size_t i, n = 0;
	int ret;

	pair_index_free(&g->sub_index);
	if (!g->nsubs)
		return 0;
	ret = mf_charge(r->budget, bytes);
	if (ret)
		return ret;
	g->sub_order = malloc(g->nsubs * sizeof(*g->sub_order));
	placed = calloc(g->nsubs, sizeof(*placed));
	total = malloc(g->nsubs * sizeof(*total));
	if (!g->sub_order || !placed || !total) {
		ret = -ENOMEM;
		goto out;
	}
	sub_depths(g);
	for (i = 0; i < g->nsubs; i++)
		total[i] = sub_total(g, i);
	sub_emit(g, g->name, 1, placed, total, &n);
	for (i = 0; i < g->nsubs; i++)
		if (!placed[i]) {
			g->subs[i].depth = 0; /* not inside the region (as far as the rows say) */
			g->sub_order[n++] = i;
		}
out:
	free(placed);
	free(total);
	return ret;
}

int64_t jr_sub_ns(const struct jr_region *g, const struct jr_rank *k, size_t i, uint64_t *calls)
{
	(void)g;
	if (calls)
		*calls = i < k->nsub ? k->sub_calls[i] : 0;
	return i < k->nsub ? k->sub_ns[i] : 0;
}

int64_t jr_outside_ns(const struct jr_region *g, const struct jr_rank *k)
{
	int64_t in = 0;
	size_t i;

	for (i = 0; i < g->nsubs && i < k->nsub; i++)
		if (g->subs[i].depth == 1)
			in = sat_add_i64(in, k->sub_ns[i]);
	return in < k->sum_ns ? k->sum_ns - in : 0;
}

void jr_step_stats(const struct job_report *r, size_t step, struct jr_step_stats *st)
{
	const struct sp_step *t = &r->pairs.steps[step];
	const struct mf_file *f;
	size_t i;

	memset(st, 0, sizeof(*st));
	st->members = t->n;
	st->streams = r->pairs.regions[t->region].nstreams;
	for (i = t->first; i < t->first + t->n; i++) {
		f = jr_step_file(r, i);
		if (f->incomplete)
			continue;
		st->complete++;
		if (!st->have || f->duration_ns < st->min_ns)
			st->min_ns = f->duration_ns;
		if (!st->have || f->duration_ns > st->max_ns) {
			st->max_ns = f->duration_ns;
			st->slowest = i;
		}
		st->have = true;
	}
}

const struct mf_file *jr_step_file(const struct job_report *r, size_t i)
{
	return sp_file(&r->pairs, r->ms, i);
}

void jr_stream_label(const struct job_report *r, size_t i, char *buf, size_t len)
{
	const struct sp_stream *x = &r->pairs.streams[i];
	const struct mf_file *f = &r->ms[x->m].files[x->f];
	struct jr_rank k = { .host = r->ms[x->m].hostname, .rank = f->rank, .restart = f->restart,
			     .pid = f->pid_named ? f->pid : 0 };

	jr_rank_label(&k, buf, len);
}

bool jr_any_skew(const struct job_report *r)
{
	size_t i;

	for (i = 0; r->ms && i < r->ndirs; i++)
		if (r->ms[i].skew_pairs)
			return true;
	return false;
}

int jr_stream_rank_number(const struct job_report *r, size_t i)
{
	const struct sp_stream *x = &r->pairs.streams[i];

	return r->ms[x->m].files[x->f].rank;
}

const struct jr_rank *jr_stream_rank(const struct job_report *r, const struct jr_region *g,
				     size_t stream)
{
	const struct sp_stream *x = &r->pairs.streams[stream];
	const struct mf_file *f = &r->ms[x->m].files[x->f];
	struct jr_rank key = { .host = r->ms[x->m].hostname, .rank = f->rank, .restart = f->restart,
			       .pid = f->pid_named ? f->pid : 0 };

	return g->nranks ? bsearch(&key, g->ranks, g->nranks, sizeof(*g->ranks), cmp_rank) : NULL;
}

/* Its steps, and per rank the steps it has no segment at. */
static void count_missing(struct job_report *r, struct jr_region *g)
{
	const struct sp_region *pr = sp_region_find(&r->pairs, g->name);
	struct jr_rank *k;
	size_t i;

	g->pairs = pr;
	for (i = 0; pr && i < pr->nstreams; i++) {
		k = (struct jr_rank *)jr_stream_rank(r, g, pr->first_stream + i);
		if (k)
			k->steps_missing += pr->nsteps - r->pairs.streams[pr->first_stream + i].nsegs;
	}
}

static bool seen_host(const struct manifest *ms, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(ms[j].hostname, ms[i].hostname))
			return true;
	return false;
}

void job_report_init(struct job_report *r, struct mf_budget *budget)
{
	memset(r, 0, sizeof(*r));
	r->budget = budget;
}

/* A reason a segment does not count, into the region's first few. */
static void count_why(struct jr_region *g, const char *why)
{
	size_t i;

	for (i = 0; i < 4 && g->whys[i].why; i++)
		if (!strcmp(g->whys[i].why, why)) {
			g->whys[i].n++;
			return;
		}
	if (i == 4) {
		g->whys_other++;
		return;
	}
	g->whys[i].why = why; /* interned in a manifest, which outlives the report */
	g->whys[i].n = 1;
}

/* One segment of @m: its rank's count and time. */
static int add_segment(struct job_report *r, const struct manifest *m, const struct mf_file *f)
{
	struct jr_region *g;
	struct jr_rank *k;
	size_t i, n;
	int ret;

	ret = region_get(r, f->region ? f->region : "", &g);
	if (!ret)
		ret = rank_get(r, g, m->hostname, f, &k);
	if (ret)
		return ret;
	g->segments++;
	k->segments++;
	if (!f->counted) {
		count_why(g, f->not_counted_why);
		g->uncounted++;
		k->uncounted++;
		if (!r->with_uncounted)
			return 0;
	}
	if (f->incomplete) {
		g->incomplete++;
		k->incomplete++;
		return 0;
	}
	if (!k->complete++ || f->duration_ns < k->min_ns)
		k->min_ns = f->duration_ns;
	if (f->duration_ns > k->max_ns)
		k->max_ns = f->duration_ns;
	k->sum_ns = sat_add_i64(k->sum_ns, f->duration_ns);
	jr_dl_add(k, f);
	n = f->rows ? json_object_array_length(f->rows) : 0;
	for (i = 0; i < n && !ret; i++)
		ret = add_row(r, g, m, f, json_object_array_get_idx(f->rows, i));
	return ret;
}

int job_report_add(struct job_report *r, const struct manifest *m)
{
	size_t j;
	int ret;

	for (j = 0; j < m->nfiles; j++) {
		if (!m->files[j].have_summary)
			continue;
		ret = add_segment(r, m, &m->files[j]);
		if (ret)
			return ret;
	}
	return 0;
}

int job_report_finish(struct job_report *r, const struct manifest *ms, size_t n)
{
	struct sp_opts so = { NULL, false, NULL };
	size_t i;
	int ret;

	r->ndirs = n;
	for (i = 0; i < n; i++)
		if (!seen_host(ms, i))
			r->nhosts++;
	for (i = 0; i < r->nregions; i++) {
		ret = region_finish(r, &r->regions[i]);
		if (!ret)
			ret = subs_finish(r, &r->regions[i]);
		if (ret)
			return ret;
		if (r->regions[i].nranks > r->nranks)
			r->nranks = r->regions[i].nranks;
	}
	pair_index_free(&r->region_index); /* positions change with the sort */
	if (r->nregions) /* qsort(NULL, 0, ...) is undefined */
		qsort(r->regions, r->nregions, sizeof(*r->regions), cmp_region);
	so.with_uncounted = r->with_uncounted;
	r->ms = ms;
	ret = step_pairs_build(&r->pairs, ms, n, &so, r->budget);
	for (i = 0; !ret && i < r->nregions; i++)
		count_missing(r, &r->regions[i]);
	for (i = 0; !ret && i < r->nregions; i++) {
		r->regions[i].colls = calloc(1, sizeof(*r->regions[i].colls));
		ret = r->regions[i].colls ? jr_colls_build(r, &r->regions[i], r->regions[i].colls) :
					    -ENOMEM;
	}
	return ret;
}

int job_report_build(const struct manifest *ms, size_t n, struct job_report *r)
{
	size_t i;
	int ret = 0;

	job_report_init(r, NULL);
	for (i = 0; i < n && !ret; i++)
		ret = job_report_add(r, &ms[i]);
	if (!ret)
		ret = job_report_finish(r, ms, n);
	if (ret)
		job_report_free(r);
	return ret;
}

void job_report_free(struct job_report *r)
{
	size_t i, j;

	for (i = 0; i < r->nregions; i++) {
		struct jr_region *g = &r->regions[i];

		for (j = 0; j < g->nranks; j++) {
			free(g->ranks[j].host);
			free(g->ranks[j].sub_ns);
			free(g->ranks[j].sub_calls);
		}
		for (j = 0; j < g->nsubs; j++) {
			free(g->subs[j].name);
			free(g->subs[j].parent);
		}
		free(g->subs);
		free(g->sub_order);
		pair_index_free(&g->sub_index);
		for (j = 0; j < g->nops; j++) {
			free(g->ops[j].name);
			free(g->ops[j].kind);
		}
		free(g->ranks);
		free(g->ops);
		pair_index_free(&g->index);
		if (g->colls)
			jr_colls_free(g->colls);
		free(g->colls);
		pair_index_free(&g->rank_index);
		free(g->name);
	}
	free(r->regions);
	pair_index_free(&r->region_index);
	step_pairs_free(&r->pairs, r->budget);
	memset(r, 0, sizeof(*r));
}

