// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report --json`: the job report as one JSON document, built whole or
 * streamed. */
#include <errno.h>
#include <stdlib.h>

#include "offline/report/job_report.h"
#include "offline/report/job_report_dl.h"
#include "offline/report/job_report_colls.h"
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

json_object *jr_json_us(int64_t ns)
{
	char text[40];
	uint64_t a = ns < 0 ? (uint64_t)-(ns + 1) + 1 : (uint64_t)ns;

	snprintf(text, sizeof(text), "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
		 (unsigned long long)(a % 1000));
	return json_object_new_double_s((double)ns / 1e3, text);
}

static json_object *split_row(const struct jr_rank *k, const char *name, const char *parent,
			      size_t depth, int64_t ns, uint64_t calls)
{
	json_object *o = json_object_new_object();
	double n = (double)k->complete;

	json_object_object_add(o, "region", json_string_obj(name));
	if (parent)
		json_object_object_add(o, "parent", json_string_obj(parent));
	json_object_object_add(o, "depth", json_object_new_uint64(depth));
	json_object_object_add(o, "mean_ms", jdouble((double)ns / n / 1e6, 6));
	json_object_object_add(o, "share", jdouble(k->sum_ns > 0 ? (double)ns / (double)k->sum_ns : 0, 6));
	json_object_object_add(o, "calls_per_segment", jdouble((double)calls / n, 3));
	return o;
}

/* The region's time per sub-region for rank @k: "inside" the tree under
 * the region (depth >= 1), "elsewhere" the regions not in it on their thread. */
static json_object *split_json(const struct jr_region *g, const struct jr_rank *k)
{
	json_object *o = json_object_new_object(), *in = json_object_new_array(),
		    *out = json_object_new_array();
	const struct jr_sub *x;
	int64_t outside = jr_outside_ns(g, k), ns;
	uint64_t calls;
	size_t j;

	for (j = 0; j < g->nsubs; j++) {
		x = &g->subs[g->sub_order[j]];
		ns = jr_sub_ns(g, k, g->sub_order[j], &calls);
		json_object_array_add(x->depth ? in : out,
				      split_row(k, x->name, x->parent_known ? x->parent : NULL,
						x->depth, ns, calls));
	}
	json_object_object_add(o, "inside", in);
	json_object_object_add(o, "outside_sub_regions_ms",
			       jdouble((double)outside / (double)k->complete / 1e6, 6));
	json_object_object_add(o, "outside_sub_regions_share",
			       jdouble(k->sum_ns > 0 ? (double)outside / (double)k->sum_ns : 0, 6));
	json_object_object_add(o, "elsewhere", out);
	return o;
}

static json_object *rank_json(const struct jr_region *g, const struct jr_rank *k)
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
	json_object_object_add(o, "not_counted", json_object_new_uint64(k->uncounted));
	json_object_object_add(o, "steps_without_segment", json_object_new_uint64(k->steps_missing));
	if (k->complete && g && g->nsubs)
		json_object_object_add(o, "split", split_json(g, k));
	if (k->dl_segments)
		json_object_object_add(o, "dataloader", jr_dl_json(k));
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

/* What `fvbpf report` prints as its clock lines: the offset each
 * directory's segments were placed by, none between hosts. */
static json_object *clocks_json(const struct job_report *r)
{
	static const char *const how_name[] = {
		[MF_APPLIED_NONE] = "none", [MF_APPLIED_ATTACH_START] = "attach start",
		[MF_APPLIED_MEAN] = "mean of attach start and end", [MF_APPLIED_OWN] = "own times",
	};
	json_object *a = json_object_new_array(), *o;
	int64_t off, moved;
	enum mf_applied how;
	size_t i;

	for (i = 0; r->ms && i < r->ndirs; i++) {
		how = mf_applied_offset(&r->ms[i], &off, &moved);
		o = json_object_new_object();
		json_object_object_add(o, "directory", json_string_obj(r->ms[i].dir));
		json_object_object_add(o, "hostname", json_string_obj(r->ms[i].hostname));
		json_object_object_add(o, "offset_from", json_string_obj(how_name[how]));
		json_object_object_add(o, "realtime_minus_monotonic_ns", how == MF_APPLIED_ATTACH_START ||
				       how == MF_APPLIED_MEAN ? json_object_new_int64(off) : NULL);
		json_object_object_add(o, "moved_by_attach_end_ns", how == MF_APPLIED_ATTACH_START ?
				       json_object_new_int64(moved) : NULL);
		/* against the first directory's host, from shared collectives */
		json_object_object_add(o, "skew_from_collectives_ns", r->ms[i].skew_pairs ?
				       json_object_new_int64(r->ms[i].skew_ns) : NULL);
		json_object_object_add(o, "skew_spread_ns", r->ms[i].skew_pairs ?
				       json_object_new_int64(r->ms[i].skew_spread_ns) : NULL);
		json_object_object_add(o, "skew_collectives", json_object_new_uint64(r->ms[i].skew_pairs));
		json_object_array_add(a, o);
	}
	return a;
}

/* The job's stragglers: those of the region with the most collectives
 * matched (regions nest: one region's, not a sum that counts one twice). */
static void colls_root(json_object *root, const struct job_report *r)
{
	const struct jr_region *best = NULL;
	size_t i;

	for (i = 0; i < r->nregions; i++)
		if (r->regions[i].colls && r->regions[i].colls->n &&
		    (!best || r->regions[i].colls->n > best->colls->n))
			best = &r->regions[i];
	json_object_object_add(root, "stragglers_region", best ? json_string_obj(best->name) : NULL);
	json_object_object_add(root, "stragglers",
			       best ? jr_colls_stragglers_json(r, best->colls) : json_object_new_array());
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
	json_object_object_add(root, "clocks", clocks_json(r));
	json_object_object_add(root, "offset_between_hosts", json_string_obj(jr_any_skew(r) ?
		"from the collectives each host's ranks share with the first directory's: the median "
		"difference of their exits (clocks[].skew_from_collectives_ns, applied)" :
		"none applied: hosts' realtime clocks are taken as synchronised (NTP/PTP)"));
	colls_root(root, r);
	return root;
}

#define STRAGGLER_RULE "flagged when its mean is at least 5% over the median rank mean and " \
	"the difference is more than the ranks' own step-to-step spread (the median over ranks " \
	"of max - min of their segment times)"

static json_object *pairing_json(const struct job_report *r, const struct jr_region *g)
{
	const struct sp_region *pr = g->pairs;
	json_object *o = json_object_new_object();
	size_t s, lacking = 0;

	for (s = 0; pr && s < pr->nsteps; s++)
		lacking += r->pairs.steps[pr->first_step + s].n < pr->nstreams;
	json_object_object_add(o, "paired_by", json_string_obj(
		pr && pr->by_key ? "step_key" : "time_overlap"));
	json_object_object_add(o, "steps", json_object_new_uint64(pr ? pr->nsteps : 0));
	json_object_object_add(o, "ranks", json_object_new_uint64(pr ? pr->nstreams : 0));
	json_object_object_add(o, "steps_missing_a_rank", json_object_new_uint64(lacking));
	json_object_object_add(o, "segments_without_times",
			       json_object_new_uint64(pr ? pr->no_times : 0));
	return o;
}

/* A region without its ranks, steps, operators and kernels. */
static json_object *region_json(const struct job_report *r, const struct jr_region *g)
{
	json_object *o = json_object_new_object(), *s, *why = json_object_new_array(), *w;
	size_t i;
	bool flat = false;

	json_object_object_add(o, "region", json_string_obj(g->name));
	json_object_object_add(o, "segments", json_object_new_uint64(g->segments));
	json_object_object_add(o, "complete", json_object_new_uint64(
		g->segments - g->incomplete - (r->with_uncounted ? 0 : g->uncounted)));
	json_object_object_add(o, "incomplete", json_object_new_uint64(g->incomplete));
	json_object_object_add(o, "not_counted", json_object_new_uint64(g->uncounted));
	/* the reasons are the target's text: values (made valid), never keys */
	for (i = 0; i < 5; i++) {
		if (i < 4 && !g->whys[i].why)
			continue;
		if (i == 4 && !g->whys_other)
			break;
		w = json_object_new_object();
		json_object_object_add(w, "why", json_string_obj(i < 4 ? g->whys[i].why : "(other reasons)"));
		json_object_object_add(w, "segments", json_object_new_uint64(i < 4 ? g->whys[i].n :
									       g->whys_other));
		json_object_array_add(why, w);
	}
	json_object_object_add(o, "not_counted_why", why);
	json_object_object_add(o, "not_counted_taken_in", json_object_new_boolean(r->with_uncounted));
	json_object_object_add(o, "pairing", pairing_json(r, g));
	for (i = 0; i < g->nsubs; i++)
		flat = flat || !g->subs[i].parent_known;
	json_object_object_add(o, "split_nesting", json_string_obj(
		!g->nsubs ? "no sub-regions" : flat ? "not recorded (older summaries): flat" : "recorded"));
	json_object_object_add(o, "sub_region_rows_left_out", json_object_new_uint64(g->subs_dropped));
	if (g->colls) {
		json_object_object_add(o, "collectives_matched", json_object_new_uint64(g->colls->n));
		json_object_object_add(o, "collectives_one_rank_only",
				       json_object_new_uint64(g->colls->alone));
		json_object_object_add(o, "collectives_missing_a_rank",
				       json_object_new_uint64(g->colls->partial));
		json_object_object_add(o, "stragglers", jr_colls_stragglers_json(r, g->colls));
	}
	if (g->have_slowest) {
		s = rank_json(NULL, &g->ranks[g->slowest]);
		json_object_object_add(s, "median_rank_mean_ms", jdouble(g->median_ms, 6));
		json_object_object_add(s, "over_median_ms", jdouble(g->over_ms, 6));
		json_object_object_add(s, "over_median_pct", jdouble(g->over_pct, 3));
		json_object_object_add(s, "ranks_spread_ms", jdouble(g->spread_ms, 6));
		json_object_object_add(s, "straggler", json_object_new_boolean(g->straggler));
		json_object_object_add(s, "straggler_rule", json_string_obj(STRAGGLER_RULE));
		json_object_object_add(o, "slowest", s);
	} else {
		json_object_object_add(o, "slowest", NULL);
	}
	return o;
}

static json_object *member_json(const struct job_report *r, size_t i)
{
	const struct sp_seg *g = &r->pairs.segs[i];
	const struct mf_file *f = jr_step_file(r, i);
	json_object *o = json_object_new_object();
	char label[512];

	jr_stream_label(r, g->stream, label, sizeof(label));
	json_object_object_add(o, "label", json_string_obj(label));
	json_object_object_add(o, "hostname", json_string_obj(r->ms[g->m].hostname));
	json_object_object_add(o, "rank", json_object_new_int(f->rank));
	json_object_object_add(o, "restart", json_object_new_int(f->restart));
	if (f->pid_named)
		json_object_object_add(o, "pid", json_object_new_int(f->pid));
	json_object_object_add(o, "directory", json_string_obj(r->ms[g->m].dir));
	json_object_object_add(o, "segment", json_object_new_uint64(f->segment));
	json_object_object_add(o, "duration_ms", jms(f->duration_ns));
	json_object_object_add(o, "incomplete", json_object_new_boolean(f->incomplete));
	json_object_object_add(o, "counted", json_object_new_boolean(f->counted));
	json_object_object_add(o, "trace", json_string_obj(f->trace));
	return o;
}

/* Step @s: when, its segments side by side, the ranks without one. */
static json_object *step_json(const struct job_report *r, size_t s)
{
	const struct sp_step *t = &r->pairs.steps[s];
	const struct jr_region *g;
	json_object *o = json_object_new_object(), *segs = json_object_new_array(),
		    *miss = json_object_new_array();
	size_t i, n, v[JR_JSON_MISSING];
	struct jr_step_stats st;
	char label[512];

	jr_step_stats(r, s, &st);
	json_object_object_add(o, "step", json_object_new_uint64(t->number));
	json_object_object_add(o, "start_unix_us", jr_json_us(t->start));
	json_object_object_add(o, "end_unix_us", jr_json_us(t->end));
	if (r->pairs.regions[t->region].by_key)
		json_object_object_add(o, "step_key", json_string_obj(jr_step_file(r, t->first)->step_key));
	json_object_object_add(o, "ranks", json_object_new_uint64(st.members));
	json_object_object_add(o, "of_ranks", json_object_new_uint64(st.streams));
	json_object_object_add(o, "segments_overlap", json_object_new_boolean(!t->disjoint));
	json_object_object_add(o, "min_ms", st.have ? jms(st.min_ns) : NULL);
	json_object_object_add(o, "max_ms", st.have ? jms(st.max_ns) : NULL);
	for (i = t->first; i < t->first + t->n; i++)
		json_object_array_add(segs, member_json(r, i));
	json_object_object_add(o, "segments", segs);
	n = sp_missing(&r->pairs, s, v, JR_JSON_MISSING);
	for (i = 0; i < n && i < JR_JSON_MISSING; i++) {
		jr_stream_label(r, v[i], label, sizeof(label));
		json_object_array_add(miss, json_string_obj(label));
	}
	json_object_object_add(o, "missing_count", json_object_new_uint64(n));
	json_object_object_add(o, "missing", miss);
	g = &r->regions[0];
	for (i = 0; i < r->nregions; i++)
		if (r->regions[i].pairs && r->regions[i].pairs == &r->pairs.regions[t->region])
			g = &r->regions[i];
	if (g->colls) {
		json_object_object_add(o, "collectives", jr_colls_step_json(r, g->colls, s));
		json_object_object_add(o, "ranks_in_collectives",
				       jr_colls_step_ranks_json(r, g->colls, s));
	}
	return o;
}

static json_object *steps_json(const struct job_report *r, const struct jr_region *g)
{
	json_object *a = json_object_new_array();
	size_t s;

	for (s = 0; g->pairs && s < g->pairs->nsteps; s++)
		json_object_array_add(a, step_json(r, g->pairs->first_step + s));
	return a;
}

json_object *job_report_json(const struct job_report *r, unsigned int top)
{
	json_object *root = root_json(r, top), *regions = json_object_new_array(), *o, *ranks;
	const struct jr_region *g;
	size_t i, j;

	for (i = 0; i < r->nregions; i++) {
		g = &r->regions[i];
		o = region_json(r, g);
		ranks = json_object_new_array();
		for (j = 0; j < g->nranks; j++)
			json_object_array_add(ranks, rank_json(g, &g->ranks[j]));
		json_object_object_add(o, "ranks", ranks);
		json_object_object_add(o, "steps", steps_json(r, g));
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
		put_members(f, region_json(r, g), &rfirst);
		fputs(",\n\"ranks\": [", f);
		rfirst = true;
		for (j = 0; j < g->nranks; j++)
			put_element(f, rank_json(g, &g->ranks[j]), &rfirst);
		fputs("],\n\"steps\": [", f);
		rfirst = true;
		for (j = 0; g->pairs && j < g->pairs->nsteps; j++)
			put_element(f, step_json(r, g->pairs->first_step + j), &rfirst);
		fputs("]", f);
		ret = put_ops(f, g, false, top);
		if (!ret)
			ret = put_ops(f, g, true, top);
		fputs("}", f);
	}
	fputs("\n]\n}\n", f);
	return ret ? ret : ferror(f) ? -EIO : 0;
}
