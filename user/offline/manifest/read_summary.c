// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Reading back the summary JSON of each segment a manifest lists. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/file/file_open.h"
#include "offline/manifest/manifest_read.h"
#include "offline/manifest/read_internal.h"
#include "util/text_copy.h"

struct sum_read {
	struct manifest *m;
	struct mf_file *f;
	mf_row_fn fn;             /* each row to it, or */
	void *ctx;
	bool keep_rows;           /* into f->rows, or neither: rows skipped */
	bool have_meta, rows_done, rows_later;
};

/* start <= end, and the span fits: a segment's times to believe. */
static bool times_valid(int64_t start, int64_t end, int64_t *span)
{
	return start <= end && !__builtin_sub_overflow(end, start, span);
}

/* Without a manifest clock: the session's offset, as the summary wrote
 * its start in both clocks (microseconds). */
static void wallclock_offset(struct manifest *m, const struct mf_file *f, const char *wallclock)
{
	int64_t wall_ns, off;

	if (m->clock_source != MF_CLOCK_NONE || !f->have_times || !wallclock ||
	    mf_parse_wallclock(wallclock, &wall_ns) ||
	    __builtin_sub_overflow(wall_ns, f->start_ns / 1000 * 1000, &off))
		return;
	m->clock_source = MF_CLOCK_WALLCLOCK;
	m->offset_ns = off;
	m->uncertainty_ns = 1000; /* both written in whole microseconds */
}

static int apply_meta(struct manifest *m, struct mf_file *f, json_object *meta)
{
	int64_t s_ns, e_ns, d_ns, span = 0;
	const char *s;
	int ret;

	f->have_times = !mf_json_us_to_ns(get(meta, "start_us"), &s_ns) &&
			!mf_json_us_to_ns(get(meta, "end_us"), &e_ns) && times_valid(s_ns, e_ns, &span);
	if (f->have_times) {
		f->start_ns = s_ns;
		f->end_ns = e_ns;
	}
	if (!mf_json_us_to_ns(get(meta, "duration_us"), &d_ns))
		f->duration_ns = d_ns;
	else if (f->have_times)
		f->duration_ns = span;
	if (f->duration_ns < 0)
		f->duration_ns = 0;
	if (get(meta, "incomplete") && get_bool(meta, "incomplete"))
		f->incomplete = true;
	ret = mf_step_keys(m, f, meta);
	if (ret)
		return ret;
	if (get(meta, "restart"))
		f->restart = get_int(meta, "restart", f->restart);
	s = get_str(meta, "region");
	if (!f->region) {
		ret = mf_intern(m, s ? s : "", &f->region);
		if (ret)
			return ret;
	}
	if (!m->hostname[0] && (s = get_str(meta, "hostname"))) {
		free(m->hostname);
		if (!(m->hostname = strdup(s)))
			return -ENOMEM;
	}
	wallclock_offset(m, f, get_str(meta, "start_wallclock"));
	f->have_summary = true;
	return 0;
}

static int one_row(struct sum_read *sr, json_object *row)
{
	if (sr->fn)
		return sr->fn(sr->ctx, sr->m, sr->f, row);
	if (!sr->f->rows && !(sr->f->rows = json_object_new_array()))
		return -ENOMEM;
	return json_object_array_add(sr->f->rows, json_object_get(row)) ? -ENOMEM : 0;
}

/* An array's elements, one at a time, each parsed and handed to @one. */
static int read_each(struct js_reader *r, struct js_text *t, struct sum_read *sr,
		     int (*one)(struct sum_read *sr, json_object *o))
{
	json_object *o;
	int ret;

	ret = js_first(r, '[');
	while (!ret) {
		ret = js_value(r, t, JS_VALUE_MAX);
		if (ret)
			break;
		o = js_parse(t);
		ret = o ? one(sr, o) : -EINVAL;
		json_object_put(o);
		if (!ret)
			ret = js_next(r, ']');
	}
	return ret < 0 ? ret : 0;
}

/* The rows, one at a time. */
static int read_rows(struct js_reader *r, struct js_text *t, struct sum_read *sr)
{
	int ret = read_each(r, t, sr, one_row);

	sr->rows_done = true;
	return ret;
}

/* One of "collectives": kept when its fields are whole. */
static int one_coll(struct sum_read *sr, json_object *o)
{
	struct manifest *m = sr->m;
	struct mf_file *f = sr->f;
	struct mf_coll c = { 0 };
	json_object *seq = get(o, "seq");
	const char *name = get_str(o, "name"), *pg = get_str(o, "pg");
	int ret;

	if (!json_object_is_type(o, json_type_object) || !name || !seq ||
	    !json_object_is_type(seq, json_type_int) || json_object_get_int64(seq) < 0 ||
	    mf_json_us_to_ns(get(o, "arrive_us"), &c.arrive_ns) ||
	    mf_json_us_to_ns(get(o, "end_us"), &c.end_ns) || c.end_ns < c.arrive_ns ||
	    f->ncolls >= MF_COLLS_MAX) {
		f->colls_dropped++;
		return 0;
	}
	c.seq = (uint64_t)json_object_get_int64(seq);
	c.group_size = get_int(o, "group_size", 0);
	c.bytes = get_i64(o, "bytes", -1);
	if (c.bytes < 0)
		c.bytes = -1;
	ret = mf_intern(m, name, &c.name);
	if (!ret)
		ret = mf_intern(m, get_str(o, "dtype") ? get_str(o, "dtype") : "", &c.dtype);
	if (!ret)
		ret = mf_intern(m, pg ? pg : "", &c.pg);
	if (!ret)
		ret = mf_grow(m->budget, &f->colls, f->ncolls, &f->capcolls, sizeof(c), 16);
	if (ret)
		return ret;
	f->colls[f->ncolls++] = c;
	return 0;
}

/* Of "dataloader", @key's value into @f: the wait and the batches; the
 * lists beside them are skipped unread. */
static int dl_member(struct js_reader *r, struct js_text *t, struct mf_file *f, const char *key)
{
	json_object *v;
	int64_t n;
	int ret;

	if (strcmp(key, "wait_us") && strcmp(key, "batches"))
		return js_value(r, NULL, 0);
	ret = js_value(r, t, 64);
	if (ret)
		return ret;
	v = js_parse(t);
	if (!strcmp(key, "wait_us")) {
		f->have_dl = v && !mf_json_us_to_ns(v, &f->dl_wait_ns) && f->dl_wait_ns >= 0;
	} else if (v && json_object_is_type(v, json_type_int)) {
		n = json_object_get_int64(v);
		f->dl_batches = n > 0 ? (uint64_t)n : 0;
	}
	json_object_put(v);
	return 0;
}

/* "dataloader": an object (or null where the trainer had no batches). */
static int read_dl(struct js_reader *r, struct js_text *t, struct mf_file *f)
{
	char key[16];
	int ret;

	if (js_ws(r) != '{')
		return js_value(r, NULL, 0);
	ret = js_first(r, '{');
	while (!ret) {
		ret = js_key(r, t, key, sizeof(key));
		if (!ret)
			ret = dl_member(r, t, f, key);
		if (!ret)
			ret = js_next(r, '}');
	}
	return ret < 0 ? ret : 0;
}

static int summary_member(struct js_reader *r, struct js_text *t, struct sum_read *sr,
			  const char *key, bool rows_only)
{
	json_object *meta;
	int ret;

	if (!strcmp(key, "metadata") && !rows_only) {
		ret = js_value(r, t, JS_VALUE_MAX);
		if (ret)
			return ret;
		meta = js_parse(t);
		if (!meta)
			return -EINVAL;
		ret = json_object_is_type(meta, json_type_object) ? apply_meta(sr->m, sr->f, meta) :
								     -ENOTTY;
		json_object_put(meta);
		sr->have_meta = !ret;
		return ret;
	}
	if (!strcmp(key, "collectives") && !rows_only && !sr->f->ncolls) {
		if (js_ws(r) != '[')
			return -ENOTTY;
		return read_each(r, t, sr, one_coll); /* with the metadata: its first pass */
	}
	if (!strcmp(key, "dataloader") && !rows_only)
		return read_dl(r, t, sr->f);
	if (strcmp(key, "rows"))
		return js_value(r, NULL, 0);
	if (js_ws(r) != '[')
		return -ENOTTY;
	if ((!sr->fn && !sr->keep_rows) || sr->rows_done)
		return js_value(r, NULL, 0);
	/* Rows before the metadata (fvbpf writes it first): they are read in
	 * a second pass, once it is known whether and where they count. */
	if (!sr->have_meta) {
		sr->rows_later = true;
		return js_value(r, NULL, 0);
	}
	return read_rows(r, t, sr);
}

static int summary_pass(struct js_reader *r, struct js_text *t, struct sum_read *sr,
			bool rows_only)
{
	char key[32];
	int c, ret;

	c = js_ws(r);
	ret = c == '{' ? js_first(r, '{') : c < 0 ? -EINVAL : -ENOTTY;
	while (!ret) {
		ret = js_key(r, t, key, sizeof(key));
		if (!ret)
			ret = summary_member(r, t, sr, key, rows_only);
		if (!ret)
			ret = js_next(r, '}');
	}
	return ret == 1 ? js_end(r) : ret;
}

static int read_one_summary(struct sum_read *sr, char *err, size_t errlen)
{
	char path[PATH_MAX + 256], name[PATH_MAX];
	struct js_reader *r = NULL;
	struct js_text t = { 0 };
	struct stat st;
	int fd, ret;

	if (!sr->f->summary_json[0]) {
		snprintf(err, errlen, "%s/manifest.json: a file entry without \"summary_json\"",
			 text_shown(name, sizeof(name), sr->m->dir));
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/%s", sr->m->dir, sr->f->summary_json);
	fd = open_regular_at(sr->m->dirfd, sr->f->summary_json, MF_JSON_MAX, &st);
	if (fd < 0) {
		mf_open_error(err, errlen, path, fd, MF_JSON_MAX);
		return fd;
	}
	ret = js_open(&r, fd, MF_JSON_MAX);
	if (!ret)
		ret = summary_pass(r, &t, sr, false);
	if (!ret && sr->rows_later && sr->have_meta) {
		ret = js_rewind(r);
		if (!ret)
			ret = summary_pass(r, &t, sr, true);
	}
	if (!ret && !sr->have_meta)
		ret = -ENOTTY;
	if (ret == -ENOTTY)
		snprintf(err, errlen, "%s: not an fvbpf summary (no \"metadata\" object)",
			 text_shown(name, sizeof(name), path));
	else if (ret)
		mf_stream_error(err, errlen, path, r, ret, sr->m->budget, JS_VALUE_MAX);
	js_text_free(&t);
	js_close(r);
	return ret;
}

static int read_summaries(struct manifest *m, const char *region, struct sum_read *proto,
			  char *err, size_t errlen)
{
	struct sum_read sr;
	size_t i;
	int ret;

	for (i = 0; i < m->nfiles; i++) {
		if (region && m->files[i].region && strcmp(region, m->files[i].region))
			continue;
		if (m->files[i].have_summary)
			continue;
		sr = *proto;
		sr.m = m;
		sr.f = &m->files[i];
		ret = read_one_summary(&sr, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

int mf_read_summaries(struct manifest *m, const char *region, bool keep_rows, char *err,
		      size_t errlen)
{
	struct sum_read proto = { .keep_rows = keep_rows };

	return read_summaries(m, region, &proto, err, errlen);
}

int mf_read_summaries_each(struct manifest *m, const char *region, mf_row_fn fn, void *ctx,
			   char *err, size_t errlen)
{
	struct sum_read proto = { .fn = fn, .ctx = ctx };

	return read_summaries(m, region, &proto, err, errlen);
}
