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

#include "util/file_open.h"
#include "util/grow.h"
#include "util/json_stream.h"
#include "offline/manifest_read.h"
#include "util/mem_budget.h"
#include "util/text_sanitize.h"
#include "util/text_copy.h"

/* ---- --max-memory ------------------------------------------------------- */

int mf_charge(struct mf_budget *b, uint64_t bytes)
{
	if (!b || !b->max_memory)
		return 0;
	b->over_rss = false;
	if (bytes > b->limit || b->held > b->limit - bytes)
		return -ENOSPC;
	/* The charges are estimates (allocator slack, json-c's trees): the
	 * RSS itself is the bound that is stated. */
	if (++b->charges % MF_RSS_EVERY == 0 && mem_rss_now() > b->max_memory) {
		b->over_rss = true;
		return -ENOSPC;
	}
	b->held += bytes;
	if (b->held > b->peak)
		b->peak = b->held;
	return 0;
}

void mf_uncharge(struct mf_budget *b, uint64_t bytes)
{
	if (b)
		b->held = bytes < b->held ? b->held - bytes : 0;
}

int mf_grow(struct mf_budget *b, void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	uint64_t more;
	int ret;

	if (n < *cap)
		return 0;
	more = (uint64_t)(*cap ? *cap : first) * size;
	ret = mf_charge(b, more);
	if (ret)
		return ret;
	ret = grow_one(v, n, cap, size, first);
	if (ret)
		mf_uncharge(b, more);
	return ret;
}

int mf_index_find(struct mf_budget *b, struct pair_index *x, const void *arr, size_t count,
		  pair_key_fn key, const char *name, const char *kind, size_t *pos)
{
	uint64_t more = 0, old = (uint64_t)x->n * sizeof(size_t);
	int ret;

	/* pair_index_find() doubles the slots when half full: the new
	 * table is charged, the old one given back once it is gone */
	if ((count + 1) * 2 > x->n)
		more = (uint64_t)(x->n ? x->n * 2 : 64) * sizeof(size_t);
	ret = mf_charge(b, more);
	if (ret)
		return ret;
	ret = pair_index_find(x, arr, count, key, name, kind, pos);
	if (ret < 0)
		mf_uncharge(b, more);
	else if (more)
		mf_uncharge(b, old);
	return ret;
}

void mf_budget_error(const struct mf_budget *b, char *buf, size_t len)
{
	unsigned long long mib = b ? b->max_memory >> 20 : 0;

	if (b && b->over_rss)
		snprintf(buf, len, "fvbpf's memory (RSS) reached --max-memory (%llu MiB): give a "
			 "larger one, e.g. --max-memory %lluM", mib, mib * 2 + 1);
	else
		snprintf(buf, len, "the file lists and tables of the given directories need more than "
			 "--max-memory (%llu MiB) leaves for them (%llu MiB): give a larger one, e.g. "
			 "--max-memory %lluM", mib, b ? (unsigned long long)(b->limit >> 20) : 0ULL,
			 mib * 2 + 1);
}

/* ---- files -------------------------------------------------------------- */

void mf_open_error(char *err, size_t errlen, const char *path, int ret, uint64_t max)
{
	char name[PATH_MAX];

	text_shown(name, sizeof(name), path);
	if (ret == -ELOOP || ret == -ENOEXEC || ret == -EXDEV)
		snprintf(err, errlen, "%s: %s: refused (fvbpf report and merge read only regular files "
			 "inside the directory, no links, FIFOs or devices: put the file itself there)",
			 name, open_regular_why(ret));
	else if (ret == -EFBIG)
		snprintf(err, errlen, "%s: more than the limit of %llu bytes", name,
			 (unsigned long long)max);
	else
		snprintf(err, errlen, "%s: %s", name, strerror(-ret));
}

int mf_slurp(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen)
{
	char name[PATH_MAX];
	struct stat st;
	size_t got = 0;
	ssize_t n;
	char *buf = NULL;
	int fd, ret = 0;

	*out = NULL;
	fd = open_regular_at(AT_FDCWD, path, max, &st);
	if (fd < 0) {
		mf_open_error(err, errlen, path, fd, max);
		return fd;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", text_shown(name, sizeof(name), path));
		goto cleanup;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", text_shown(name, sizeof(name), path), strerror(-ret));
			goto cleanup;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	*out = buf;
	*len = got;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return ret;
}

/* A streaming read that failed without a message of its own. */
static void stream_error(char *err, size_t errlen, const char *path, const struct js_reader *r,
			 int ret, const struct mf_budget *b, size_t max)
{
	unsigned long long at = r ? (unsigned long long)js_offset(r) : 0;
	char name[PATH_MAX], why[256];

	text_shown(name, sizeof(name), path);
	if (ret == -ENOSPC) {
		mf_budget_error(b, why, sizeof(why));
		snprintf(err, errlen, "%s: %s", name, why);
	} else if (ret == -ENOMEM) {
		snprintf(err, errlen, "%s: out of memory", name);
	} else if (ret == -EFBIG && r && r->too_big) {
		snprintf(err, errlen, "%s: more than the limit of %u bytes", name, MF_JSON_MAX);
	} else if (ret == -EFBIG) {
		snprintf(err, errlen, "%s: a value longer than the limit of %zu bytes near byte %llu",
			 name, max, at);
	} else if (ret == -E2BIG) {
		snprintf(err, errlen, "%s: a value of more than %d values or %d objects and arrays near "
			 "byte %llu", name, JS_ITEMS_MAX, JS_CONTAINERS_MAX, at);
	} else {
		snprintf(err, errlen, "%s: not valid JSON (near byte %llu)", name, at);
	}
}

int mf_parse_json(const char *path, const char *text, size_t len, json_object **out, char *err,
		  size_t errlen)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	char name[PATH_MAX];
	json_object *o;

	*out = NULL;
	if (len > INT_MAX) {
		snprintf(err, errlen, "%s: too large", text_shown(name, sizeof(name), path));
		return -EFBIG;
	}
	tok = json_tokener_new_ex(64);
	if (!tok) {
		snprintf(err, errlen, "%s: out of memory", text_shown(name, sizeof(name), path));
		return -ENOMEM;
	}
	o = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!o && jerr == json_tokener_continue)
		jerr = json_tokener_error_parse_eof;
	if (o && (size_t)json_tokener_get_parse_end(tok) < len &&
	    strspn(text + json_tokener_get_parse_end(tok), " \t\r\n") !=
		    len - json_tokener_get_parse_end(tok)) {
		json_object_put(o);
		o = NULL;
		jerr = json_tokener_error_parse_unexpected;
	}
	json_tokener_free(tok);
	if (!o) {
		snprintf(err, errlen, "%s: not valid JSON (%s)", text_shown(name, sizeof(name), path),
			 json_tokener_error_desc(jerr));
		return -EINVAL;
	}
	*out = o;
	return 0;
}

int mf_us_text_to_ns(const char *s, int64_t *ns)
{
	int64_t whole = 0, frac = 0;
	int neg = 0, digits = 0, fd = 0;
	const char *p = s;
	char *end;
	double d;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (whole > (INT64_MAX / 1000 - 9) / 10)
			goto as_double;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, fd++)
			if (fd < 3)
				frac = frac * 10 + (*p - '0');
			else if (fd == 3 && *p >= '5')
				frac++; /* round half up at the nanosecond */
		if (!fd)
			return -EINVAL;
		while (fd < 3) {
			frac *= 10;
			fd++;
		}
	}
	if (!digits)
		return -EINVAL;
	if (*p)
		goto as_double;
	*ns = (neg ? -1 : 1) * (whole * 1000 + frac);
	return 0;
as_double:
	errno = 0;
	d = strtod(s, &end);
	if (errno || *end || end == s || !(d > -9.2e15 && d < 9.2e15))
		return -EINVAL;
	*ns = (int64_t)(d * 1000.0 + (d < 0 ? -0.5 : 0.5));
	return 0;
}

int mf_json_us_to_ns(json_object *o, int64_t *ns)
{
	if (!o)
		return -ENOENT;
	if (json_object_is_type(o, json_type_int)) {
		int64_t v = json_object_get_int64(o);

		if (v > INT64_MAX / 1000 || v < INT64_MIN / 1000)
			return -ERANGE;
		*ns = v * 1000;
		return 0;
	}
	if (!json_object_is_type(o, json_type_double))
		return -EINVAL;
	return mf_us_text_to_ns(json_object_get_string(o), ns);
}

int mf_parse_wallclock(const char *s, int64_t *ns)
{
	struct tm tm = { 0 };
	const char *p;
	int64_t frac = 0, sec_ns;
	int fd = 0;
	time_t t;

	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -EINVAL;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, fd++)
			if (fd < 9)
				frac = frac * 10 + (*p - '0');
	while (fd++ < 9)
		frac *= 10;
	if (*p != 'Z' || p[1])
		return -EINVAL;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	/* a year past 2262 does not fit in int64 nanoseconds */
	if (__builtin_mul_overflow((int64_t)t, (int64_t)1000000000, &sec_ns) ||
	    __builtin_add_overflow(sec_ns, frac, ns))
		return -ERANGE;
	return 0;
}

int mf_clock_offset(const struct mf_clock_pair *start, const struct mf_clock_pair *end,
		    int64_t *offset_ns, int64_t *uncertainty_ns)
{
	int64_t os, oe, d, u;

	/* Both clocks count from boot or 1970 and a read span is a
	 * duration: a negative one is a made-up manifest. */
	if (start->mono_ns < 0 || start->real_ns < 0 || start->span_ns < 0 || end->mono_ns < 0 ||
	    end->real_ns < 0 || end->span_ns < 0)
		return -ERANGE;
	os = start->real_ns - start->mono_ns; /* both >= 0: cannot overflow */
	oe = end->real_ns - end->mono_ns;
	if (__builtin_sub_overflow(oe, os, &d) || d == INT64_MIN)
		return -ERANGE;
	if (__builtin_add_overflow(d < 0 ? -d : d, start->span_ns, &u) ||
	    __builtin_add_overflow(u, end->span_ns, &u))
		return -ERANGE;
	/* os + (oe - os) / 2: between the two, where (os + oe) / 2 could
	 * overflow */
	*offset_ns = os + d / 2;
	*uncertainty_ns = u;
	return 0;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static int get_int(json_object *o, const char *key, int def)
{
	json_object *v = get(o, key);

	return v && (json_object_is_type(v, json_type_int)) ? json_object_get_int(v) : def;
}

static int64_t get_i64(json_object *o, const char *key, int64_t def)
{
	json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : def;
}

static bool get_bool(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

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
		m->files[i].pid_named = lo + 1 < n && t[lo + 1].rank == key.rank &&
					t[lo + 1].restart == key.restart;
	}
	free(t);
	mf_uncharge(m->budget, bytes);
	return 0;
}


static void region_key(const void *arr, size_t i, const char **name, const char **kind)
{
	*name = ((char *const *)arr)[i];
	*kind = "";
}

/* @name kept once per manifest: *@out, or -ENOMEM / -ENOSPC. */
static int intern_region(struct manifest *m, const char *name, const char **out)
{
	size_t pos, len = strlen(name);
	char *copy;
	int ret;

	ret = mf_index_find(m->budget, &m->region_index, m->regions, m->nregions, region_key, name,
			    "", &pos);
	if (ret < 0)
		return ret;
	if (ret) {
		*out = m->regions[pos];
		return 0;
	}
	ret = mf_grow(m->budget, &m->regions, m->nregions, &m->rcap, sizeof(*m->regions), 8);
	if (!ret)
		ret = mf_charge(m->budget, MF_ALLOC(len + 1));
	if (ret)
		return ret;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	m->regions[m->nregions] = copy;
	pair_index_set(&m->region_index, pos, m->nregions++);
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
		ret = intern_region(m, s, &mf.region);
	if (ret)
		goto drop;
	mf.pid = get_int(o, "pid", 0);
	mf.rank = get_int(o, "rank", 0);
	mf.restart = get_int(o, "restart", 0);
	mf.segment = (uint64_t)get_i64(o, "segment", 0);
	mf.incomplete = get_bool(o, "incomplete");
	mf.started_before_attach = get_bool(o, "started_before_attach");
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
		stream_error(err, errlen, path, r, ret, m->budget, MF_ENTRY_MAX);
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
			stream_error(err, errlen, path, NULL, ret, budget, 0);
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

/* ---- summaries ---------------------------------------------------------- */

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
	if (get(meta, "restart"))
		f->restart = get_int(meta, "restart", f->restart);
	s = get_str(meta, "region");
	if (!f->region) {
		ret = intern_region(m, s ? s : "", &f->region);
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

/* The rows, one at a time. */
static int read_rows(struct js_reader *r, struct js_text *t, struct sum_read *sr)
{
	json_object *row;
	int ret;

	ret = js_first(r, '[');
	while (!ret) {
		ret = js_value(r, t, JS_VALUE_MAX);
		if (ret)
			break;
		row = js_parse(t);
		ret = row ? one_row(sr, row) : -EINVAL;
		json_object_put(row);
		if (!ret)
			ret = js_next(r, ']');
	}
	sr->rows_done = true;
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
		stream_error(err, errlen, path, r, ret, sr->m->budget, JS_VALUE_MAX);
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

void mf_free(struct manifest *m)
{
	size_t i;

	/* Nothing is given back to m->budget: the commands free at exit. */
	for (i = 0; i < m->nfiles; i++) {
		free(m->files[i].trace); /* summary_json too */
		json_object_put(m->files[i].rows);
	}
	for (i = 0; i < m->nregions; i++)
		free(m->regions[i]);
	free(m->regions);
	pair_index_free(&m->region_index);
	pair_index_free(&m->file_index);
	free(m->files);
	if (m->dir && m->dirfd >= 0)
		close(m->dirfd);
	free(m->dir);
	free(m->hostname);
	memset(m, 0, sizeof(*m));
}
