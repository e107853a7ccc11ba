// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The segment's metadata keys agree across the outputs (issue 18, item 3):
 * one segment is written as a JSON trace, a pftrace, a summary JSON and a
 * summary text, and the keys each file carries are read back from the file
 * itself -- the trace's "otherData", the annotations of the pftrace's
 * segment slice, the summary JSON's "metadata", the text's "segment
 * metadata:" block -- and compared with the table (user/output/seg_meta.c):
 * each carries every row, and the text's values are the trace's.  The
 * manifest's record of a written segment lists some of the keys, in the
 * order it always had: each is a row of the table and has the table's value.
 */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/pftrace/pftrace_writer.h"
#include "output/seg_index.h"
#include "output/seg_meta.h"
#include "output/seg_writer.h"
#include "output/summary/summary.h"
#include "output/json/trace_writer.h"
#include "pipeline/registry.h"
#include "util/json_writer.h"
#include "unit.h"

/* The summary's own figures, not the segment's metadata (summary.c). */
static const char *const summary_own[] = {
	"device_time", "gpu_busy_us", "gpu_total_us", "cuda_calls_not_attributed_to_ops",
};

struct keys {
	char *k[128];
	size_t n;
};

static void keys_add(struct keys *ks, const char *k, size_t len)
{
	if (ks->n < sizeof(ks->k) / sizeof(ks->k[0]))
		ks->k[ks->n++] = strndup(k, len);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void keys_sort(struct keys *ks)
{
	qsort(ks->k, ks->n, sizeof(ks->k[0]), cmp_str);
}

static void keys_free(struct keys *ks)
{
	while (ks->n)
		free(ks->k[--ks->n]);
}

static int keys_same(const struct keys *a, const struct keys *b, const char *what)
{
	size_t i;

	if (a->n != b->n) {
		printf("# %s: %zu keys, the table %zu\n", what, a->n, b->n);
		return 0;
	}
	for (i = 0; i < a->n; i++)
		if (strcmp(a->k[i], b->k[i])) {
			printf("# %s: %s where the table has %s\n", what, a->k[i], b->k[i]);
			return 0;
		}
	return 1;
}

struct fixture {
	struct region_registry reg;
	struct name_table knames;
	struct proc_target proc;
	struct session_meta meta;
	struct segment seg;
	struct seg_output_ctx ctx;
};

static void setup(struct fixture *x)
{
	int region;

	memset(x, 0, sizeof(*x));
	registry_init(&x->reg);
	region = registry_add(&x->reg, "training_step", NULL);
	CHECK(region >= 0);
	name_table_init(&x->knames);
	x->proc.pid = getpid();
	x->proc.rank = 3;
	snprintf(x->proc.comm, sizeof(x->proc.comm), "python3");
	snprintf(x->proc.cmdline, sizeof(x->proc.cmdline), "python3 train.py");
	snprintf(x->meta.hostname, sizeof(x->meta.hostname), "node7");
	x->meta.mono_at_start_ns = 500;
	x->meta.real_at_start_ns = 1767225600000000000ull; /* 2026-01-01T00:00:00Z */
	x->seg.pid = getpid();
	x->seg.seq = 4;
	x->seg.region = (uint32_t)(region < 0 ? 0 : region);
	x->seg.start_ns = 1000;
	x->seg.end_ns = 5000;
	x->seg.slices = calloc(1, sizeof(*x->seg.slices));
	if (x->seg.slices) {
		x->seg.slices[0] = (struct seg_slice){ (uint32_t)getpid(), x->seg.region, 1000, 5000,
						       0, 0, 0 };
		x->seg.nslices = x->seg.cap = 1;
	}
	x->ctx = (struct seg_output_ctx){ &x->seg, &x->proc, &x->reg, &x->meta, &x->knames,
					  TRACE_JSON, false, false, NULL };
}

static void teardown(struct fixture *x)
{
	free(x->seg.slices);
	proc_target_free(&x->proc);
	name_table_free(&x->knames);
}

/* What @fn writes, as a string; the caller frees it. */
static char *written(int (*fn)(FILE *, void *), void *arg, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	CHECK_EQ(fn(f, arg), 0);
	fclose(f);
	return buf;
}

static int do_trace(FILE *f, void *ctx)
{
	return trace_write(f, ctx);
}

static int do_pftrace(FILE *f, void *ctx)
{
	return pftrace_write(f, ctx);
}

struct sum_arg {
	struct summary *s;
	const struct seg_output_ctx *c;
};

static int do_summary(FILE *f, void *arg)
{
	struct sum_arg *a = arg;

	return summary_write_json(f, a->s, a->c);
}

static int do_summary_text(FILE *f, void *arg)
{
	struct sum_arg *a = arg;

	return summary_write_text(f, a->s, a->c);
}

/* The keys of the text's "segment metadata:" block, its last lines. */
static void text_keys(const char *text, struct keys *ks)
{
	const char *p = strstr(text, "\nsegment metadata:\n"), *colon, *eol;

	CHECK(p != NULL);
	for (p = p ? strchr(p + 1, '\n') + 1 : NULL; p && *p; p = eol + 1) {
		eol = strchr(p, '\n');
		colon = strchr(p, ':');
		CHECK(eol && colon && colon < eol);
		if (!eol || !colon || colon > eol)
			break;
		keys_add(ks, p, (size_t)(colon - p));
	}
}

/* The text after "\n@key:" up to the end of its line: "" when absent. */
static void text_value(const char *text, const char *key, char *buf, size_t len)
{
	char pat[80];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), "\n%s:", key);
	p = strstr(text, pat);
	buf[0] = '\0';
	if (!p)
		return;
	p += strlen(pat);
	if (*p == ' ')
		p++;
	n = strcspn(p, "\n");
	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
}

/* Each scalar value of the text's block is the JSON trace's otherData's:
 * strings as they are (the fixture's need no escaping), numbers and
 * booleans as json-c writes them. */
static void text_values_agree(const char *text, const char *trace)
{
	json_object *root = json_tokener_parse(trace), *od = NULL, *v;
	char got[1100], want[1100];
	size_t i;

	CHECK(root && json_object_object_get_ex(root, "otherData", &od));
	for (i = 0; od && i < seg_meta_nfields; i++) {
		const struct seg_meta_field *f = &seg_meta_fields[i];

		if (f->kind == SM_COUNTS || !json_object_object_get_ex(od, f->key, &v))
			continue;
		text_value(text, f->key, got, sizeof(got));
		if (f->kind == SM_STR)
			snprintf(want, sizeof(want), "%s", json_object_get_string(v));
		else if (f->kind == SM_US)
			snprintf(want, sizeof(want), "%.3f", json_object_get_double(v));
		else
			snprintf(want, sizeof(want), "%s", json_object_to_json_string(v));
		if (strcmp(got, want))
			printf("# text %s: \"%s\", trace \"%s\"\n", f->key, got, want);
		CHECK_STR(got, want);
	}
	json_object_put(root);
}

static void object_keys(json_object *o, struct keys *ks, const char *const *skip, size_t nskip)
{
	size_t i;

	json_object_object_foreach(o, key, val) {
		(void)val;
		for (i = 0; i < nskip && strcmp(key, skip[i]); i++)
			;
		if (i == nskip)
			keys_add(ks, key, strlen(key));
	}
}

static void json_keys(const char *text, const char *member, struct keys *ks,
		      const char *const *skip, size_t nskip)
{
	json_object *root = json_tokener_parse(text), *o;

	CHECK(root != NULL);
	if (root && json_object_object_get_ex(root, member, &o))
		object_keys(o, ks, skip, nskip);
	json_object_put(root);
}

/* Protocol buffers, just enough to walk fields (pb_writer.h writes them). */
static int pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/* The next field of [*p, end): its number, and its bytes when length-delimited. */
static int pb_next(const uint8_t **p, const uint8_t *end, uint32_t *field, const uint8_t **data,
		   size_t *len)
{
	uint64_t tag, v;

	if (pb_varint(p, end, &tag))
		return -1;
	*field = (uint32_t)(tag >> 3);
	*data = NULL;
	*len = 0;
	switch (tag & 7) {
	case 0: return pb_varint(p, end, &v);
	case 1: if (end - *p < 8) return -1; *p += 8; return 0;
	case 5: if (end - *p < 4) return -1; *p += 4; return 0;
	case 2:
		if (pb_varint(p, end, &v) || v > (uint64_t)(end - *p))
			return -1;
		*data = *p;
		*len = (size_t)v;
		*p += v;
		return 0;
	default: return -1;
	}
}

/* Names of the debug annotations (TrackEvent field 4, name field 10) of every event. */
static void pftrace_keys(const uint8_t *b, size_t n, struct keys *ks)
{
	const uint8_t *p = b, *pk, *te, *da, *end = b + n, *d1, *d2, *d3, *d4;
	size_t l1, l2, l3, l4;
	uint32_t f;

	while (p < end && !pb_next(&p, end, &f, &d1, &l1)) {
		if (f != 1 || !d1)
			continue;
		for (pk = d1; pk < d1 + l1 && !pb_next(&pk, d1 + l1, &f, &d2, &l2);) {
			if (f != 11 || !d2)
				continue;
			for (te = d2; te < d2 + l2 && !pb_next(&te, d2 + l2, &f, &d3, &l3);) {
				if (f != 4 || !d3)
					continue;
				for (da = d3; da < d3 + l3 && !pb_next(&da, d3 + l3, &f, &d4, &l4);)
					if (f == 10 && d4)
						keys_add(ks, (const char *)d4, l4);
			}
		}
	}
}

static void test_keys_agree(void)
{
	struct keys table = { 0 }, trace = { 0 }, pf = { 0 }, sum = { 0 }, txt = { 0 };
	struct fixture x;
	struct summary s;
	struct sum_arg sa = { &s, NULL };
	size_t i, len = 0;
	char *out, *tr;

	setup(&x);
	for (i = 0; i < seg_meta_nfields; i++)
		keys_add(&table, seg_meta_fields[i].key, strlen(seg_meta_fields[i].key));
	tr = written(do_trace, &x.ctx, &len);
	if (tr)
		json_keys(tr, "otherData", &trace, NULL, 0);
	x.ctx.format = TRACE_PFTRACE;
	out = written(do_pftrace, &x.ctx, &len);
	if (out)
		pftrace_keys((const uint8_t *)out, len, &pf);
	free(out);
	CHECK_EQ(summary_build(&s, &x.ctx), 0);
	sa.c = &x.ctx;
	out = written(do_summary, &sa, &len);
	if (out)
		json_keys(out, "metadata", &sum, summary_own,
			  sizeof(summary_own) / sizeof(summary_own[0]));
	free(out);
	out = written(do_summary_text, &sa, &len);
	if (out) {
		text_keys(out, &txt);
		if (tr)
			text_values_agree(out, tr);
	}
	free(out);
	free(tr);
	summary_free(&s);

	keys_sort(&table);
	keys_sort(&trace);
	keys_sort(&pf);
	keys_sort(&sum);
	keys_sort(&txt);
	CHECK(table.n > 30);
	CHECK(keys_same(&trace, &table, "JSON trace otherData"));
	CHECK(keys_same(&pf, &table, "pftrace annotations"));
	CHECK(keys_same(&sum, &table, "summary JSON metadata"));
	CHECK(keys_same(&txt, &table, "summary text metadata"));
	keys_free(&table);
	keys_free(&trace);
	keys_free(&pf);
	keys_free(&sum);
	keys_free(&txt);
	teardown(&x);
}

/* The keys the issue found missing from the summary are there now. */
static void test_summary_has_them(void)
{
	static const char *const want[] = { "lost_end", "gpu_clock", "limits" };
	struct fixture x;
	struct summary s;
	struct sum_arg sa = { &s, NULL };
	json_object *root, *m, *v;
	size_t i, len = 0;
	char *out;

	setup(&x);
	CHECK_EQ(summary_build(&s, &x.ctx), 0);
	sa.c = &x.ctx;
	out = written(do_summary, &sa, &len);
	root = out ? json_tokener_parse(out) : NULL;
	CHECK(root && json_object_object_get_ex(root, "metadata", &m));
	for (i = 0; root && m && i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(json_object_object_get_ex(m, want[i], &v));
	if (root && json_object_object_get_ex(m, "limits", &v) &&
	    json_object_object_get_ex(v, "slices", &v))
		CHECK_EQ(json_object_get_uint64(v), SEG_MAX_SLICES);
	json_object_put(root);
	free(out);
	summary_free(&s);
	teardown(&x);
}

struct record_arg {
	char text[1024];
	const struct seg_output_ctx *c;
	size_t keys;
};

/* The record as text, and each of its segment keys checked against the table. */
static void record_text(json_object *rec, void *ctx)
{
	static const char *const files[] = { "trace", "summary_txt", "summary_json" };
	struct record_arg *a = ctx;
	json_object *want;
	size_t i;

	snprintf(a->text, sizeof(a->text), "%s",
		 json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
	json_object_object_foreach(rec, key, val) {
		for (i = 0; i < 3 && strcmp(key, files[i]); i++)
			;
		if (i < 3)
			continue;
		want = seg_meta_json(a->c, key);
		if (!want)
			printf("# manifest record: %s is not a row of the table\n", key);
		CHECK(want != NULL);
		CHECK(want && json_object_equal(val, want));
		json_object_put(want);
		a->keys++;
	}
}

/* The manifest's record of a written segment: its keys, in their order, from the table. */
static void test_manifest_record(void)
{
	char dir[] = "/tmp/test_seg_meta.XXXXXX", want[1024];
	struct record_arg got = { "", NULL, 0 };
	struct written_segment ws;
	struct seg_index ix;
	struct fixture x;

	setup(&x);
	x.seg.incomplete = true;
	CHECK(mkdtemp(dir) != NULL);
	memset(&ws, 0, sizeof(ws));
	snprintf(ws.trace, sizeof(ws.trace), "t.json");
	snprintf(ws.summary_txt, sizeof(ws.summary_txt), "s.txt");
	snprintf(ws.summary_json, sizeof(ws.summary_json), "s.json");
	seg_index_init(&ix, dir);
	CHECK_EQ(seg_index_add(&ix, &x.ctx, &ws), 0);
	got.c = &x.ctx;
	CHECK_EQ(seg_index_each(&ix, record_text, &got), 0);
	CHECK_EQ(got.keys, 13);
	seg_index_close(&ix);
	rmdir(dir);
	snprintf(want, sizeof(want), "{\"pid\":%d,\"rank\":3,\"restart\":0,\"region\":\"training_step\","
		 "\"segment\":4,\"incomplete\":true,\"started_before_attach\":false,"
		 "\"truncated_by_memory\":false,\"start_unix_us\":1767225600000000.500,"
		 "\"end_unix_us\":1767225600000004.500,\"step_key\":\"\",\"counted\":true,"
		 "\"not_counted_why\":\"\",\"trace\":\"t.json\",\"summary_txt\":\"s.txt\","
		 "\"summary_json\":\"s.json\"}", (int)getpid());
	CHECK_STR(got.text, want);
	teardown(&x);
}

/* The keys the offline commands pair ranks by: wall-clock bounds from the
 * session's clock pair, counted unless the tracker said why not. */
static void test_step_keys(void)
{
	struct fixture x;
	json_object *v;

	setup(&x);
	v = seg_meta_json(&x.ctx, "start_unix_us");
	CHECK_STR(json_object_to_json_string(v), "1767225600000000.500");
	json_object_put(v);
	v = seg_meta_json(&x.ctx, "end_unix_us");
	CHECK_STR(json_object_to_json_string(v), "1767225600000004.500");
	json_object_put(v);
	v = seg_meta_json(&x.ctx, "step_key");
	CHECK_STR(json_object_get_string(v), "");
	json_object_put(v);
	v = seg_meta_json(&x.ctx, "counted");
	CHECK(json_object_get_boolean(v));
	json_object_put(v);
	x.seg.started_before_attach = true;
	x.seg.not_counted = SEG_WHY_BEFORE_ATTACH;
	v = seg_meta_json(&x.ctx, "counted");
	CHECK(!json_object_get_boolean(v));
	json_object_put(v);
	v = seg_meta_json(&x.ctx, "not_counted_why");
	CHECK_STR(json_object_get_string(v), "started before attach");
	json_object_put(v);
	/* the tracker's other reasons (segment.c, cut_gate.c) */
	x.seg.started_before_attach = false;
	x.seg.not_counted = SEG_WHY_FRAGMENT;
	v = seg_meta_json(&x.ctx, "not_counted_why");
	CHECK_STR(json_object_get_string(v), "a fragment of the step in flight at attach");
	json_object_put(v);
	x.seg.not_counted = SEG_WHY_EARLY;
	v = seg_meta_json(&x.ctx, "counted");
	CHECK(!json_object_get_boolean(v));
	json_object_put(v);
	teardown(&x);
}

int main(void)
{
	RUN(test_keys_agree);
	RUN(test_step_keys);
	RUN(test_summary_has_them);
	RUN(test_manifest_record);
	UNIT_DONE();
}
