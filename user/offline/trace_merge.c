// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf merge`: every rank's step in one Chrome trace, clocks aligned. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file_open.h"
#include "util/json_stream.h"
#include "util/json_writer.h"
#include "output/output_files.h"
#include "util/text_sanitize.h"
#include "offline/trace_merge.h"
#include "util/text_copy.h"

#define ASSUMPTION "cross-node CLOCK_REALTIME clocks are assumed NTP/PTP synchronised; " \
	"that error is not measured and not part of the uncertainty"

void tm_format_us(char *buf, size_t len, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)-(ns + 1) + 1 : (uint64_t)ns;

	snprintf(buf, len, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
		 (unsigned long long)(a % 1000));
}

/* ---- choosing the segments ---------------------------------------------- */

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

/* A segment of the region, with its times aligned. */
struct cand {
	const struct manifest *m;
	const struct mf_file *f;
	size_t mi;                /* which directory: its ranks stay its own */
	int64_t start, end;       /* realtime ns */
};

/* Rank order, a rank's segments together, by number. */
static int cmp_cand(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	int c = cmp_key(a->f, a->m, b->f, b->m);

	if (c)
		return c;
	if (a->mi != b->mi)
		return a->mi < b->mi ? -1 : 1;
	if (a->f->segment != b->f->segment)
		return a->f->segment < b->f->segment ? -1 : 1;
	return a->f < b->f ? -1 : a->f > b->f;
}

static bool same_rank(const struct cand *a, const struct cand *b)
{
	return a->mi == b->mi && !cmp_key(a->f, a->m, b->f, b->m);
}

static bool in_region(const struct mf_file *f, const char *region)
{
	return f->have_summary && f->have_times && f->region && !strcmp(f->region, region);
}

struct region_count {
	const char *name;
	size_t count;
};

static void count_key(const void *arr, size_t i, const char **name, const char **kind)
{
	*name = ((const struct region_count *)arr)[i].name;
	*kind = "";
}

/* The region with the most segments (ties: the first name) into *@out
 * (NULL: none); 0, -ENOSPC or -ENOMEM. */
static int common_region(struct manifest *ms, size_t n, const char **out)
{
	struct region_count *seen = NULL;
	struct pair_index index = { 0 };
	size_t i, j, pos, nseen = 0, cap = 0, best_count = 0;
	const char *r;
	int ret = 0;

	*out = NULL;
	for (i = 0; i < n && !ret; i++)
		for (j = 0; j < ms[i].nfiles && !ret; j++) {
			r = ms[i].files[j].region;
			if (!r || !ms[i].files[j].have_times)
				continue;
			ret = mf_index_find(ms->budget, &index, seen, nseen, count_key, r, "", &pos);
			if (ret == 1) {
				seen[pos].count++;
				ret = 0;
			} else if (!ret) {
				ret = mf_grow(ms->budget, &seen, nseen, &cap, sizeof(*seen), 8);
				if (!ret) {
					seen[nseen] = (struct region_count){ r, 1 };
					pair_index_set(&index, pos, nseen++);
				}
			}
		}
	for (i = 0; i < nseen && !ret; i++)
		if (seen[i].count > best_count ||
		    (seen[i].count == best_count && strcmp(seen[i].name, *out) < 0)) {
			*out = seen[i].name;
			best_count = seen[i].count;
		}
	free(seen);
	pair_index_free(&index);
	return ret;
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

/* Saturated: a span too long for int64 is the longest. */
static int64_t span(int64_t s, int64_t e)
{
	int64_t d;

	return __builtin_sub_overflow(e, s, &d) ? INT64_MAX : d;
}

static int64_t overlap(int64_t s1, int64_t e1, int64_t s2, int64_t e2)
{
	int64_t s = s1 > s2 ? s1 : s2, e = e1 < e2 ? e1 : e2;

	return e > s ? span(s, e) : 0;
}

/* Every segment of @region with aligned times, sorted (cmp_cand). */
static int collect(struct manifest *ms, size_t n, const char *region, struct cand **out,
		   size_t *count, char *err, size_t errlen)
{
	struct cand *c = NULL, *k;
	size_t i, j, cap = 0, nc = 0;
	char name[PATH_MAX + 256], shownb[PATH_MAX];
	int ret = 0;

	for (i = 0; i < n && !ret; i++)
		for (j = 0; j < ms[i].nfiles && !ret; j++) {
			if (!in_region(&ms[i].files[j], region))
				continue;
			ret = mf_grow(ms->budget, &c, nc, &cap, sizeof(*c), 64);
			if (ret)
				break;
			k = &c[nc++];
			*k = (struct cand){ &ms[i], &ms[i].files[j], i, 0, 0 };
			if (__builtin_add_overflow(k->f->start_ns, ms[i].offset_ns, &k->start) ||
			    __builtin_add_overflow(k->f->end_ns, ms[i].offset_ns, &k->end)) {
				snprintf(name, sizeof(name), "%s/%s", ms[i].dir, k->f->summary_json);
				snprintf(err, errlen, "%s: start_us and end_us with the node's clock offset "
					 "do not fit in 64-bit nanoseconds: not a real segment",
					 text_shown(shownb, sizeof(shownb), name));
				ret = -ERANGE;
			}
		}
	if (ret) {
		free(c);
		return ret;
	}
	if (nc) /* qsort(NULL, 0, ...) is undefined */
		qsort(c, nc, sizeof(*c), cmp_cand);
	*out = c;
	*count = nc;
	return 0;
}

/* The end of the rank that starts at @i. */
static size_t rank_end(const struct cand *c, size_t n, size_t i)
{
	size_t j = i + 1;

	while (j < n && same_rank(&c[i], &c[j]))
		j++;
	return j;
}

/* The reference: the lowest rank's first complete segment, or segment N. */
static const struct cand *pick_reference(const struct cand *c, size_t end, long long segment)
{
	const struct cand *ref = NULL;
	size_t j;

	for (j = 0; j < end; j++) {
		const struct mf_file *f = c[j].f;

		if (segment >= 0) {
			if (f->segment == (uint64_t)segment)
				ref = &c[j];
		} else if (!ref || (ref->f->incomplete && !f->incomplete) ||
			   (ref->f->incomplete == f->incomplete && f->segment < ref->f->segment)) {
			ref = &c[j]; /* complete first, then the lowest number */
		}
	}
	return ref;
}

/* The segment of the rank c[i..end) to merge with @ref, or NULL. */
static const struct cand *pick_other(const struct cand *c, size_t i, size_t end,
				     const struct cand *ref, const char **how, int64_t *best_ov)
{
	const struct cand *best = NULL;
	int64_t ov;
	size_t j;

	*how = "largest overlap";
	*best_ov = 0;
	for (j = i; j < end; j++) {
		ov = overlap(ref->start, ref->end, c[j].start, c[j].end);
		if (ov > *best_ov || (ov == *best_ov && ov && c[j].f->segment < best->f->segment)) {
			best = &c[j];
			*best_ov = ov;
		}
	}
	if (best)
		return best;
	*how = "same segment number";
	for (j = i; j < end; j++)
		if (c[j].f->segment == ref->f->segment)
			best = &c[j];
	return best;
}

static int add_missing(struct tm_plan *p, size_t *mcap, struct mf_budget *b,
		       const struct cand *k)
{
	char label[512];
	int ret;

	key_label(k->m, k->f, label, sizeof(label));
	ret = mf_grow(b, &p->missing, p->nmissing, mcap, sizeof(char *), 8);
	if (!ret)
		ret = mf_charge(b, MF_ALLOC(strlen(label) + 1));
	if (ret)
		return ret;
	p->missing[p->nmissing] = strdup(label);
	if (!p->missing[p->nmissing])
		return -ENOMEM;
	p->nmissing++;
	return 0;
}

/* base: the earliest aligned start of the picks; each one's shift. */
static int plan_shifts(struct tm_plan *p, const int64_t *starts, char *err, size_t errlen)
{
	size_t i;

	p->base_ns = INT64_MAX;
	for (i = 0; i < p->n; i++)
		if (starts[i] < p->base_ns)
			p->base_ns = starts[i];
	for (i = 0; i < p->n; i++)
		if (__builtin_sub_overflow(p->picks[i].m->offset_ns, p->base_ns, &p->picks[i].shift_ns)) {
			snprintf(err, errlen, "the clock offsets of the directories are too far apart "
				 "to align (not a real job)");
			return -ERANGE;
		}
	return 0;
}

static int plan_picks(struct tm_plan *p, const struct cand *c, size_t nc, size_t nkeys,
		      long long segment, struct mf_budget *b, char *err, size_t errlen)
{
	const struct cand *ref, *best;
	size_t i, end, mcap = 0;
	char label[512], shownb[512];
	int64_t *starts, ov;
	const char *how;
	int ret;

	end = rank_end(c, nc, 0);
	ref = pick_reference(c, end, segment);
	if (!ref) {
		key_label(c[0].m, c[0].f, label, sizeof(label));
		snprintf(err, errlen, "%s has no segment %lld of region '%s'",
			 text_shown(shownb, sizeof(shownb), label), segment, p->region);
		return -ENOENT;
	}
	ret = mf_charge(b, MF_ALLOC(nkeys * (sizeof(*p->picks) + sizeof(*starts))));
	if (ret)
		return ret;
	p->picks = calloc(nkeys, sizeof(*p->picks));
	starts = calloc(nkeys, sizeof(*starts));
	if (!p->picks || !starts) {
		free(starts);
		return -ENOMEM;
	}
	starts[0] = ref->start;
	p->picks[p->n++] = (struct tm_pick){ ref->m, ref->f, "reference", span(ref->start, ref->end), 0 };
	for (i = end; i < nc && !ret; i = end) {
		end = rank_end(c, nc, i);
		best = pick_other(c, i, end, ref, &how, &ov);
		if (!best) {
			ret = add_missing(p, &mcap, b, &c[i]);
			continue;
		}
		starts[p->n] = best->start;
		p->picks[p->n++] = (struct tm_pick){ best->m, best->f, how, ov, 0 };
	}
	if (!ret)
		ret = plan_shifts(p, starts, err, errlen);
	free(starts);
	return ret;
}

static size_t count_ranks(const struct cand *c, size_t nc)
{
	size_t i, n = 0;

	for (i = 0; i < nc; i = rank_end(c, nc, i))
		n++;
	return n;
}

int tm_plan_build(struct manifest *ms, size_t n, const char *region, long long segment,
		  struct tm_plan *p, char *err, size_t errlen)
{
	struct mf_budget *b = n ? ms->budget : NULL;
	struct cand *c = NULL;
	size_t i, nc = 0, nkeys;
	char shownb[512];
	int ret = 0;

	memset(p, 0, sizeof(*p));
	err[0] = 0;
	for (i = 0; i < n; i++)
		if (ms[i].clock_source == MF_CLOCK_NONE) {
			snprintf(err, errlen, "%s: cannot align clocks: manifest.json has no usable \"clock\" "
				 "and no summary gives start_wallclock with start_us",
				 text_shown(shownb, sizeof(shownb), ms[i].dir));
			return -EINVAL;
		}
	if (!region)
		ret = common_region(ms, n, &region);
	if (!ret && !region) {
		snprintf(err, errlen, "no segment with start and end times in the given directories");
		return -ENOENT;
	}
	if (!ret && !(p->region = strdup(region)))
		ret = -ENOMEM;
	if (!ret)
		ret = collect(ms, n, region, &c, &nc, err, errlen);
	if (ret)
		goto cleanup;
	nkeys = count_ranks(c, nc);
	if (!nkeys) {
		snprintf(err, errlen, "no segment of region '%s' in the given directories",
			 text_shown(shownb, sizeof(shownb), region));
		ret = -ENOENT;
		goto cleanup;
	}
	if (nkeys > TM_SOURCES_MAX) {
		snprintf(err, errlen, "%zu ranks: more than %d", nkeys, TM_SOURCES_MAX);
		ret = -E2BIG;
		goto cleanup;
	}
	ret = plan_picks(p, c, nc, nkeys, segment, b, err, errlen);
cleanup:
	if (ret == -ENOSPC)
		mf_budget_error(b, err, errlen);
	else if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(c);
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
	s->budget = p->picks[i].m->budget;
	s->index = (unsigned int)i;
	s->shift_ns = p->picks[i].shift_ns;
	key_label(p->picks[i].m, p->picks[i].f, s->prefix, sizeof(s->prefix));
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

static int emit_event(FILE *out, const struct js_text *b, struct tm_src *s, int *first)
{
	json_object *ev = js_parse(b);
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

/* ---- the merged file ---------------------------------------------------- */

static json_object *ns_obj(int64_t ns)
{
	return json_object_new_int64(ns);
}

#define TM_JSON_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE)

/* "key":value, after a separator unless *@first; @v is put. */
static void put_member(FILE *out, const char *key, json_object *v, int *first)
{
	sep(out, first);
	json_write_string(out, key);
	fprintf(out, ":%s", v ? json_object_to_json_string_ext(v, TM_JSON_FLAGS) : "null");
	json_object_put(v);
}

/* One element of an array; @v is put. */
static void put_element(FILE *out, json_object *v, int *first)
{
	sep(out, first);
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
	put_member(out, "reference_segment", json_object_new_uint64(p->picks[0].f->segment), &first);
	sep(out, &first);
	fputs("\"clock_alignment\":{\n", out);
	put_member(out, "method", json_string_obj(
		"ts = source CLOCK_MONOTONIC ts + node offset (CLOCK_REALTIME - CLOCK_MONOTONIC, mean of the "
		"offsets read at attach start and end) - base (the earliest aligned segment start)"), &inner);
	put_member(out, "base_realtime_ns", ns_obj(p->base_ns), &inner);
	put_member(out, "uncertainty", json_string_obj(
		"per node: |offset_end - offset_start| + both read spans (uncertainty_ns)"), &inner);
	put_member(out, "assumption", json_string_obj(ASSUMPTION), &inner);
	sep(out, &inner);
	fputs("\"nodes\":[\n", out);
	for (i = 0; i < n; i++)
		put_element(out, node_json(&ms[i]), &elem);
	fputs("\n]}", out);
	sep(out, &first);
	fputs("\"ranks\":[\n", out);
	for (i = 0, elem = 1; i < p->n; i++)
		put_element(out, pick_json(&p->picks[i], &srcs[i], i), &elem);
	fputs("\n]", out);
	sep(out, &first);
	fputs("\"ranks_without_segment\":[\n", out);
	for (i = 0, elem = 1; i < p->nmissing; i++)
		put_element(out, json_string_obj(p->missing[i]), &elem);
	fputs("\n]\n}", out);
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
		for (i = 0; i < p.nmissing; i++)
			fprintf(stderr, "fvbpf: merge: %s has no segment of region '%s' to merge\n",
				text_shown(name, sizeof(name), p.missing[i]), text_shown(path, sizeof(path), p.region));
	if (!ret && o->info)
		fprintf(o->info, "merged %zu rank%s of region %s (reference segment %llu) into %s\n", p.n,
		       p.n == 1 ? "" : "s", text_shown(name, sizeof(name), p.region),
		       (unsigned long long)p.picks[0].f->segment, text_shown(dirbuf, sizeof(dirbuf), o->output));
cleanup:
	if (of.f)
		out_abort(&of);
	for (i = 0; srcs && i < p.n; i++)
		tm_src_free(&srcs[i]);
	free(srcs);
	tm_plan_free(&p);
	return ret;
}
