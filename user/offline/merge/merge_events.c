// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf merge`: the events of one source trace, streamed, their pids and ids
 * rewritten onto the merged timeline. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/file/file_open.h"
#include "util/json_stream.h"
#include "util/json_writer.h"
#include "offline/merge/trace_merge.h"
#include "offline/merge/merge_internal.h"
#include "util/text_copy.h"

void tm_src_free(struct tm_src *s)
{
	free(s->pids);
	s->pids = NULL;
	s->npids = s->pidcap = 0;
}

void tm_src_init(struct tm_src *s, const struct tm_plan *p, size_t i)
{
	memset(s, 0, sizeof(*s));
	s->budget = p->picks[i].m->budget;
	s->index = (unsigned int)i;
	s->shift_ns = p->picks[i].shift_ns;
	tm_key_label(p->picks[i].m, p->picks[i].f, s->prefix, sizeof(s->prefix));
}

/* The merged pid of @pid into *@out: 0, -E2BIG (TM_PID_STRIDE pids
 * already), -ENOSPC or -ENOMEM. */
static int pid_map(struct tm_src *s, int64_t pid, struct tm_pid_map **out)
{
	size_t i;
	int ret;

	for (i = 0; i < s->npids; i++)
		if (s->pids[i].from == pid) {
			*out = &s->pids[i];
			return 0;
		}
	if (s->npids == TM_PID_STRIDE)
		return -E2BIG;
	ret = mf_grow(s->budget, &s->pids, s->npids, &s->pidcap, sizeof(*s->pids), 8);
	if (ret)
		return ret;
	s->pids[s->npids] = (struct tm_pid_map){ pid, ((int64_t)s->index + 1) * TM_PID_STRIDE +
						       (int64_t)s->npids, 0 };
	*out = &s->pids[s->npids++];
	return 0;
}

static int remap_id(json_object *ev, const char *key, const struct tm_src *s)
{
	json_object *v;
	char text[512];
	int64_t id;

	if (!json_object_object_get_ex(ev, key, &v))
		return 0;
	if (json_object_is_type(v, json_type_int) && (id = json_object_get_int64(v)) >= 0 &&
	    id <= (int64_t)UINT32_MAX) {
		json_object_object_add(ev, key, json_object_new_int64(((int64_t)s->index + 1) << 32 | id));
		return 0;
	}
	/* Anything else: a string id unique to the rank. */
	snprintf(text, sizeof(text), "r%u:%s", s->index, json_object_get_string(v));
	json_object_object_add(ev, key, json_object_new_string(text));
	return 0;
}

int tm_rewrite_event(json_object *ev, struct tm_src *s)
{
	json_object *v, *args, *name;
	struct tm_pid_map *pm = NULL;
	const char *ph = NULL, *what = NULL;
	char text[64], *label;
	bool have_ts;
	int64_t ns;
	size_t len;
	int ret;

	if (!json_object_is_type(ev, json_type_object))
		return 1;
	if (json_object_object_get_ex(ev, "ph", &v) && json_object_is_type(v, json_type_string))
		ph = json_object_get_string(v);
	if (json_object_object_get_ex(ev, "name", &v) && json_object_is_type(v, json_type_string))
		what = json_object_get_string(v);
	if (ph && !strcmp(ph, "M") && what && !strcmp(what, "process_sort_index"))
		return 1; /* written again in rank order */
	have_ts = json_object_object_get_ex(ev, "ts", &v) && !mf_json_us_to_ns(v, &ns);
	if (have_ts && __builtin_add_overflow(ns, s->shift_ns, &ns))
		return 1; /* no time on the merged timeline */
	if (json_object_object_get_ex(ev, "pid", &v)) {
		if (!json_object_is_type(v, json_type_int))
			return 1; /* no pid we could keep apart */
		ret = pid_map(s, json_object_get_int64(v), &pm);
		if (ret)
			return ret;
		json_object_object_add(ev, "pid", json_object_new_int64(pm->to));
	}
	if (have_ts) {
		tm_format_us(text, sizeof(text), ns);
		json_object_object_add(ev, "ts", json_object_new_double_s((double)ns / 1000.0, text));
	}
	remap_id(ev, "id", s);
	remap_id(ev, "bind_id", s);
	if (pm && ph && !strcmp(ph, "M") && what && !strcmp(what, "process_name") &&
	    json_object_object_get_ex(ev, "args", &args) && json_object_is_type(args, json_type_object)) {
		const char *old = json_object_object_get_ex(args, "name", &name) ?
					  json_object_get_string(name) : "";

		len = strlen(s->prefix) + strlen(old) + 3;
		label = malloc(len);
		if (!label)
			return -ENOMEM;
		snprintf(label, len, "%s: %s", s->prefix, old);
		json_object_object_add(args, "name", json_string_obj(label));
		free(label);
		pm->named = 1;
	}
	return 0;
}

void tm_sep(FILE *out, int *first)
{
	if (!*first)
		fputs(",\n", out);
	*first = 0;
}

void tm_write_process_meta(FILE *out, const struct tm_src *s, int *first)
{
	char label[400];
	size_t i;

	for (i = 0; i < s->npids; i++) {
		if (!s->pids[i].named) {
			snprintf(label, sizeof(label), "%s: pid %lld", s->prefix, (long long)s->pids[i].from);
			tm_sep(out, first);
			fprintf(out, "{\"ph\":\"M\",\"pid\":%lld,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":",
				(long long)s->pids[i].to);
			json_write_string(out, label);
			fputs("}}", out);
		}
		tm_sep(out, first);
		fprintf(out, "{\"ph\":\"M\",\"pid\":%lld,\"tid\":0,\"name\":\"process_sort_index\","
			"\"args\":{\"sort_index\":%lld}}", (long long)s->pids[i].to, (long long)s->pids[i].to);
	}
}

/* ---- streaming a source trace ------------------------------------------- */

static int emit_event(FILE *out, const struct js_text *b, struct tm_src *s, int *first)
{
	json_object *ev = js_parse(b);
	int ret;

	if (!ev)
		return -EINVAL;
	ret = tm_rewrite_event(ev, s);
	if (!ret) {
		tm_sep(out, first);
		fputs(json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN |
						     JSON_C_TO_STRING_NOSLASHESCAPE), out);
		s->events++;
	} else if (ret == 1) {
		s->dropped++;
		ret = 0;
	}
	json_object_put(ev);
	return ret;
}

/* An event of more than JS_ITEMS_MAX values or JS_CONTAINERS_MAX objects
 * (js_value()'s -E2BIG, told apart from a pid map that is full). */
#define TM_EVENT_COMPLEX (-EOVERFLOW)

static int stream_events(FILE *out, struct js_reader *r, struct js_text *b, struct tm_src *s,
			 int *first)
{
	int ret = js_first(r, '[');

	while (!ret) {
		ret = js_value(r, b, TM_EVENT_MAX);
		if (ret == -E2BIG)
			ret = TM_EVENT_COMPLEX;
		if (!ret)
			ret = emit_event(out, b, s, first);
		if (!ret)
			ret = js_next(r, ']');
	}
	return ret < 0 ? ret : 0;
}

/* The trace's events: the array form, or the object's "traceEvents";
 * the other members are only scanned. */
static int stream_trace(FILE *out, struct js_reader *r, struct tm_src *s, int *first)
{
	struct js_text b = { 0 };
	char key[16];
	int ret, seen = 0;

	if (js_ws(r) == '[') {
		ret = stream_events(out, r, &b, s, first);
		js_text_free(&b);
		return ret;
	}
	ret = js_first(r, '{');
	while (!ret) {
		ret = js_key(r, &b, key, sizeof(key));
		if (!ret && !strcmp(key, "traceEvents")) {
			ret = js_ws(r) == '[' ? stream_events(out, r, &b, s, first) : -EINVAL;
			seen = 1;
		} else if (!ret) {
			ret = js_value(r, NULL, 0);
		}
		if (!ret)
			ret = js_next(r, '}');
	}
	js_text_free(&b);
	if (ret < 0)
		return ret;
	return seen ? 0 : -ENODATA;
}

static void stream_error(char *err, size_t errlen, const char *name, int ret)
{
	if (ret == -EFBIG)
		snprintf(err, errlen, "%s: an event longer than %u bytes", name, TM_EVENT_MAX);
	else if (ret == TM_EVENT_COMPLEX)
		snprintf(err, errlen, "%s: an event of more than %d values or %d objects and arrays",
			 name, JS_ITEMS_MAX, JS_CONTAINERS_MAX);
	else if (ret == -E2BIG)
		snprintf(err, errlen, "%s: more than %d processes in one trace", name, TM_PID_STRIDE);
	else if (ret == -ENODATA)
		snprintf(err, errlen, "%s: no \"traceEvents\"", name);
	else if (ret == -ENOSPC)
		mf_budget_error(NULL, err, errlen);
	else if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", name);
	else
		snprintf(err, errlen, "%s: not a valid Chrome trace (JSON object with \"traceEvents\")",
			 name);
}

int tm_stream_at(FILE *out, int dirfd, const char *name, const char *path, struct tm_src *s,
		 int *first, char *err, size_t errlen)
{
	struct js_reader *r = NULL;
	char shownb[PATH_MAX];
	struct stat st;
	size_t len = strlen(name);
	int fd, ret;

	text_shown(shownb, sizeof(shownb), path);
	if (len > 8 && !strcmp(name + len - 8, ".pftrace")) {
		snprintf(err, errlen, "%s: a Perfetto protobuf trace (--format pftrace): merge reads "
			 "JSON traces only; attach with --format json or json.gz to merge", shownb);
		return -ENOTSUP;
	}
	/* Opened first, then looked at: a file swapped for a FIFO after a
	 * check cannot block the merge. */
	fd = open_regular_at(dirfd, name, TM_TRACE_MAX, &st);
	if (fd == -EFBIG) {
		snprintf(err, errlen, "%s: %lld bytes, more than the limit of %llu per trace", shownb,
			 (long long)st.st_size, TM_TRACE_MAX);
		return fd;
	}
	if (fd < 0) {
		mf_open_error(err, errlen, path, fd, TM_TRACE_MAX);
		return fd;
	}
	ret = js_open(&r, fd, 0);
	if (!ret)
		ret = stream_trace(out, r, s, first);
	if (ret == -ENOSPC)
		mf_budget_error(s->budget, err, errlen);
	else if (ret)
		stream_error(err, errlen, shownb, ret);
	js_close(r);
	return ret;
}

int tm_stream_file(FILE *out, const char *path, struct tm_src *s, int *first, char *err,
		   size_t errlen)
{
	return tm_stream_at(out, AT_FDCWD, path, path, s, first, err, errlen);
}
