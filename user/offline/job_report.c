// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report`: aggregation across ranks, and its text and JSON forms. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked_math.h"
#include "offline/job_report.h"
#include "util/json_writer.h"
#include "util/text_sanitize.h"

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

static int op_get(struct job_report *r, struct jr_region *g, const char *name, const char *kind,
		  struct jr_op **out)
{
	struct jr_op *o;
	size_t pos;
	int found;

	found = mf_index_find(r->budget, &g->index, g->ops, g->nops, op_key, name, kind, &pos);
	if (found < 0)
		return found;
	if (found) {
		*out = &g->ops[pos];
		return 0;
	}
	found = mf_grow(r->budget, &g->ops, g->nops, &g->opcap, sizeof(*o), 64);
	if (found)
		return found;
	o = &g->ops[g->nops];
	memset(o, 0, sizeof(*o));
	found = charged_strdup(r->budget, name, &o->name);
	if (!found)
		found = charged_strdup(r->budget, kind, &o->kind);
	if (found) {
		free(o->name);
		return found;
	}
	pair_index_set(&g->index, pos, g->nops++);
	*out = o;
	return 0;
}

static void region_name_key(const void *arr, size_t i, const char **name, const char **kind)
{
	*name = ((const struct jr_region *)arr)[i].name;
	*kind = "";
}

static int region_get(struct job_report *r, const char *name, struct jr_region **out)
{
	struct jr_region *g;
	size_t pos;
	int ret;

	ret = mf_index_find(r->budget, &r->region_index, r->regions, r->nregions, region_name_key,
			    name, "", &pos);
	if (ret < 0)
		return ret;
	if (ret) {
		*out = &r->regions[pos];
		return 0;
	}
	ret = mf_grow(r->budget, &r->regions, r->nregions, &r->cap, sizeof(*g), 4);
	if (ret)
		return ret;
	g = &r->regions[r->nregions];
	memset(g, 0, sizeof(*g));
	ret = charged_strdup(r->budget, name, &g->name);
	if (ret)
		return ret;
	pair_index_set(&r->region_index, pos, r->nregions++);
	*out = g;
	return 0;
}

static void rank_key(const void *arr, size_t i, const char **name, const char **kind)
{
	const struct jr_rank *k = arr;

	*name = k[i].host;
	*kind = k[i].key;
}

static int rank_get(struct job_report *r, struct jr_region *g, const char *host,
		    const struct mf_file *f, struct jr_rank **out)
{
	int pid = f->pid_named ? f->pid : 0;
	char key[sizeof(g->ranks->key)];
	struct jr_rank *k;
	size_t pos;
	int ret;

	snprintf(key, sizeof(key), "%d %d %d", f->rank, f->restart, pid);
	ret = mf_index_find(r->budget, &g->rank_index, g->ranks, g->nranks, rank_key, host, key, &pos);
	if (ret < 0)
		return ret;
	if (ret) {
		*out = &g->ranks[pos];
		return 0;
	}
	ret = mf_grow(r->budget, &g->ranks, g->nranks, &g->cap, sizeof(*k), 16);
	if (ret)
		return ret;
	k = &g->ranks[g->nranks];
	memset(k, 0, sizeof(*k));
	ret = charged_strdup(r->budget, host, &k->host);
	if (ret)
		return ret;
	memcpy(k->key, key, sizeof(key));
	k->rank = f->rank;
	k->restart = f->restart;
	k->pid = pid;
	pair_index_set(&g->rank_index, pos, g->nranks++);
	*out = k;
	return 0;
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

void jr_rank_label(const struct jr_rank *k, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s%srank %d", k->host, k->host[0] ? " " : "", k->rank);

	if (n < 0 || (size_t)n >= len)
		return;
	if (k->restart)
		n += snprintf(buf + n, len - (size_t)n, " restart %d", k->restart);
	if (k->pid > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " pid %d", k->pid);
}

bool jr_kind_is_device(const char *kind)
{
	return !strcmp(kind, "kernel") || !strcmp(kind, "gpu_memcpy") || !strcmp(kind, "gpu_memset");
}

static bool sort_by_cpu;

static int cmp_op(const void *a, const void *b)
{
	const struct jr_op *x = *(const struct jr_op *const *)a, *y = *(const struct jr_op *const *)b;
	int64_t kx = sort_by_cpu ? x->cpu_ns : x->device_ns, ky = sort_by_cpu ? y->cpu_ns : y->device_ns;
	int c;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->kind, y->kind);
}

size_t jr_top(const struct jr_region *g, bool device, unsigned int top, const struct jr_op ***out,
	      bool *by_cpu)
{
	const struct jr_op **v;
	bool any_dev = false;
	size_t i, n = 0;

	*out = NULL;
	*by_cpu = false;
	v = malloc((g->nops ? g->nops : 1) * sizeof(*v));
	if (!v)
		return 0;
	for (i = 0; i < g->nops; i++) {
		if (jr_kind_is_device(g->ops[i].kind) != device)
			continue;
		v[n++] = &g->ops[i];
		if (g->ops[i].device_ns > 0)
			any_dev = true;
	}
	*by_cpu = !any_dev;
	sort_by_cpu = !any_dev;
	qsort(v, n, sizeof(*v), cmp_op);
	*out = v;
	return n < top ? n : top;
}

/* Target text for the terminal, into a buffer the caller frees. */
static char *tty(const char *s)
{
	size_t n = text_clean_bound(s);
	char *b = malloc(n);

	if (b)
		text_clean_terminal(b, n, s);
	return b;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static void print_label(FILE *f, const struct jr_rank *k)
{
	char raw[512];
	char *clean;

	jr_rank_label(k, raw, sizeof(raw));
	clean = tty(raw);
	fputs(clean ? clean : "?", f);
	free(clean);
}

static int print_ops(FILE *f, const struct jr_region *g, bool device, unsigned int top)
{
	const struct jr_op **v;
	char kind[20];
	char *name;
	bool by_cpu;
	size_t i, n;

	n = jr_top(g, device, top, &v, &by_cpu);
	if (!v)
		return -ENOMEM;
	fprintf(f, "\n  top %u %s by %s time, summed over ranks", top, device ? "kernels" : "operators",
		by_cpu ? "CPU" : "device");
	if (!n)
		fputs(": none recorded\n", f);
	else if (by_cpu)
		fprintf(f, " (no device time recorded: ranked by CPU time%s):\n",
			device ? ", a kernel's CPU time is that of its launching calls" : "");
	else
		fputs(":\n", f);
	if (n)
		fprintf(f, "  %12s %12s %12s %10s  %-16s %s\n", "device ms", "CPU ms", "self CPU ms",
			"calls", "kind", "name");
	for (i = 0; i < n; i++) {
		text_clean_terminal(kind, 17, v[i]->kind);
		name = tty(v[i]->name);
		fprintf(f, "  %12.3f %12.3f %12.3f %10llu  %-16s %s\n", ms(v[i]->device_ns),
			ms(v[i]->cpu_ns), ms(v[i]->self_cpu_ns), (unsigned long long)v[i]->count, kind,
			name ? name : "?");
		free(name);
	}
	free(v);
	return 0;
}

int job_report_print(FILE *f, const struct job_report *r, unsigned int top)
{
	const struct jr_region *g;
	const struct jr_rank *k;
	char *name;
	size_t i, j, incomplete = 0;
	int ret;

	for (i = 0; i < r->nregions; i++)
		incomplete += r->regions[i].incomplete;
	fprintf(f, "fvbpf report: %zu director%s, %zu node%s, %zu rank%s, %zu region%s\n", r->ndirs,
		r->ndirs == 1 ? "y" : "ies", r->nhosts, r->nhosts == 1 ? "" : "s", r->nranks,
		r->nranks == 1 ? "" : "s", r->nregions, r->nregions == 1 ? "" : "s");
	fprintf(f, "incomplete segments (%zu) are counted apart and left out of every time and operator "
		"figure below\n", incomplete);
	if (!r->nregions)
		fputs("no segments listed\n", f);
	for (i = 0; i < r->nregions; i++) {
		g = &r->regions[i];
		name = tty(g->name);
		fprintf(f, "\nregion %s: %zu segments (%zu complete, %zu incomplete), %zu rank%s\n",
			name ? name : "?", g->segments, g->segments - g->incomplete, g->incomplete,
			g->nranks, g->nranks == 1 ? "" : "s");
		free(name);
		fprintf(f, "  %8s %10s %12s %12s %12s  %s\n", "segments", "incomplete", "mean ms",
			"min ms", "max ms", "rank");
		for (j = 0; j < g->nranks; j++) {
			k = &g->ranks[j];
			if (k->complete)
				fprintf(f, "  %8zu %10zu %12.3f %12.3f %12.3f  ", k->segments, k->incomplete,
					k->mean_ms, ms(k->min_ns), ms(k->max_ns));
			else
				fprintf(f, "  %8zu %10zu %12s %12s %12s  ", k->segments, k->incomplete, "-",
					"-", "-");
			print_label(f, k);
			fputc('\n', f);
		}
		if (g->have_slowest) {
			fputs("  slowest rank: ", f);
			print_label(f, &g->ranks[g->slowest]);
			fprintf(f, ", mean %.3f ms: %.3f ms (%.1f%%) over the median rank mean %.3f ms\n",
				g->ranks[g->slowest].mean_ms, g->over_ms, g->over_pct, g->median_ms);
		} else {
			fputs("  slowest rank: none (no complete segment)\n", f);
		}
		ret = print_ops(f, g, false, top);
		if (!ret)
			ret = print_ops(f, g, true, top);
		if (ret)
			return ret;
	}
	return ferror(f) ? -EIO : 0;
}

/* Milliseconds from ns, exactly (6 decimals). */
static json_object *jms(int64_t ns)
{
	char text[40];
	uint64_t a = ns < 0 ? (uint64_t)-(ns + 1) + 1 : (uint64_t)ns;

	snprintf(text, sizeof(text), "%s%llu.%06llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000),
		 (unsigned long long)(a % 1000000));
	return json_object_new_double_s((double)ns / 1e6, text);
}

static json_object *jdouble(double v, int decimals)
{
	char text[64];

	snprintf(text, sizeof(text), "%.*f", decimals, v);
	return json_object_new_double_s(v, text);
}

static json_object *rank_json(const struct jr_rank *k)
{
	json_object *o = json_object_new_object();
	char label[512];

	jr_rank_label(k, label, sizeof(label));
	json_object_object_add(o, "label", json_string_obj(label));
	json_object_object_add(o, "hostname", json_string_obj(k->host));
	json_object_object_add(o, "rank", json_object_new_int(k->rank));
	json_object_object_add(o, "restart", json_object_new_int(k->restart));
	if (k->pid > 0)
		json_object_object_add(o, "pid", json_object_new_int(k->pid));
	json_object_object_add(o, "segments", json_object_new_uint64(k->segments));
	json_object_object_add(o, "complete", json_object_new_uint64(k->complete));
	json_object_object_add(o, "incomplete", json_object_new_uint64(k->incomplete));
	if (k->complete) {
		json_object_object_add(o, "mean_ms", jdouble(k->mean_ms, 6));
		json_object_object_add(o, "min_ms", jms(k->min_ns));
		json_object_object_add(o, "max_ms", jms(k->max_ns));
	} else {
		json_object_object_add(o, "mean_ms", NULL);
		json_object_object_add(o, "min_ms", NULL);
		json_object_object_add(o, "max_ms", NULL);
	}
	return o;
}

static json_object *op_json(const struct jr_op *op)
{
	json_object *row = json_object_new_object();

	json_object_object_add(row, "name", json_string_obj(op->name));
	json_object_object_add(row, "kind", json_string_obj(op->kind));
	json_object_object_add(row, "device_us", jdouble((double)op->device_ns / 1e3, 3));
	json_object_object_add(row, "self_device_us", jdouble((double)op->self_device_ns / 1e3, 3));
	json_object_object_add(row, "cpu_us", jdouble((double)op->cpu_ns / 1e3, 3));
	json_object_object_add(row, "self_cpu_us", jdouble((double)op->self_cpu_ns / 1e3, 3));
	json_object_object_add(row, "count", json_object_new_uint64(op->count));
	return row;
}

/* The operators or kernels object without its rows. */
static json_object *ops_head(bool by_cpu)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ranked_by", json_string_obj(by_cpu ? "cpu_us" : "device_us"));
	if (by_cpu)
		json_object_object_add(o, "note", json_string_obj("no device time recorded: ranked by CPU time"));
	return o;
}

static json_object *ops_json(const struct jr_region *g, bool device, unsigned int top)
{
	json_object *o, *rows;
	const struct jr_op **v;
	bool by_cpu;
	size_t i, n;

	n = jr_top(g, device, top, &v, &by_cpu);
	if (!v)
		return NULL;
	o = ops_head(by_cpu);
	rows = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(rows, op_json(v[i]));
	json_object_object_add(o, "rows", rows);
	free(v);
	return o;
}

static json_object *root_json(const struct job_report *r, unsigned int top)
{
	json_object *root = json_object_new_object();

	json_object_object_add(root, "tool", json_string_obj("fvbpf report"));
	json_object_object_add(root, "directories", json_object_new_uint64(r->ndirs));
	json_object_object_add(root, "nodes", json_object_new_uint64(r->nhosts));
	json_object_object_add(root, "ranks", json_object_new_uint64(r->nranks));
	json_object_object_add(root, "top", json_object_new_int((int)top));
	json_object_object_add(root, "incomplete_segments_excluded", json_object_new_boolean(1));
	return root;
}

/* A region without its ranks, operators and kernels. */
static json_object *region_json(const struct jr_region *g)
{
	json_object *o = json_object_new_object(), *s;

	json_object_object_add(o, "region", json_string_obj(g->name));
	json_object_object_add(o, "segments", json_object_new_uint64(g->segments));
	json_object_object_add(o, "complete", json_object_new_uint64(g->segments - g->incomplete));
	json_object_object_add(o, "incomplete", json_object_new_uint64(g->incomplete));
	if (g->have_slowest) {
		s = rank_json(&g->ranks[g->slowest]);
		json_object_object_add(s, "median_rank_mean_ms", jdouble(g->median_ms, 6));
		json_object_object_add(s, "over_median_ms", jdouble(g->over_ms, 6));
		json_object_object_add(s, "over_median_pct", jdouble(g->over_pct, 3));
		json_object_object_add(o, "slowest", s);
	} else {
		json_object_object_add(o, "slowest", NULL);
	}
	return o;
}

json_object *job_report_json(const struct job_report *r, unsigned int top)
{
	json_object *root = root_json(r, top), *regions = json_object_new_array(), *o, *ranks;
	const struct jr_region *g;
	size_t i, j;

	for (i = 0; i < r->nregions; i++) {
		g = &r->regions[i];
		o = region_json(g);
		ranks = json_object_new_array();
		for (j = 0; j < g->nranks; j++)
			json_object_array_add(ranks, rank_json(&g->ranks[j]));
		json_object_object_add(o, "ranks", ranks);
		json_object_object_add(o, "operators", ops_json(g, false, top));
		json_object_object_add(o, "kernels", ops_json(g, true, top));
		json_object_array_add(regions, o);
	}
	json_object_object_add(root, "regions", regions);
	return root;
}

/* ---- the same, streamed ------------------------------------------------- */

#define JR_JSON_FLAGS (JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* @o's members without its braces, after a ",\n" unless *@first; @o is put. */
static void put_members(FILE *f, json_object *o, bool *first)
{
	json_object_object_foreach(o, key, val) {
		fputs(*first ? "\n" : ",\n", f);
		*first = false;
		json_write_string(f, key);
		fprintf(f, ": %s", val ? json_object_to_json_string_ext(val, JR_JSON_FLAGS) : "null");
	}
	json_object_put(o);
}

/* One element of an array; @o is put. */
static void put_element(FILE *f, json_object *o, bool *first)
{
	fputs(*first ? "\n" : ",\n", f);
	*first = false;
	fputs(json_object_to_json_string_ext(o, JR_JSON_FLAGS), f);
	json_object_put(o);
}

static int put_ops(FILE *f, const struct jr_region *g, bool device, unsigned int top)
{
	const struct jr_op **v;
	bool by_cpu, first = true;
	size_t i, n;

	n = jr_top(g, device, top, &v, &by_cpu);
	if (!v)
		return -ENOMEM;
	fprintf(f, ",\n\"%s\": {", device ? "kernels" : "operators");
	put_members(f, ops_head(by_cpu), &first);
	fputs(",\n\"rows\": [", f);
	first = true;
	for (i = 0; i < n; i++)
		put_element(f, op_json(v[i]), &first);
	fputs("]}", f);
	free(v);
	return 0;
}

int job_report_print_json(FILE *f, const struct job_report *r, unsigned int top)
{
	const struct jr_region *g;
	bool first = true, rfirst;
	size_t i, j;
	int ret = 0;

	fputs("{", f);
	put_members(f, root_json(r, top), &first);
	fputs(",\n\"regions\": [", f);
	for (i = 0; i < r->nregions && !ret; i++) {
		g = &r->regions[i];
		fputs(i ? ",\n{" : "\n{", f);
		rfirst = true;
		put_members(f, region_json(g), &rfirst);
		fputs(",\n\"ranks\": [", f);
		rfirst = true;
		for (j = 0; j < g->nranks; j++)
			put_element(f, rank_json(&g->ranks[j]), &rfirst);
		fputs("]", f);
		ret = put_ops(f, g, false, top);
		if (!ret)
			ret = put_ops(f, g, true, top);
		fputs("}", f);
	}
	fputs("\n]\n}\n", f);
	return ret ? ret : ferror(f) ? -EIO : 0;
}
