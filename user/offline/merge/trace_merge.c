// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf merge`: every rank's step in one Chrome trace, clocks aligned. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_writer.h"
#include "util/file/output_files.h"
#include "offline/merge/trace_merge.h"
#include "offline/merge/merge_internal.h"
#include "util/text_copy.h"

#define ASSUMPTION "cross-node CLOCK_REALTIME clocks are assumed NTP/PTP synchronised; " \
	"that error is not measured and not part of the uncertainty"

void tm_format_us(char *buf, size_t len, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)-(ns + 1) + 1 : (uint64_t)ns;

	snprintf(buf, len, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
		 (unsigned long long)(a % 1000));
}

/* ---- the merged file ---------------------------------------------------- */

static json_object *ns_obj(int64_t ns)
{
	return json_object_new_int64(ns);
}

#define TM_JSON_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE)

/* "key":value, after a separator unless *@first; @v is put. */
static void put_member(FILE *out, const char *key, json_object *v, int *first)
{
	tm_sep(out, first);
	json_write_string(out, key);
	fprintf(out, ":%s", v ? json_object_to_json_string_ext(v, TM_JSON_FLAGS) : "null");
	json_object_put(v);
}

/* One element of an array; @v is put. */
static void put_element(FILE *out, json_object *v, int *first)
{
	tm_sep(out, first);
	fputs(json_object_to_json_string_ext(v, TM_JSON_FLAGS), out);
	json_object_put(v);
}

static json_object *node_json(const struct manifest *m)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "hostname", json_string_obj(m->hostname));
	json_object_object_add(o, "directory", json_string_obj(m->dir));
	json_object_object_add(o, "offset_source", json_string_obj(
		m->clock_source == MF_CLOCK_MANIFEST ? "manifest clock (start and end pairs)" :
		"summary start_wallclock and start_us (1 us steps; read spans not known)"));
	json_object_object_add(o, "offset_ns", ns_obj(m->offset_ns));
	if (m->clock_source == MF_CLOCK_MANIFEST) {
		/* both clocks >= 0 (mf_clock_offset()): no overflow */
		json_object_object_add(o, "offset_start_ns",
			ns_obj(m->clock_start.real_ns - m->clock_start.mono_ns));
		json_object_object_add(o, "offset_end_ns",
			ns_obj(m->clock_end.real_ns - m->clock_end.mono_ns));
		json_object_object_add(o, "read_span_start_ns", ns_obj(m->clock_start.span_ns));
		json_object_object_add(o, "read_span_end_ns", ns_obj(m->clock_end.span_ns));
	}
	json_object_object_add(o, "uncertainty_ns", ns_obj(m->uncertainty_ns));
	return o;
}

static json_object *pick_json(const struct tm_pick *k, const struct tm_src *src, size_t i)
{
	json_object *o = json_object_new_object(), *pids = json_object_new_object();
	char path[PATH_MAX + 256], key[32];
	size_t j;

	json_object_object_add(o, "label", json_string_obj(src->prefix));
	json_object_object_add(o, "hostname", json_string_obj(k->m->hostname));
	json_object_object_add(o, "rank", json_object_new_int(k->f->rank));
	json_object_object_add(o, "restart", json_object_new_int(k->f->restart));
	json_object_object_add(o, "pid", json_object_new_int(k->f->pid));
	snprintf(path, sizeof(path), "%s/%s", k->m->dir, k->f->trace);
	json_object_object_add(o, "source", json_string_obj(path));
	json_object_object_add(o, "segment", json_object_new_uint64(k->f->segment));
	json_object_object_add(o, "incomplete", json_object_new_boolean(k->f->incomplete));
	json_object_object_add(o, "picked_by", json_string_obj(k->how));
	json_object_object_add(o, "overlap_ns", ns_obj(k->overlap_ns));
	json_object_object_add(o, "offset_ns", ns_obj(k->m->offset_ns));
	json_object_object_add(o, "shift_ns", ns_obj(k->shift_ns));
	json_object_object_add(o, "uncertainty_ns", ns_obj(k->m->uncertainty_ns));
	json_object_object_add(o, "flow_id_base", json_object_new_int64(((int64_t)i + 1) << 32));
	for (j = 0; j < src->npids; j++) {
		snprintf(key, sizeof(key), "%lld", (long long)src->pids[j].from);
		json_object_object_add(pids, key, json_object_new_int64(src->pids[j].to));
	}
	json_object_object_add(o, "pids", pids);
	json_object_object_add(o, "events", json_object_new_uint64(src->events));
	return o;
}

/* otherData, a node and a rank at a time: a merge of 100,000 ranks would
 * spend hundreds of MiB on json-c's tree of it. */
static void write_metadata(FILE *out, struct manifest *ms, size_t n, const struct tm_plan *p,
			   const struct tm_src *srcs)
{
	int first = 1, inner = 1, elem = 1;
	size_t i;

	fputs("{\n", out);
	put_member(out, "tool", json_string_obj("fvbpf merge"), &first);
	put_member(out, "region", json_string_obj(p->region), &first);
	put_member(out, "step", json_object_new_uint64(p->step), &first);
	put_member(out, "paired_by", json_string_obj(p->by_key ? "step_key" : "time overlap"), &first);
	put_member(out, "step_chosen_by", json_string_obj(p->chosen), &first);
	put_member(out, "reference_segment", json_object_new_uint64(p->picks[0].f->segment), &first);
	put_member(out, "ranks_not_overlapping_reference", json_object_new_uint64(p->apart), &first);
	put_member(out, "uncounted_segments_left_out", json_object_new_uint64(p->uncounted), &first);
	tm_sep(out, &first);
	fputs("\"clock_alignment\":{\n", out);
	put_member(out, "method", json_string_obj(
		"ts = source CLOCK_MONOTONIC ts + node offset (CLOCK_REALTIME - CLOCK_MONOTONIC, mean of the "
		"offsets read at attach start and end) - base (the earliest aligned segment start)"), &inner);
	put_member(out, "base_realtime_ns", ns_obj(p->base_ns), &inner);
	put_member(out, "uncertainty", json_string_obj(
		"per node: |offset_end - offset_start| + both read spans (uncertainty_ns)"), &inner);
	put_member(out, "assumption", json_string_obj(ASSUMPTION), &inner);
	tm_sep(out, &inner);
	fputs("\"nodes\":[\n", out);
	for (i = 0; i < n; i++)
		put_element(out, node_json(&ms[i]), &elem);
	fputs("\n]}", out);
	tm_sep(out, &first);
	fputs("\"ranks\":[\n", out);
	for (i = 0, elem = 1; i < p->n; i++)
		put_element(out, pick_json(&p->picks[i], &srcs[i], i), &elem);
	fputs("\n]", out);
	tm_sep(out, &first);
	fputs("\"ranks_without_segment\":[\n", out);
	for (i = 0, elem = 1; i < p->nmissing; i++)
		put_element(out, json_string_obj(p->missing[i]), &elem);
	fputs("\n]\n}", out);
}

/* What was merged, the ranks without a segment at the step, the ranks
 * placed that do not overlap the reference (one line each). */
static void say_plan(const struct tm_opts *o, const struct tm_plan *p)
{
	char name[PATH_MAX], region[PATH_MAX], out[PATH_MAX];
	size_t i;

	text_shown(region, sizeof(region), p->region);
	for (i = 0; i < p->nmissing && i < TM_MISSING_SHOWN; i++)
		fprintf(stderr, "fvbpf: merge: %s has no segment at step %zu of region '%s' (no "
			"counterpart of the others')\n", text_shown(name, sizeof(name), p->missing[i]),
			p->step, region);
	if (p->nmissing > TM_MISSING_SHOWN)
		fprintf(stderr, "fvbpf: merge: and %zu more ranks have none (otherData."
			"ranks_without_segment lists them all)\n", p->nmissing - TM_MISSING_SHOWN);
	if (p->apart)
		fprintf(stderr, "fvbpf: warning: merge: %zu of %zu ranks' segments at step %zu do not "
			"overlap the reference rank's in time: they are placed as their clocks say, "
			"not side by side (see otherData.ranks[].overlap_ns)\n", p->apart, p->n,
			p->step);
	fprintf(o->info, "merged %zu rank%s of region %s, step %zu (%s; paired by %s; reference "
		"segment %llu) into %s\n", p->n, p->n == 1 ? "" : "s", region, p->step, p->chosen,
		p->by_key ? "step key" : "time overlap", (unsigned long long)p->picks[0].f->segment,
		text_shown(out, sizeof(out), o->output));
}

int trace_merge(struct manifest *ms, size_t n, const struct tm_opts *o, char *err, size_t errlen)
{
	char dirbuf[PATH_MAX], basebuf[PATH_MAX], path[PATH_MAX], name[PATH_MAX];
	struct tm_src *srcs = NULL;
	struct out_file of = { .f = NULL };
	struct tm_plan p;
	const char *dir, *base;
	int first = 1, ret;
	size_t i;

	ret = tm_plan_build(ms, n, o, &p, err, errlen);
	if (ret)
		return ret;
	if (strlen(o->output) >= sizeof(dirbuf)) {
		snprintf(err, errlen, "-o: path too long");
		ret = -ENAMETOOLONG;
		goto cleanup;
	}
	strcpy(dirbuf, o->output);
	strcpy(basebuf, o->output);
	dir = dirname(dirbuf);
	base = basename(basebuf);
	ret = mf_charge(ms->budget, MF_ALLOC(p.n * sizeof(*srcs)));
	if (ret) {
		mf_budget_error(ms->budget, err, errlen);
		goto cleanup;
	}
	srcs = calloc(p.n, sizeof(*srcs));
	if (!srcs) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	ret = out_open(&of, dir, base);
	if (ret) {
		snprintf(err, errlen, "%s: cannot write: %s", text_shown(name, sizeof(name), o->output),
			 strerror(-ret));
		goto cleanup;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[\n", of.f);
	for (i = 0; i < p.n; i++) {
		tm_src_init(&srcs[i], &p, i);
		if (!p.picks[i].f->trace[0])
			continue;
		snprintf(path, sizeof(path), "%s/%s", p.picks[i].m->dir, p.picks[i].f->trace);
		ret = tm_stream_at(of.f, p.picks[i].m->dirfd, p.picks[i].f->trace, path, &srcs[i],
				   &first, err, errlen);
		if (ret)
			goto cleanup;
		tm_write_process_meta(of.f, &srcs[i], &first);
	}
	fputs("\n],\n\"otherData\":", of.f);
	write_metadata(of.f, ms, n, &p, srcs);
	fputs("\n}\n", of.f);
	ret = out_commit(&of);
	of.f = NULL;
	if (ret)
		snprintf(err, errlen, "%s: write failed: %s", text_shown(name, sizeof(name), o->output),
			 strerror(-ret));
	else if (o->info)
		say_plan(o, &p);
cleanup:
	if (of.f)
		out_abort(&of);
	for (i = 0; srcs && i < p.n; i++)
		tm_src_free(&srcs[i]);
	free(srcs);
	tm_plan_free(&p);
	return ret;
}
