// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Reading an fvbpf output directory back: manifest.json and summaries. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/file/file_open.h"
#include "offline/manifest/manifest_read.h"
#include "offline/manifest/read_internal.h"
#include "util/text_copy.h"

/* A file name the manifest lists: a plain name inside the directory (a NUL
 * inside, from \u0000, would cut it to another name). */
static bool plain_name(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	const char *s;

	if (!v || !json_object_is_type(v, json_type_string))
		return true; /* none: "" */
	s = json_object_get_string(v);
	return strlen(s) == (size_t)json_object_get_string_len(v) && !strchr(s, '/') &&
	       strcmp(s, ".") && strcmp(s, "..");
}

static int read_pair(json_object *o, struct mf_clock_pair *p)
{
	json_object *m = get(o, "monotonic_ns"), *r = get(o, "realtime_ns");

	if (!m || !r || !json_object_is_type(m, json_type_int) || !json_object_is_type(r, json_type_int))
		return -ENOENT;
	p->mono_ns = json_object_get_int64(m);
	p->real_ns = json_object_get_int64(r);
	p->span_ns = get_i64(o, "read_span_ns", 0);
	return 0;
}

struct triple {
	int rank, restart, pid;
};

static int cmp_triple(const void *a, const void *b)
{
	const struct triple *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->restart != y->restart)
		return x->restart < y->restart ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Files of two processes with the same rank and restart: named by pid. */
static int mark_pid_named(struct manifest *m)
{
	uint64_t bytes = MF_ALLOC(m->nfiles * sizeof(struct triple));
	struct triple *t, key;
	size_t i, n;
	int ret;

	if (!m->nfiles)
		return 0;
	ret = mf_charge(m->budget, bytes);
	if (ret)
		return ret;
	t = malloc(m->nfiles * sizeof(*t));
	if (!t) {
		mf_uncharge(m->budget, bytes);
		return -ENOMEM;
	}
	for (i = 0; i < m->nfiles; i++)
		t[i] = (struct triple){ m->files[i].rank, m->files[i].restart, m->files[i].pid };
	qsort(t, m->nfiles, sizeof(*t), cmp_triple);
	for (i = n = 0; i < m->nfiles; i++)
		if (!n || cmp_triple(&t[n - 1], &t[i]))
			t[n++] = t[i];
	for (i = 0; i < m->nfiles; i++) {
		size_t lo = 0, hi = n, mid;

		/* the first process of this rank and restart, and the next one */
		key = (struct triple){ m->files[i].rank, m->files[i].restart, INT_MIN };
		while (lo < hi) {
			mid = (lo + hi) / 2;
			if (cmp_triple(&t[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* a negative rank is none (a launcher): always named by pid */
		m->files[i].pid_named = m->files[i].rank < 0 ||
					(lo + 1 < n && t[lo + 1].rank == key.rank &&
					 t[lo + 1].restart == key.restart);
	}
	free(t);
	mf_uncharge(m->budget, bytes);
	return 0;
}

static void str_key(const void *arr, size_t i, const char **name, const char **kind)
{
	*name = ((char *const *)arr)[i];
	*kind = "";
}

/* @name kept once per manifest: *@out, or -ENOMEM / -ENOSPC. */
int mf_intern(struct manifest *m, const char *name, const char **out)
{
	size_t pos, len = strlen(name);
	char *copy;
	int ret;

	ret = mf_index_find(m->budget, &m->str_index, m->strs, m->nstrs, str_key, name, "", &pos);
	if (ret < 0)
		return ret;
	if (ret) {
		*out = m->strs[pos];
		return 0;
	}
	ret = mf_grow(m->budget, &m->strs, m->nstrs, &m->scap, sizeof(*m->strs), 8);
	if (!ret)
		ret = mf_charge(m->budget, MF_ALLOC(len + 1));
	if (ret)
		return ret;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	m->strs[m->nstrs] = copy;
	pair_index_set(&m->str_index, pos, m->nstrs++);
	*out = copy;
	return 0;
}

/* Entries are told apart by their summary, else their trace. */
static void file_key(const void *arr, size_t i, const char **name, const char **kind)
{
	const struct mf_file *f = arr;

	*name = f[i].summary_json[0] ? f[i].summary_json : f[i].trace;
	*kind = f[i].summary_json[0] ? "s" : "t";
}

/* The names of @o into one allocation: trace, NUL, summary_json, NUL. */
static int entry_names(struct manifest *m, json_object *o, struct mf_file *mf)
{
	const char *t = get_str(o, "trace"), *s = get_str(o, "summary_json");
	size_t lt = t ? strlen(t) : 0, ls = s ? strlen(s) : 0;
	int ret = mf_charge(m->budget, MF_ALLOC(lt + ls + 2));

	if (ret)
		return ret;
	mf->trace = malloc(lt + ls + 2);
	if (!mf->trace)
		return -ENOMEM;
	memcpy(mf->trace, t ? t : "", lt + 1);
	mf->summary_json = mf->trace + lt + 1;
	memcpy(mf->summary_json, s ? s : "", ls + 1);
	return 0;
}

/* files[@i]: added, or counted when it repeats an entry's file. */
static int add_entry(struct manifest *m, json_object *o, size_t i, const char *path, char *err,
		     size_t errlen)
{
	struct mf_file mf = { .pid = 0 };
	const char *s;
	char name[PATH_MAX];
	size_t pos;
	int ret;

	if (!json_object_is_type(o, json_type_object))
		return 0;
	if (!plain_name(o, "trace") || !plain_name(o, "summary_json")) {
		snprintf(err, errlen, "%s: files[%zu] names a file outside the directory",
			 text_shown(name, sizeof(name), path), i);
		return -EINVAL;
	}
	ret = entry_names(m, o, &mf);
	if (!ret)
		ret = mf_index_find(m->budget, &m->file_index, m->files, m->nfiles, file_key,
				    mf.summary_json[0] ? mf.summary_json : mf.trace,
				    mf.summary_json[0] ? "s" : "t", &pos);
	if (ret == 1) {
		/* the same segment again: counted, not read twice */
		m->duplicates++;
		ret = 0;
		goto drop;
	}
	if (!ret)
		ret = mf_grow(m->budget, &m->files, m->nfiles, &m->cap, sizeof(*m->files), 64);
	s = get_str(o, "region");
	if (!ret && s)
		ret = mf_intern(m, s, &mf.region);
	if (ret)
		goto drop;
	mf.started_before_attach = get_bool(o, "started_before_attach");
	mf.counted = !mf.started_before_attach;
	mf.step_key = mf.not_counted_why = "";
	ret = mf_step_keys(m, &mf, o);
	if (ret)
		goto drop;
	mf.pid = get_int(o, "pid", 0);
	mf.rank = get_int(o, "rank", 0);
	mf.restart = get_int(o, "restart", 0);
	mf.segment = (uint64_t)get_i64(o, "segment", 0);
	mf.incomplete = get_bool(o, "incomplete");
	m->files[m->nfiles] = mf;
	pair_index_set(&m->file_index, pos, m->nfiles++);
	return 0;
drop:
	if (mf.trace)
		mf_uncharge(m->budget, MF_ALLOC(strlen(mf.trace) + strlen(mf.summary_json) + 2));
	free(mf.trace);
	return ret;
}

/* Small values of a manifest (tool, hostname, clock): parsed whole. */
static int small_value(struct js_reader *r, struct js_text *t, json_object **out)
{
	int ret = js_value(r, t, MF_ENTRY_MAX);

	*out = NULL;
	if (ret)
		return ret;
	*out = js_parse(t);
	return *out ? 0 : -EINVAL;
}

static int read_clock(struct manifest *m, json_object *clock)
{
	struct mf_clock_pair start, end;

	if (read_pair(get(clock, "start"), &start))
		return 0; /* none: the summaries' start_wallclock */
	if (read_pair(get(clock, "end"), &end))
		end = start; /* attach ended abnormally: one pair */
	if (mf_clock_offset(&start, &end, &m->offset_ns, &m->uncertainty_ns)) {
		m->clock_invalid = true; /* as if absent */
		return 0;
	}
	m->clock_start = start;
	m->clock_end = end;
	m->clock_source = MF_CLOCK_MANIFEST;
	return 0;
}

struct mf_seen {
	bool tool, files;
	size_t entries;  /* files[] elements so far, for messages */
};

static int read_files(struct manifest *m, struct js_reader *r, struct js_text *t,
		      struct mf_seen *seen, const char *path, char *err, size_t errlen)
{
	json_object *o;
	int ret;

	ret = js_first(r, '[');
	while (!ret) {
		ret = js_value(r, t, MF_ENTRY_MAX);
		if (ret)
			break;
		o = js_parse(t);
		ret = o ? add_entry(m, o, seen->entries++, path, err, errlen) : -EINVAL;
		json_object_put(o);
		if (!ret)
			ret = js_next(r, ']');
	}
	seen->files = true;
	return ret < 0 ? ret : 0;
}

static int manifest_member(struct manifest *m, struct js_reader *r, struct js_text *t,
			   const char *key, struct mf_seen *seen, const char *path, char *err,
			   size_t errlen)
{
	json_object *o = NULL;
	const char *s;
	int ret = 0;

	if (!strcmp(key, "files")) {
		if (js_ws(r) != '[')
			return -ENOTTY; /* not an fvbpf manifest */
		return read_files(m, r, t, seen, path, err, errlen);
	}
	if (strcmp(key, "tool") && strcmp(key, "hostname") && strcmp(key, "clock"))
		return js_value(r, NULL, 0); /* processes, warnings, ...: not needed */
	ret = small_value(r, t, &o);
	if (ret)
		return ret;
	s = json_object_is_type(o, json_type_string) ? json_object_get_string(o) : NULL;
	if (!strcmp(key, "tool")) {
		seen->tool = s && !strcmp(s, "fvbpf");
	} else if (!strcmp(key, "hostname") && s) {
		free(m->hostname);
		m->hostname = strdup(s);
		ret = m->hostname ? 0 : -ENOMEM;
	} else if (!strcmp(key, "clock")) {
		ret = read_clock(m, o);
	}
	json_object_put(o);
	return ret;
}

/* The top-level object, one member at a time: the files[] entries are
 * parsed one by one, what report and merge do not need only scanned. */
static int read_manifest(struct manifest *m, struct js_reader *r, const char *path, char *err,
			 size_t errlen)
{
	struct mf_seen seen = { .tool = false };
	struct js_text t = { 0 };
	char key[32], name[PATH_MAX];
	int c, ret;

	err[0] = 0;
	c = js_ws(r);
	ret = c == '{' ? js_first(r, '{') : c < 0 ? -EINVAL : -ENOTTY;
	while (!ret) {
		ret = js_key(r, &t, key, sizeof(key));
		if (!ret)
			ret = manifest_member(m, r, &t, key, &seen, path, err, errlen);
		if (!ret)
			ret = js_next(r, '}');
	}
	if (ret == 1)
		ret = js_end(r);
	js_text_free(&t);
	if (!ret && (!seen.tool || !seen.files))
		ret = -ENOTTY;
	if (ret == -ENOTTY)
		snprintf(err, errlen, "%s: not an fvbpf manifest (no \"tool\": \"fvbpf\" or no \"files\" list)",
			 text_shown(name, sizeof(name), path));
	else if (ret && !err[0])
		mf_stream_error(err, errlen, path, r, ret, m->budget, MF_ENTRY_MAX);
	return ret;
}

/* @dir, the user's own path (links in it followed as a shell would). */
static int open_dir(struct manifest *m, const char *dir, char *err, size_t errlen)
{
	char name[PATH_MAX];
	int ret;

	m->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (m->dirfd >= 0)
		return 0;
	ret = -errno;
	if (ret == -ENOTDIR)
		snprintf(err, errlen, "%s: not a directory (give fvbpf attach's output directory)",
			 text_shown(name, sizeof(name), dir));
	else if (ret == -EMFILE)
		snprintf(err, errlen, "%s: too many open files (one per directory): raise ulimit -n",
			 text_shown(name, sizeof(name), dir));
	else
		snprintf(err, errlen, "%s: %s", text_shown(name, sizeof(name), dir), strerror(-ret));
	return ret;
}

int mf_read_budget(const char *dir, struct manifest *m, struct mf_budget *budget, char *err,
		   size_t errlen)
{
	char path[PATH_MAX + 32], name[PATH_MAX];
	struct js_reader *r = NULL;
	struct stat st;
	int fd, ret;

	memset(m, 0, sizeof(*m));
	m->dirfd = -1;
	m->budget = budget;
	m->dir = strdup(dir);
	m->hostname = strdup("");
	if (!m->dir || !m->hostname) {
		snprintf(err, errlen, "%s: out of memory", text_shown(name, sizeof(name), dir));
		ret = -ENOMEM;
		goto cleanup;
	}
	ret = open_dir(m, dir, err, errlen);
	if (ret)
		goto cleanup;
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	fd = open_regular_at(m->dirfd, "manifest.json", MF_JSON_MAX, &st);
	if (fd == -ENOENT)
		snprintf(err, errlen, "%s: no manifest.json: not an fvbpf output directory "
			 "(or fvbpf attach has not finished)", text_shown(name, sizeof(name), dir));
	else if (fd < 0)
		mf_open_error(err, errlen, path, fd, MF_JSON_MAX);
	ret = fd < 0 ? fd : js_open(&r, fd, MF_JSON_MAX);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", text_shown(name, sizeof(name), path));
	if (!ret)
		ret = read_manifest(m, r, path, err, errlen);
	if (!ret) {
		ret = mark_pid_named(m);
		if (ret)
			mf_stream_error(err, errlen, path, NULL, ret, budget, 0);
	}
cleanup:
	js_close(r);
	if (ret)
		mf_free(m);
	return ret;
}

int mf_read(const char *dir, struct manifest *m, char *err, size_t errlen)
{
	return mf_read_budget(dir, m, NULL, err, errlen);
}

void mf_free(struct manifest *m)
{
	size_t i;

	/* Nothing is given back to m->budget: the commands free at exit. */
	for (i = 0; i < m->nfiles; i++) {
		free(m->files[i].trace); /* summary_json too */
		json_object_put(m->files[i].rows);
		free(m->files[i].colls);
	}
	for (i = 0; i < m->nstrs; i++)
		free(m->strs[i]);
	free(m->strs);
	pair_index_free(&m->str_index);
	pair_index_free(&m->file_index);
	free(m->files);
	if (m->dir && m->dirfd >= 0)
		close(m->dirfd);
	free(m->dir);
	free(m->hostname);
	memset(m, 0, sizeof(*m));
}
