// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The keys of a segment read back that pair it with the other ranks' (the
 * step key, whether it counts, its wall-clock bounds), and what stands in
 * for them in directories written before them. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "offline/manifest/manifest_read.h"
#include "offline/manifest/read_internal.h"

/* @o's "not_counted_why", cut to MF_WHY_MAX bytes, interned. */
static int read_why(struct manifest *m, struct mf_file *f, json_object *o)
{
	const char *s = get_str(o, "not_counted_why");
	char cut[MF_WHY_MAX + 1];

	if (!s)
		return 0;
	snprintf(cut, sizeof(cut), "%s", s);
	return mf_intern(m, cut, &f->not_counted_why);
}

/* @o's "step_key": a string of at most MF_STEP_KEY_MAX bytes and no NUL
 * inside (a \u0000 would make two keys one), else none and refused. */
static int read_key(struct manifest *m, struct mf_file *f, json_object *o)
{
	json_object *v = get(o, "step_key");
	const char *s;

	if (!v)
		return 0;
	s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
	f->step_key_refused = !s || strlen(s) != (size_t)json_object_get_string_len(v) ||
			      strlen(s) > MF_STEP_KEY_MAX;
	if (f->step_key_refused) {
		f->step_key = "";
		return 0;
	}
	return mf_intern(m, s, &f->step_key);
}

static void read_unix(struct mf_file *f, json_object *o)
{
	int64_t s, e;

	if (mf_json_us_to_ns(get(o, "start_unix_us"), &s) ||
	    mf_json_us_to_ns(get(o, "end_unix_us"), &e) || s > e)
		return; /* absent or not believed: from the monotonic times */
	f->start_unix_ns = s;
	f->end_unix_ns = e;
	f->have_unix = true;
}

int mf_step_keys(struct manifest *m, struct mf_file *f, json_object *o)
{
	int ret;

	if (get_bool(o, "started_before_attach"))
		f->started_before_attach = true;
	if (get(o, "counted"))
		f->counted = get_bool(o, "counted");
	else if (f->started_before_attach)
		f->counted = false; /* written before the key: what it stood for */
	ret = read_why(m, f, o);
	if (!ret)
		ret = read_key(m, f, o);
	if (ret)
		return ret;
	read_unix(f, o);
	if (f->counted)
		f->not_counted_why = "";
	else if (!f->not_counted_why[0])
		f->not_counted_why = f->started_before_attach ? "started before attach" : "not counted";
	return 0;
}

enum mf_applied mf_applied_offset(const struct manifest *m, int64_t *offset_ns,
				  int64_t *moved_ns)
{
	bool unix_times = false;
	size_t i;

	*offset_ns = *moved_ns = 0;
	for (i = 0; i < m->nfiles && !unix_times; i++)
		unix_times = m->files[i].have_unix;
	if (unix_times && m->clock_source == MF_CLOCK_MANIFEST) {
		/* The live side wrote them with the attach start's pair.  Both
		 * clocks are >= 0 (mf_clock_offset() checked): no overflow. */
		*offset_ns = m->clock_start.real_ns - m->clock_start.mono_ns;
		*moved_ns = (m->clock_end.real_ns - m->clock_end.mono_ns) - *offset_ns;
		return MF_APPLIED_ATTACH_START;
	}
	if (unix_times)
		return MF_APPLIED_OWN;
	if (m->clock_source == MF_CLOCK_NONE)
		return MF_APPLIED_NONE;
	*offset_ns = m->offset_ns;
	return MF_APPLIED_MEAN;
}

int mf_file_wallclock(const struct manifest *m, const struct mf_file *f, int64_t *start,
		      int64_t *end)
{
	if (f->have_unix) {
		*start = f->start_unix_ns;
		*end = f->end_unix_ns;
	} else if (!f->have_times || m->clock_source == MF_CLOCK_NONE) {
		return -ENOENT;
	} else if (__builtin_add_overflow(f->start_ns, m->offset_ns, start) ||
		   __builtin_add_overflow(f->end_ns, m->offset_ns, end)) {
		return -ERANGE;
	}
	/* another host's clock, as the collectives they share say */
	if (__builtin_add_overflow(*start, m->skew_ns, start) ||
	    __builtin_add_overflow(*end, m->skew_ns, end))
		return -ERANGE;
	return 0;
}

int mf_file_at(const struct manifest *m, const struct mf_file *f, int64_t mono_ns, int64_t *real_ns)
{
	int64_t ws, we, d;
	int ret = mf_file_wallclock(m, f, &ws, &we);

	if (ret)
		return ret;
	if (__builtin_sub_overflow(mono_ns, f->start_ns, &d) || __builtin_add_overflow(d, ws, real_ns))
		return -ERANGE;
	return 0;
}

int64_t mf_node_offset(const struct manifest *m)
{
	int64_t v;

	if (__builtin_add_overflow(m->offset_ns, m->skew_ns, &v))
		return m->skew_ns > 0 ? INT64_MAX : INT64_MIN;
	return v;
}
