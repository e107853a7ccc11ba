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

#include "manifest_read.h"
#include "text_sanitize.h"

/* A path for a message: target-controlled bytes made printable. */
static const char *shown(char *buf, size_t len, const char *s)
{
	text_clean_terminal(buf, len, s);
	return buf;
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
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", shown(name, sizeof(name), path), strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", shown(name, sizeof(name), path), strerror(-ret));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: not a regular file", shown(name, sizeof(name), path));
		goto cleanup;
	}
	if ((uint64_t)st.st_size > max) {
		ret = -EFBIG;
		snprintf(err, errlen, "%s: %lld bytes, more than the limit of %zu",
			 shown(name, sizeof(name), path), (long long)st.st_size, max);
		goto cleanup;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", shown(name, sizeof(name), path));
		goto cleanup;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", shown(name, sizeof(name), path), strerror(-ret));
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

int mf_parse_json(const char *path, const char *text, size_t len, json_object **out, char *err,
		  size_t errlen)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	char name[PATH_MAX];
	json_object *o;

	*out = NULL;
	if (len > INT_MAX) {
		snprintf(err, errlen, "%s: too large", shown(name, sizeof(name), path));
		return -EFBIG;
	}
	tok = json_tokener_new_ex(64);
	if (!tok) {
		snprintf(err, errlen, "%s: out of memory", shown(name, sizeof(name), path));
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
		snprintf(err, errlen, "%s: not valid JSON (%s)", shown(name, sizeof(name), path),
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
	int64_t frac = 0;
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
	*ns = (int64_t)t * 1000000000LL + frac;
	return 0;
}

void mf_clock_offset(const struct mf_clock_pair *start, const struct mf_clock_pair *end,
		     int64_t *offset_ns, int64_t *uncertainty_ns)
{
	int64_t os = start->real_ns - start->mono_ns, oe = end->real_ns - end->mono_ns;
	int64_t d = oe - os;

	/* os + (oe - os) / 2: no overflow where (os + oe) / 2 could. */
	*offset_ns = os + d / 2;
	*uncertainty_ns = (d < 0 ? -d : d) + (start->span_ns > 0 ? start->span_ns : 0) +
			  (end->span_ns > 0 ? end->span_ns : 0);
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

/* A file name the manifest lists: a plain name inside the directory. */
static int plain_name(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		s = "";
	if (strchr(s, '/') || !strcmp(s, ".") || !strcmp(s, ".."))
		return -EINVAL;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
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
	struct triple *t, key;
	size_t i, n;

	if (!m->nfiles)
		return 0;
	t = malloc(m->nfiles * sizeof(*t));
	if (!t)
		return -ENOMEM;
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
	return 0;
}

int mf_read(const char *dir, struct manifest *m, char *err, size_t errlen)
{
	char path[PATH_MAX], name[PATH_MAX];
	json_object *root = NULL, *files, *clock, *f;
	const char *s;
	struct stat st;
	char *text = NULL;
	size_t len, i, n;
	int ret;

	memset(m, 0, sizeof(*m));
	if (stat(dir, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", shown(name, sizeof(name), dir), strerror(-ret));
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory (give fvbpf attach's output directory)",
			 shown(name, sizeof(name), dir));
		return -ENOTDIR;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/manifest.json", dir) >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", shown(name, sizeof(name), dir));
		return -ENAMETOOLONG;
	}
	if (access(path, F_OK)) {
		snprintf(err, errlen, "%s: no manifest.json: not an fvbpf output directory "
			 "(or fvbpf attach has not finished)", shown(name, sizeof(name), dir));
		return -ENOENT;
	}
	ret = mf_slurp(path, MF_JSON_MAX, &text, &len, err, errlen);
	if (ret)
		return ret;
	ret = mf_parse_json(path, text, len, &root, err, errlen);
	if (ret)
		goto cleanup;
	s = get_str(root, "tool");
	files = get(root, "files");
	if (!json_object_is_type(root, json_type_object) || !s || strcmp(s, "fvbpf") ||
	    !files || !json_object_is_type(files, json_type_array)) {
		snprintf(err, errlen, "%s: not an fvbpf manifest (no \"tool\": \"fvbpf\" or no \"files\" list)",
			 shown(name, sizeof(name), path));
		ret = -EINVAL;
		goto cleanup;
	}
	m->dir = strdup(dir);
	m->hostname = strdup(get_str(root, "hostname") ? get_str(root, "hostname") : "");
	if (!m->dir || !m->hostname) {
		ret = -ENOMEM;
		goto oom;
	}
	clock = get(root, "clock");
	if (clock && !read_pair(get(clock, "start"), &m->clock_start)) {
		if (read_pair(get(clock, "end"), &m->clock_end))
			m->clock_end = m->clock_start; /* attach ended abnormally: one pair */
		m->clock_source = MF_CLOCK_MANIFEST;
		mf_clock_offset(&m->clock_start, &m->clock_end, &m->offset_ns, &m->uncertainty_ns);
	}
	n = json_object_array_length(files);
	m->files = calloc(n ? n : 1, sizeof(*m->files));
	if (!m->files) {
		ret = -ENOMEM;
		goto oom;
	}
	for (i = 0; i < n; i++) {
		struct mf_file *mf = &m->files[m->nfiles];

		f = json_object_array_get_idx(files, i);
		if (!json_object_is_type(f, json_type_object))
			continue;
		mf->pid = get_int(f, "pid", 0);
		mf->rank = get_int(f, "rank", 0);
		mf->restart = get_int(f, "restart", 0);
		mf->segment = (uint64_t)get_i64(f, "segment", 0);
		mf->incomplete = get_bool(f, "incomplete");
		mf->started_before_attach = get_bool(f, "started_before_attach");
		m->nfiles++;
		ret = plain_name(get_str(f, "trace"), &mf->trace);
		if (!ret)
			ret = plain_name(get_str(f, "summary_json"), &mf->summary_json);
		if (ret == -EINVAL) {
			snprintf(err, errlen, "%s: files[%zu] names a file outside the directory",
				 shown(name, sizeof(name), path), i);
			goto cleanup;
		}
		if (ret)
			goto oom;
		s = get_str(f, "region");
		if (s && !(mf->region = strdup(s))) {
			ret = -ENOMEM;
			goto oom;
		}
	}
	ret = mark_pid_named(m);
	if (ret)
		goto oom;
	goto cleanup;
oom:
	snprintf(err, errlen, "%s: out of memory", shown(name, sizeof(name), path));
cleanup:
	if (ret)
		mf_free(m);
	json_object_put(root);
	free(text);
	return ret;
}

static int read_one_summary(struct manifest *m, struct mf_file *f, bool keep_rows, char *err,
			    size_t errlen)
{
	char path[PATH_MAX], name[PATH_MAX];
	json_object *root = NULL, *meta, *rows;
	int64_t s_ns, e_ns, d_ns;
	const char *s;
	char *text = NULL;
	size_t len;
	int ret;

	if (!f->summary_json[0]) {
		snprintf(err, errlen, "%s/manifest.json: a file entry without \"summary_json\"",
			 shown(name, sizeof(name), m->dir));
		return -EINVAL;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", m->dir, f->summary_json) >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", shown(name, sizeof(name), m->dir));
		return -ENAMETOOLONG;
	}
	ret = mf_slurp(path, MF_JSON_MAX, &text, &len, err, errlen);
	if (!ret)
		ret = mf_parse_json(path, text, len, &root, err, errlen);
	if (ret)
		goto cleanup;
	meta = get(root, "metadata");
	rows = get(root, "rows");
	if (!meta || !json_object_is_type(meta, json_type_object) ||
	    (rows && !json_object_is_type(rows, json_type_array))) {
		snprintf(err, errlen, "%s: not an fvbpf summary (no \"metadata\" object)",
			 shown(name, sizeof(name), path));
		ret = -EINVAL;
		goto cleanup;
	}
	f->have_summary = true;
	f->have_times = !mf_json_us_to_ns(get(meta, "start_us"), &s_ns) &&
			!mf_json_us_to_ns(get(meta, "end_us"), &e_ns);
	if (f->have_times) {
		f->start_ns = s_ns;
		f->end_ns = e_ns;
	}
	if (!mf_json_us_to_ns(get(meta, "duration_us"), &d_ns))
		f->duration_ns = d_ns;
	else if (f->have_times)
		f->duration_ns = e_ns - s_ns;
	if (f->duration_ns < 0)
		f->duration_ns = 0;
	if (get(meta, "incomplete") && get_bool(meta, "incomplete"))
		f->incomplete = true;
	if (get(meta, "restart"))
		f->restart = get_int(meta, "restart", f->restart);
	s = get_str(meta, "region");
	if (!f->region && !(f->region = strdup(s ? s : "")))
		goto oom;
	s = get_str(meta, "start_wallclock");
	if (s && !f->wallclock && !(f->wallclock = strdup(s)))
		goto oom;
	if (!m->hostname[0] && (s = get_str(meta, "hostname"))) {
		free(m->hostname);
		if (!(m->hostname = strdup(s)))
			goto oom;
	}
	if (keep_rows && rows)
		f->rows = json_object_get(rows);
	/* Without a manifest clock: the session's offset, as the summary wrote
	 * its start in both clocks (microseconds). */
	if (m->clock_source == MF_CLOCK_NONE && f->have_times && f->wallclock &&
	    !mf_parse_wallclock(f->wallclock, &d_ns)) {
		m->clock_source = MF_CLOCK_WALLCLOCK;
		m->offset_ns = d_ns - f->start_ns / 1000 * 1000;
		m->uncertainty_ns = 1000; /* both written in whole microseconds */
	}
	goto cleanup;
oom:
	ret = -ENOMEM;
	snprintf(err, errlen, "%s: out of memory", shown(name, sizeof(name), path));
cleanup:
	json_object_put(root);
	free(text);
	return ret;
}

int mf_read_summaries(struct manifest *m, const char *region, bool keep_rows, char *err,
		      size_t errlen)
{
	size_t i;
	int ret;

	for (i = 0; i < m->nfiles; i++) {
		if (region && m->files[i].region && strcmp(region, m->files[i].region))
			continue;
		if (m->files[i].have_summary)
			continue;
		ret = read_one_summary(m, &m->files[i], keep_rows, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

void mf_free(struct manifest *m)
{
	size_t i;

	for (i = 0; i < m->nfiles; i++) {
		free(m->files[i].region);
		free(m->files[i].trace);
		free(m->files[i].summary_json);
		free(m->files[i].wallclock);
		json_object_put(m->files[i].rows);
	}
	free(m->files);
	free(m->dir);
	free(m->hostname);
	memset(m, 0, sizeof(*m));
}
