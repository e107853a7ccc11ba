// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report --json`: the job report as one JSON document, built whole or
 * streamed. */
#include <errno.h>
#include <stdlib.h>

#include "offline/job_report.h"
#include "util/json_writer.h"

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
