// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf merge`: every rank's step in one Chrome trace, clocks aligned. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "grow.h"
#include "json_writer.h"
#include "output_files.h"
#include "text_sanitize.h"
#include "trace_merge.h"

#define ASSUMPTION "cross-node CLOCK_REALTIME clocks are assumed NTP/PTP synchronised; " \
	"that error is not measured and not part of the uncertainty"

void tm_format_us(char *buf, size_t len, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)-(ns + 1) + 1 : (uint64_t)ns;

	snprintf(buf, len, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
		 (unsigned long long)(a % 1000));
}

static const char *shown(char *buf, size_t len, const char *s)
{
	text_clean_terminal(buf, len, s);
	return buf;
}

/* ---- choosing the segments ---------------------------------------------- */

struct rank_key {
	const struct manifest *m;
	const struct mf_file *f; /* any file of the rank */
};

static int cmp_key(const struct mf_file *a, const struct manifest *ma, const struct mf_file *b,
		   const struct manifest *mb)
{
	int pa = a->pid_named ? a->pid : 0, pb = b->pid_named ? b->pid : 0, c;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->restart != b->restart)
		return a->restart < b->restart ? -1 : 1;
	c = strcmp(ma->hostname, mb->hostname);
	if (c)
		return c;
	return pa < pb ? -1 : pa > pb;
}

static int cmp_rank_key(const void *x, const void *y)
{
	const struct rank_key *a = x, *b = y;

	return cmp_key(a->f, a->m, b->f, b->m);
}

static bool in_region(const struct mf_file *f, const char *region)
{
	return f->have_summary && f->have_times && f->region && !strcmp(f->region, region);
}

/* The region with the most segments (ties: the first name). */
static const char *common_region(struct manifest *ms, size_t n)
{
	struct { const char *name; size_t count; } *seen = NULL;
	size_t i, j, k, nseen = 0, cap = 0;
	const char *best = NULL, *r;
	size_t best_count = 0;

	for (i = 0; i < n; i++)
		for (j = 0; j < ms[i].nfiles; j++) {
			r = ms[i].files[j].region;
			if (!r || !ms[i].files[j].have_times)
				continue;
			for (k = 0; k < nseen && strcmp(seen[k].name, r); k++)
				;
			if (k == nseen) {
				if (grow_one(&seen, nseen, &cap, sizeof(*seen), 8))
					goto out;
				seen[nseen].name = r;
				seen[nseen++].count = 0;
			}
			seen[k].count++;
		}
	for (k = 0; k < nseen; k++)
		if (seen[k].count > best_count ||
		    (seen[k].count == best_count && strcmp(seen[k].name, best) < 0)) {
			best = seen[k].name;
			best_count = seen[k].count;
		}
out:
	free(seen);
	return best;
}

static void key_label(const struct manifest *m, const struct mf_file *f, char *buf, size_t len)
{
	int k = snprintf(buf, len, "rank %d", f->rank);

	if (k > 0 && (size_t)k < len && f->restart)
		k += snprintf(buf + k, len - (size_t)k, " restart %d", f->restart);
	if (k > 0 && (size_t)k < len && f->pid_named)
		k += snprintf(buf + k, len - (size_t)k, " pid %d", f->pid);
	if (k > 0 && (size_t)k < len && m->hostname[0])
		snprintf(buf + k, len - (size_t)k, " (%s)", m->hostname);
}

static int64_t overlap(int64_t s1, int64_t e1, int64_t s2, int64_t e2)
{
	int64_t s = s1 > s2 ? s1 : s2, e = e1 < e2 ? e1 : e2;

	return e > s ? e - s : 0;
}

int tm_plan_build(struct manifest *ms, size_t n, const char *region, long long segment,
		  struct tm_plan *p, char *err, size_t errlen)
{
	struct rank_key *keys = NULL;
	const struct mf_file *ref = NULL, *f, *best;
	const struct manifest *refm;
	size_t i, j, k, nkeys = 0, cap = 0, mcap = 0;
	int64_t rs, re, ov, best_ov;
	char label[512], shownb[512];
	int ret = 0;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < n; i++)
		if (ms[i].clock_source == MF_CLOCK_NONE) {
			snprintf(err, errlen, "%s: cannot align clocks: manifest.json has no \"clock\" and no "
				 "summary gives start_wallclock with start_us", shown(shownb, sizeof(shownb), ms[i].dir));
			return -EINVAL;
		}
	if (!region)
		region = common_region(ms, n);
	if (!region) {
		snprintf(err, errlen, "no segment with start and end times in the given directories");
		return -ENOENT;
	}
	p->region = strdup(region);
	if (!p->region)
		goto oom;
	/* One key per rank (host, rank, restart, pid when named by pid). */
	for (i = 0; i < n; i++)
		for (j = 0; j < ms[i].nfiles; j++) {
			f = &ms[i].files[j];
			if (!in_region(f, region))
				continue;
			for (k = 0; k < nkeys; k++)
				if (keys[k].m == &ms[i] && !cmp_key(keys[k].f, keys[k].m, f, &ms[i]))
					break;
			if (k < nkeys)
				continue;
			if (grow_one(&keys, nkeys, &cap, sizeof(*keys), 16))
				goto oom;
			keys[nkeys++] = (struct rank_key){ &ms[i], f };
		}
	if (!nkeys) {
		snprintf(err, errlen, "no segment of region '%s' in the given directories",
			 shown(shownb, sizeof(shownb), region));
		ret = -ENOENT;
		goto cleanup;
	}
	if (nkeys > TM_SOURCES_MAX) {
		snprintf(err, errlen, "%zu ranks: more than %d", nkeys, TM_SOURCES_MAX);
		ret = -E2BIG;
		goto cleanup;
	}
	qsort(keys, nkeys, sizeof(*keys), cmp_rank_key);
	/* The reference: the lowest rank's first complete segment, or segment N. */
	refm = keys[0].m;
	for (j = 0; j < refm->nfiles; j++) {
		f = &refm->files[j];
		if (!in_region(f, region) || cmp_key(f, refm, keys[0].f, refm))
			continue;
		if (segment >= 0) {
			if (f->segment == (uint64_t)segment)
				ref = f;
		} else if (!ref || (ref->incomplete && !f->incomplete) ||
			   (ref->incomplete == f->incomplete && f->segment < ref->segment)) {
			ref = f; /* complete first, then the lowest number */
		}
	}
	if (!ref) {
		key_label(refm, keys[0].f, label, sizeof(label));
		snprintf(err, errlen, "%s has no segment %lld of region '%s'",
			 shown(shownb, sizeof(shownb), label), segment, region);
		ret = -ENOENT;
		goto cleanup;
	}
	p->picks = calloc(nkeys, sizeof(*p->picks));
	if (!p->picks)
		goto oom;
	rs = ref->start_ns + refm->offset_ns;
	re = ref->end_ns + refm->offset_ns;
	p->picks[p->n++] = (struct tm_pick){ refm, ref, "reference", re - rs, 0 };
	for (k = 1; k < nkeys; k++) {
		const struct manifest *m = keys[k].m;
		const char *how = "largest overlap";

		best = NULL;
		best_ov = 0;
		for (j = 0; j < m->nfiles; j++) {
			f = &m->files[j];
			if (!in_region(f, region) || cmp_key(f, m, keys[k].f, m))
				continue;
			ov = overlap(rs, re, f->start_ns + m->offset_ns, f->end_ns + m->offset_ns);
			if (ov > best_ov || (ov == best_ov && ov && f->segment < best->segment)) {
				best = f;
				best_ov = ov;
			}
		}
		if (!best) {
			how = "same segment number";
			for (j = 0; j < m->nfiles; j++) {
				f = &m->files[j];
				if (in_region(f, region) && !cmp_key(f, m, keys[k].f, m) &&
				    f->segment == ref->segment)
					best = f;
			}
		}
		if (!best) {
			key_label(m, keys[k].f, label, sizeof(label));
			if (grow_one(&p->missing, p->nmissing, &mcap, sizeof(char *), 8))
				goto oom;
			if (!(p->missing[p->nmissing] = strdup(label)))
				goto oom;
			p->nmissing++;
			continue;
		}
		p->picks[p->n++] = (struct tm_pick){ m, best, how, best_ov, 0 };
	}
	p->base_ns = INT64_MAX;
	for (i = 0; i < p->n; i++)
		if (p->picks[i].f->start_ns + p->picks[i].m->offset_ns < p->base_ns)
			p->base_ns = p->picks[i].f->start_ns + p->picks[i].m->offset_ns;
	for (i = 0; i < p->n; i++)
		p->picks[i].shift_ns = p->picks[i].m->offset_ns - p->base_ns;
	goto cleanup;
oom:
	snprintf(err, errlen, "out of memory");
	ret = -ENOMEM;
cleanup:
	free(keys);
	if (ret)
		tm_plan_free(p);
	return ret;
}

void tm_plan_free(struct tm_plan *p)
{
	size_t i;

	for (i = 0; i < p->nmissing; i++)
		free(p->missing[i]);
	free(p->missing);
	free(p->picks);
	free(p->region);
	memset(p, 0, sizeof(*p));
}

/* ---- rewriting events --------------------------------------------------- */

void tm_src_free(struct tm_src *s)
{
	free(s->pids);
	s->pids = NULL;
	s->npids = s->pidcap = 0;
}

void tm_src_init(struct tm_src *s, const struct tm_plan *p, size_t i)
{
	memset(s, 0, sizeof(*s));
	s->index = (unsigned int)i;
	s->shift_ns = p->picks[i].shift_ns;
	key_label(p->picks[i].m, p->picks[i].f, s->prefix, sizeof(s->prefix));
}

static struct tm_pid_map *pid_map(struct tm_src *s, int64_t pid)
{
	size_t i;

	for (i = 0; i < s->npids; i++)
		if (s->pids[i].from == pid)
			return &s->pids[i];
	if (s->npids == TM_PID_STRIDE ||
	    grow_one(&s->pids, s->npids, &s->pidcap, sizeof(*s->pids), 8))
		return NULL;
	s->pids[s->npids] = (struct tm_pid_map){ pid, ((int64_t)s->index + 1) * TM_PID_STRIDE +
						       (int64_t)s->npids, 0 };
	return &s->pids[s->npids++];
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
	int64_t ns;
	size_t len;

	if (!json_object_is_type(ev, json_type_object))
		return 1;
	if (json_object_object_get_ex(ev, "ph", &v) && json_object_is_type(v, json_type_string))
		ph = json_object_get_string(v);
	if (json_object_object_get_ex(ev, "name", &v) && json_object_is_type(v, json_type_string))
		what = json_object_get_string(v);
	if (ph && !strcmp(ph, "M") && what && !strcmp(what, "process_sort_index"))
		return 1; /* written again in rank order */
	if (json_object_object_get_ex(ev, "pid", &v)) {
		if (!json_object_is_type(v, json_type_int))
			return 1; /* no pid we could keep apart */
		pm = pid_map(s, json_object_get_int64(v));
		if (!pm)
			return -E2BIG;
		json_object_object_add(ev, "pid", json_object_new_int64(pm->to));
	}
	if (json_object_object_get_ex(ev, "ts", &v) && !mf_json_us_to_ns(v, &ns)) {
		ns += s->shift_ns;
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

static void sep(FILE *out, int *first)
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
			sep(out, first);
			fprintf(out, "{\"ph\":\"M\",\"pid\":%lld,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":",
				(long long)s->pids[i].to);
			json_write_string(out, label);
			fputs("}}", out);
		}
		sep(out, first);
		fprintf(out, "{\"ph\":\"M\",\"pid\":%lld,\"tid\":0,\"name\":\"process_sort_index\","
			"\"args\":{\"sort_index\":%lld}}", (long long)s->pids[i].to, (long long)s->pids[i].to);
	}
}

/* ---- streaming a source trace ------------------------------------------- */

struct rd {
	gzFile gz;
	unsigned char buf[1 << 16];
	size_t pos, len;
	int eof;
};

static int rd_peek(struct rd *r)
{
	int n;

	if (r->pos < r->len)
		return r->buf[r->pos];
	if (r->eof)
		return -1;
	n = gzread(r->gz, r->buf, sizeof(r->buf));
	if (n <= 0) {
		r->eof = 1;
		return -1;
	}
	r->pos = 0;
	r->len = (size_t)n;
	return r->buf[0];
}

static int rd_get(struct rd *r)
{
	int c = rd_peek(r);

	if (c >= 0)
		r->pos++;
	return c;
}

static int rd_ws(struct rd *r)
{
	int c;

	while ((c = rd_peek(r)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		r->pos++;
	return c;
}

struct sbuf {
	char *p;
	size_t n, cap;
};

static int sb_put(struct sbuf *b, int c, size_t max)
{
	char *np;

	if (b->n + 2 > max)
		return -EFBIG;
	if (b->n + 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;

		np = realloc(b->p, cap);
		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = cap;
	}
	b->p[b->n++] = (char)c;
	b->p[b->n] = 0;
	return 0;
}

/* One JSON value's text into @b (NULL: skip it), at most @max bytes. */
static int rd_value(struct rd *r, struct sbuf *b, size_t max)
{
	int c, depth = 0, in_str = 0, esc = 0, ret;

	if (b)
		b->n = 0;
	c = rd_ws(r);
	if (c < 0)
		return -EINVAL;
	if (c != '{' && c != '[' && c != '"') {
		/* a scalar: up to the next delimiter */
		while ((c = rd_peek(r)) >= 0 && !strchr(",]} \t\r\n", c)) {
			if (b && (ret = sb_put(b, c, max)))
				return ret;
			r->pos++;
		}
		return 0;
	}
	for (;;) {
		c = rd_get(r);
		if (c < 0)
			return -EINVAL;
		if (b && (ret = sb_put(b, c, max)))
			return ret;
		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"') {
				in_str = 0;
				if (!depth)
					return 0;
			}
			continue;
		}
		if (c == '"')
			in_str = 1;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0)
			return 0;
	}
}

static int emit_event(FILE *out, struct sbuf *b, struct tm_src *s, int *first)
{
	json_object *ev = json_tokener_parse(b->p);
	int ret;

	if (!ev)
		return -EINVAL;
	ret = tm_rewrite_event(ev, s);
	if (!ret) {
		sep(out, first);
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

static int stream_events(FILE *out, struct rd *r, struct sbuf *b, struct tm_src *s, int *first)
{
	int c, ret;

	if (rd_get(r) != '[')
		return -EINVAL;
	if (rd_ws(r) == ']') {
		r->pos++;
		return 0;
	}
	for (;;) {
		ret = rd_value(r, b, TM_EVENT_MAX);
		if (!ret)
			ret = emit_event(out, b, s, first);
		if (ret)
			return ret;
		c = rd_ws(r);
		r->pos++;
		if (c == ']')
			return 0;
		if (c != ',')
			return -EINVAL;
	}
}

int tm_stream_file(FILE *out, const char *path, struct tm_src *s, int *first, char *err,
		   size_t errlen)
{
	struct sbuf b = { 0 };
	struct rd *r = NULL;
	char name[PATH_MAX];
	json_object *key;
	struct stat st;
	int c, ret, seen = 0;

	if (stat(path, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", shown(name, sizeof(name), path), strerror(-ret));
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", shown(name, sizeof(name), path));
		return -EINVAL;
	}
	if (strlen(path) > 8 && !strcmp(path + strlen(path) - 8, ".pftrace")) {
		snprintf(err, errlen, "%s: a Perfetto protobuf trace (--format pftrace): merge reads "
			 "JSON traces only; attach with --format json or json.gz to merge",
			 shown(name, sizeof(name), path));
		return -ENOTSUP;
	}
	if ((unsigned long long)st.st_size > TM_TRACE_MAX) {
		snprintf(err, errlen, "%s: %lld bytes, more than the limit of %llu per trace",
			 shown(name, sizeof(name), path), (long long)st.st_size, TM_TRACE_MAX);
		return -EFBIG;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->gz = gzopen(path, "rb");
	if (!r->gz) {
		ret = -(errno ? errno : ENOMEM);
		snprintf(err, errlen, "%s: %s", shown(name, sizeof(name), path), strerror(-ret));
		goto cleanup;
	}
	gzbuffer(r->gz, 1 << 16);
	c = rd_ws(r);
	if (c == '[') {
		ret = stream_events(out, r, &b, s, first); /* the array form */
		seen = 1;
		goto done;
	}
	ret = -EINVAL;
	if (rd_get(r) != '{')
		goto done;
	for (;;) {
		c = rd_ws(r);
		if (c == '}') {
			ret = 0;
			break;
		}
		ret = rd_value(r, &b, 4096);
		if (ret || b.n < 2 || b.p[0] != '"')
			goto bad;
		key = json_tokener_parse(b.p);
		ret = key && !strcmp(json_object_get_string(key), "traceEvents");
		json_object_put(key);
		if (rd_ws(r) != ':') {
			ret = -EINVAL;
			break;
		}
		r->pos++;
		if (ret) {
			if (rd_ws(r) != '[') {
				ret = -EINVAL;
				break;
			}
			ret = stream_events(out, r, &b, s, first);
			seen = 1;
		} else {
			ret = rd_value(r, NULL, TM_VALUE_MAX);
		}
		if (ret)
			break;
		c = rd_ws(r);
		r->pos++;
		if (c == '}')
			break;
		if (c != ',') {
			ret = -EINVAL;
			break;
		}
	}
done:
	if (!ret && !seen)
		ret = -ENODATA;
bad:
	if (ret == -EFBIG)
		snprintf(err, errlen, "%s: an event longer than %u bytes", shown(name, sizeof(name), path),
			 TM_EVENT_MAX);
	else if (ret == -E2BIG)
		snprintf(err, errlen, "%s: more than %d processes in one trace", shown(name, sizeof(name), path),
			 TM_PID_STRIDE);
	else if (ret == -ENODATA)
		snprintf(err, errlen, "%s: no \"traceEvents\"", shown(name, sizeof(name), path));
	else if (ret)
		snprintf(err, errlen, "%s: not a valid Chrome trace (JSON object with \"traceEvents\")",
			 shown(name, sizeof(name), path));
cleanup:
	if (r->gz)
		gzclose(r->gz);
	free(r);
	free(b.p);
	return ret;
}

/* ---- the merged file ---------------------------------------------------- */

static json_object *ns_obj(int64_t ns)
{
	return json_object_new_int64(ns);
}

static json_object *nodes_json(struct manifest *ms, size_t n)
{
	json_object *arr = json_object_new_array(), *o;
	size_t i;

	for (i = 0; i < n; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "hostname", json_string_obj(ms[i].hostname));
		json_object_object_add(o, "directory", json_string_obj(ms[i].dir));
		json_object_object_add(o, "offset_source", json_string_obj(
			ms[i].clock_source == MF_CLOCK_MANIFEST ? "manifest clock (start and end pairs)" :
			"summary start_wallclock and start_us (1 us steps; read spans not known)"));
		json_object_object_add(o, "offset_ns", ns_obj(ms[i].offset_ns));
		if (ms[i].clock_source == MF_CLOCK_MANIFEST) {
			json_object_object_add(o, "offset_start_ns",
				ns_obj(ms[i].clock_start.real_ns - ms[i].clock_start.mono_ns));
			json_object_object_add(o, "offset_end_ns",
				ns_obj(ms[i].clock_end.real_ns - ms[i].clock_end.mono_ns));
			json_object_object_add(o, "read_span_start_ns", ns_obj(ms[i].clock_start.span_ns));
			json_object_object_add(o, "read_span_end_ns", ns_obj(ms[i].clock_end.span_ns));
		}
		json_object_object_add(o, "uncertainty_ns", ns_obj(ms[i].uncertainty_ns));
		json_object_array_add(arr, o);
	}
	return arr;
}

static json_object *metadata_json(struct manifest *ms, size_t n, const struct tm_plan *p,
				  const struct tm_src *srcs)
{
	json_object *root = json_object_new_object(), *al = json_object_new_object();
	json_object *ranks = json_object_new_array(), *o, *miss = json_object_new_array(), *pids;
	const struct tm_pick *k;
	char path[PATH_MAX + 256], key[32];
	size_t i, j;

	json_object_object_add(root, "tool", json_string_obj("fvbpf merge"));
	json_object_object_add(root, "region", json_string_obj(p->region));
	json_object_object_add(root, "reference_segment", json_object_new_uint64(p->picks[0].f->segment));
	json_object_object_add(al, "method", json_string_obj(
		"ts = source CLOCK_MONOTONIC ts + node offset (CLOCK_REALTIME - CLOCK_MONOTONIC, mean of the "
		"offsets read at attach start and end) - base (the earliest aligned segment start)"));
	json_object_object_add(al, "base_realtime_ns", ns_obj(p->base_ns));
	json_object_object_add(al, "uncertainty", json_string_obj(
		"per node: |offset_end - offset_start| + both read spans (uncertainty_ns)"));
	json_object_object_add(al, "assumption", json_string_obj(ASSUMPTION));
	json_object_object_add(al, "nodes", nodes_json(ms, n));
	json_object_object_add(root, "clock_alignment", al);
	for (i = 0; i < p->n; i++) {
		k = &p->picks[i];
		o = json_object_new_object();
		json_object_object_add(o, "label", json_string_obj(srcs[i].prefix));
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
		pids = json_object_new_object();
		for (j = 0; j < srcs[i].npids; j++) {
			snprintf(key, sizeof(key), "%lld", (long long)srcs[i].pids[j].from);
			json_object_object_add(pids, key, json_object_new_int64(srcs[i].pids[j].to));
		}
		json_object_object_add(o, "pids", pids);
		json_object_object_add(o, "events", json_object_new_uint64(srcs[i].events));
		json_object_array_add(ranks, o);
	}
	json_object_object_add(root, "ranks", ranks);
	for (i = 0; i < p->nmissing; i++)
		json_object_array_add(miss, json_string_obj(p->missing[i]));
	json_object_object_add(root, "ranks_without_segment", miss);
	return root;
}

int trace_merge(struct manifest *ms, size_t n, const struct tm_opts *o, char *err, size_t errlen)
{
	char dirbuf[PATH_MAX], basebuf[PATH_MAX], path[PATH_MAX], name[PATH_MAX];
	struct tm_src *srcs = NULL;
	struct out_file of = { .f = NULL };
	struct tm_plan p;
	json_object *meta;
	const char *dir, *base;
	int first = 1, ret;
	size_t i;

	ret = tm_plan_build(ms, n, o->region, o->segment, &p, err, errlen);
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
	srcs = calloc(p.n, sizeof(*srcs));
	if (!srcs) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	ret = out_open(&of, dir, base);
	if (ret) {
		snprintf(err, errlen, "%s: cannot write: %s", shown(name, sizeof(name), o->output),
			 strerror(-ret));
		goto cleanup;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[\n", of.f);
	for (i = 0; i < p.n; i++) {
		tm_src_init(&srcs[i], &p, i);
		if (!p.picks[i].f->trace[0])
			continue;
		snprintf(path, sizeof(path), "%s/%s", p.picks[i].m->dir, p.picks[i].f->trace);
		ret = tm_stream_file(of.f, path, &srcs[i], &first, err, errlen);
		if (ret)
			goto cleanup;
		tm_write_process_meta(of.f, &srcs[i], &first);
	}
	meta = metadata_json(ms, n, &p, srcs);
	fputs("\n],\n\"otherData\":", of.f);
	fputs(json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE),
	      of.f);
	fputs("\n}\n", of.f);
	json_object_put(meta);
	ret = out_commit(&of);
	of.f = NULL;
	if (ret)
		snprintf(err, errlen, "%s: write failed: %s", shown(name, sizeof(name), o->output),
			 strerror(-ret));
	else if (o->info)
		for (i = 0; i < p.nmissing; i++)
			fprintf(stderr, "fvbpf: merge: %s has no segment of region '%s' to merge\n",
				shown(name, sizeof(name), p.missing[i]), shown(path, sizeof(path), p.region));
	if (!ret && o->info)
		fprintf(o->info, "merged %zu rank%s of region %s (reference segment %llu) into %s\n", p.n,
		       p.n == 1 ? "" : "s", shown(name, sizeof(name), p.region),
		       (unsigned long long)p.picks[0].f->segment, shown(dirbuf, sizeof(dirbuf), o->output));
cleanup:
	if (of.f)
		out_abort(&of);
	for (i = 0; srcs && i < p.n; i++)
		tm_src_free(&srcs[i]);
	free(srcs);
	tm_plan_free(&p);
	return ret;
}
