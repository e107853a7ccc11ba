// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report`: aggregation across ranks, and its text and JSON forms. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked_math.h"
#include "util/row_table.h"
#include "offline/job_report.h"

/* Sums over ranks of numbers the summaries give: saturated, never wrapped. */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (!__builtin_add_overflow(a, b, &r))
		return r;
	return b > 0 ? INT64_MAX : INT64_MIN;
}

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
	struct mem_charge charge = mf_charger(r->budget);
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
	struct mem_charge charge = mf_charger(r->budget);
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
	struct mem_charge charge = mf_charger(r->budget);
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

/* One row of a complete segment of @g. */
static int add_row(struct job_report *r, struct jr_region *g, json_object *row)
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
	if (!name || !strcmp(kind, "region"))
		return 0;
	ret = op_get(r, g, name, kind, &o);
	if (ret)
		return ret;
	o->device_ns = sat_add(o->device_ns, row_ns(row, "device_us"));
	o->cpu_ns = sat_add(o->cpu_ns, row_ns(row, "cpu_us"));
	o->self_cpu_ns = sat_add(o->self_cpu_ns, row_ns(row, "self_cpu_us"));
	o->self_device_ns = sat_add(o->self_device_ns, row_ns(row, "self_device_us"));
	o->count = sat_add_u64(o->count, row_count(row));
	return 0;
}

int jr_row(void *ctx, const struct manifest *m, const struct mf_file *f, json_object *row)
{
	struct job_report *r = ctx;
	struct jr_region *g;
	int ret;

	(void)m;
	if (f->incomplete)
		return 0; /* left out of every operator figure */
	ret = region_get(r, f->region ? f->region : "", &g);
	return ret ? ret : add_row(r, g, row);
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

/* Slowest rank by mean, and how far over the median of the rank means. */
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
		qsort(means, n, sizeof(*means), cmp_double);
		g->median_ms = n % 2 ? means[n / 2] : (means[n / 2 - 1] + means[n / 2]) / 2;
		g->over_ms = g->ranks[g->slowest].mean_ms - g->median_ms;
		g->over_pct = g->median_ms > 0 ? 100.0 * g->over_ms / g->median_ms : 0.0;
	}
	free(means);
	mf_uncharge(r->budget, bytes);
	return 0;
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
	if (f->incomplete) {
		g->incomplete++;
		k->incomplete++;
		return 0;
	}
	if (!k->complete++ || f->duration_ns < k->min_ns)
		k->min_ns = f->duration_ns;
	if (f->duration_ns > k->max_ns)
		k->max_ns = f->duration_ns;
	k->sum_ns = sat_add(k->sum_ns, f->duration_ns);
	n = f->rows ? json_object_array_length(f->rows) : 0;
	for (i = 0; i < n && !ret; i++)
		ret = add_row(r, g, json_object_array_get_idx(f->rows, i));
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
	size_t i;
	int ret;

	r->ndirs = n;
	for (i = 0; i < n; i++)
		if (!seen_host(ms, i))
			r->nhosts++;
	for (i = 0; i < r->nregions; i++) {
		ret = region_finish(r, &r->regions[i]);
		if (ret)
			return ret;
		if (r->regions[i].nranks > r->nranks)
			r->nranks = r->regions[i].nranks;
	}
	pair_index_free(&r->region_index); /* positions change with the sort */
	if (r->nregions) /* qsort(NULL, 0, ...) is undefined */
		qsort(r->regions, r->nregions, sizeof(*r->regions), cmp_region);
	return 0;
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

		for (j = 0; j < g->nranks; j++)
			free(g->ranks[j].host);
		for (j = 0; j < g->nops; j++) {
			free(g->ops[j].name);
			free(g->ops[j].kind);
		}
		free(g->ranks);
		free(g->ops);
		pair_index_free(&g->index);
		pair_index_free(&g->rank_index);
		free(g->name);
	}
	free(r->regions);
	pair_index_free(&r->region_index);
	memset(r, 0, sizeof(*r));
}

