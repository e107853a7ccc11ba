// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * `fvbpf export` (hta_export.h): every trace the manifests list, paired by
 * step, linked into OUT/<region>/step<NNNN>/<who>.pt.trace.json[.gz].  The
 * manifests are untrusted: names come from their files[] entries (plain
 * names, opened beneath the directory's descriptor by manifest_read's
 * rules), the region is sanitised and may not be "." or "..", and every
 * path is made with *at() calls beneath OUT's descriptor, no '/' in any
 * component.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offline/export/hta_export.h"
#include "offline/manifest/manifest_read.h"
#include "offline/step_pairs.h"
#include "util/file/output_files.h"
#include "util/file/file_open.h"

#define COPY_MAX (64ull << 30)  /* a trace file larger than this is not copied */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

void hta_export_who(const struct manifest *m, size_t file, char *buf, size_t len)
{
	const struct mf_file *f = &m->files[file];

	if (f->pid_named)
		snprintf(buf, len, "rank%d_pid%d", f->rank, f->pid);
	else if (f->restart)
		snprintf(buf, len, "rank%d_restart%d", f->rank, f->restart);
	else
		snprintf(buf, len, "rank%d", f->rank);
}

/* A directory @name beneath @dirfd (made if missing, counted in @made),
 * opened: fd or -errno. */
static int subdir(int dirfd, const char *name, uint64_t *made)
{
	int fd;

	if (!mkdirat(dirfd, name, 0755))
		(*made)++;
	else if (errno != EEXIST)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int copy_fd(int in, int outdir, const char *name)
{
	char buf[1 << 16];
	ssize_t r, w, off;
	int out, ret = 0;

	out = openat(outdir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	while ((r = read(in, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		for (off = 0; off < r; off += w) {
			w = write(out, buf + off, (size_t)(r - off));
			if (w < 0) {
				if (errno == EINTR) {
					w = 0;
					continue;
				}
				ret = -errno;
				goto done;
			}
		}
	}
done:
	if (close(out) && !ret)
		ret = -errno;
	if (ret)
		unlinkat(outdir, name, 0);
	return ret;
}

/* The trace @f->trace of @m as @name beneath @stepfd: a hard link where
 * the filesystem allows, else a copy. */
static int place(const struct manifest *m, const struct mf_file *f, int stepfd, const char *name,
		 struct hta_export_stats *st)
{
	struct stat sb;
	int in, ret;

	in = open_regular_at(m->dirfd, f->trace, COPY_MAX, &sb);
	if (in < 0)
		return in;
	unlinkat(stepfd, name, 0); /* an export run again replaces its files */
	if (!linkat(in, "", stepfd, name, AT_EMPTY_PATH)) {
		st->linked++;
		close(in);
		return 0;
	}
	ret = copy_fd(in, stepfd, name);
	close(in);
	if (!ret)
		st->copied++;
	return ret;
}

/* The trace's extension in a step folder, or NULL when HTA cannot read it. */
static const char *trace_ext(const char *trace)
{
	if (ends_with(trace, ".json.gz"))
		return ".pt.trace.json.gz";
	if (ends_with(trace, ".json"))
		return ".pt.trace.json";
	return NULL;
}

/* The segments export places: a JSON trace of a process with a rank. */
static bool exportable(const struct manifest *m, const struct mf_file *f)
{
	(void)m;
	return f->trace[0] && f->rank >= 0 && trace_ext(f->trace);
}

/* What is left out before pairing, and why (each segment once). */
static void count_skipped(const struct manifest *ms, size_t n, bool with_uncounted,
			  struct hta_export_stats *st)
{
	const struct mf_file *f;
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < ms[i].nfiles; j++) {
			f = &ms[i].files[j];
			if (!f->have_summary || !f->trace[0])
				continue;
			if (!f->counted && !with_uncounted)
				continue; /* the pairing counts them */
			if (f->rank < 0)
				st->skipped_unranked++;
			else if (ends_with(f->trace, ".pftrace"))
				st->skipped_pftrace++;
			else if (!trace_ext(f->trace))
				st->skipped_other++;
		}
}

struct place_at {
	int outfd;
	const char *region;       /* the folder, sanitised */
	size_t number;            /* the step */
	int rfd, sfd;             /* opened as needed */
};

static int open_step(struct place_at *at, struct hta_export_stats *st, char *err, size_t errlen)
{
	char step[32];
	uint64_t regions = 0;

	if (at->sfd >= 0)
		return 0;
	if (at->rfd < 0) {
		at->rfd = subdir(at->outfd, at->region, &regions);
		if (at->rfd < 0) {
			snprintf(err, errlen, "cannot make the folder %s: %s", at->region,
				 strerror(-at->rfd));
			return at->rfd;
		}
	}
	snprintf(step, sizeof(step), "step%04zu", at->number);
	at->sfd = subdir(at->rfd, step, &st->steps);
	if (at->sfd < 0) {
		snprintf(err, errlen, "cannot make the folder %s/%s: %s", at->region, step,
			 strerror(-at->sfd));
		return at->sfd;
	}
	return 0;
}

/* Segment @i of the pairing as <who><ext> in its step's folder. */
static int export_one(const struct manifest *ms, const struct step_pairs *p, size_t i,
		      const bool *suffix, struct place_at *at, struct hta_export_stats *st,
		      char *err, size_t errlen)
{
	const struct sp_seg *g = &p->segs[i];
	const struct manifest *m = &ms[g->m];
	const struct mf_file *f = &m->files[g->f];
	char who[64], name[160];
	int ret;

	hta_export_who(m, g->f, who, sizeof(who));
	if (suffix[g->stream])
		snprintf(name, sizeof(name), "%s_dir%zu%s", who, g->m, trace_ext(f->trace));
	else
		snprintf(name, sizeof(name), "%s%s", who, trace_ext(f->trace));
	ret = open_step(at, st, err, errlen);
	if (ret)
		return ret;
	ret = place(m, f, at->sfd, name, st);
	if (ret) {
		snprintf(err, errlen, "%s/%s: cannot export it as %s/step%04zu/%s: %s", m->dir, f->trace,
			 at->region, at->number, name, ret == -ENOSPC ?
			 "no space left on the device" : strerror(-ret));
		return ret;
	}
	st->traces++;
	return 0;
}

/* Streams order by their file name's rank part; equal ones of two
 * directories get _dir<D>. */
static const struct manifest *who_ms;
static const struct step_pairs *who_p;

static int cmp_who(const void *x, const void *y)
{
	const struct sp_stream *a = &who_p->streams[*(const size_t *)x];
	const struct sp_stream *b = &who_p->streams[*(const size_t *)y];
	char wa[64], wb[64];

	hta_export_who(&who_ms[a->m], a->f, wa, sizeof(wa));
	hta_export_who(&who_ms[b->m], b->f, wb, sizeof(wb));
	return strcmp(wa, wb);
}

static void mark_suffixes(const struct manifest *ms, const struct step_pairs *p,
			 const struct sp_region *r, bool *suffix, size_t *tmp)
{
	char wa[64], wb[64];
	size_t i;

	for (i = 0; i < r->nstreams; i++)
		tmp[i] = r->first_stream + i;
	who_ms = ms;
	who_p = p;
	qsort(tmp, r->nstreams, sizeof(*tmp), cmp_who);
	for (i = 1; i < r->nstreams; i++) {
		hta_export_who(&ms[p->streams[tmp[i - 1]].m], p->streams[tmp[i - 1]].f, wa, sizeof(wa));
		hta_export_who(&ms[p->streams[tmp[i]].m], p->streams[tmp[i]].f, wb, sizeof(wb));
		if (!strcmp(wa, wb))
			suffix[tmp[i - 1]] = suffix[tmp[i]] = true;
	}
}

static int export_region(const struct manifest *ms, const struct step_pairs *p,
			 const struct sp_region *r, int outfd, bool *suffix, size_t *tmp,
			 struct hta_export_stats *st, char *err, size_t errlen)
{
	char region[96];
	struct place_at at = { .outfd = outfd, .region = region, .rfd = -1, .sfd = -1 };
	size_t s, i;
	int ret = 0;

	out_sanitize_name(region, sizeof(region), r->name[0] ? r->name : "segment");
	if (!region[0] || !strcmp(region, ".") || !strcmp(region, ".."))
		snprintf(region, sizeof(region), "_");
	mark_suffixes(ms, p, r, suffix, tmp);
	for (s = r->first_step; s < r->first_step + r->nsteps && !ret; s++) {
		at.number = p->steps[s].number;
		st->step_sets++;
		if (sp_missing(p, s, NULL, 0))
			st->steps_missing++;
		for (i = p->steps[s].first; i < p->steps[s].first + p->steps[s].n && !ret; i++)
			ret = export_one(ms, p, i, suffix, &at, st, err, errlen);
		if (at.sfd >= 0)
			close(at.sfd);
		at.sfd = -1;
	}
	if (at.rfd >= 0)
		close(at.rfd);
	return ret;
}

int hta_export(const struct manifest *ms, size_t n, int outfd, const struct hta_export_opts *o,
	       struct hta_export_stats *st, char *err, size_t errlen)
{
	struct sp_opts so = { .with_uncounted = o->with_uncounted, .keep = exportable };
	struct step_pairs p;
	bool *suffix = NULL;
	size_t *tmp = NULL, i;
	uint64_t bytes;
	int ret;

	count_skipped(ms, n, o->with_uncounted, st);
	ret = step_pairs_build(&p, ms, n, &so, o->budget);
	bytes = MF_ALLOC((p.nstreams ? p.nstreams : 1) * (sizeof(*suffix) + sizeof(*tmp)));
	if (!ret)
		ret = mf_charge(o->budget, bytes);
	if (ret) {
		if (ret == -ENOSPC)
			mf_budget_error(o->budget, err, errlen);
		else
			snprintf(err, errlen, "out of memory");
		step_pairs_free(&p, o->budget);
		return ret;
	}
	st->uncounted += p.uncounted;
	st->no_times += p.no_times;
	suffix = calloc(p.nstreams ? p.nstreams : 1, sizeof(*suffix));
	tmp = calloc(p.nstreams ? p.nstreams : 1, sizeof(*tmp));
	if (!suffix || !tmp) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
	}
	for (i = 0; i < p.nregions && !ret; i++)
		ret = export_region(ms, &p, &p.regions[i], outfd, suffix, tmp, st, err, errlen);
	free(suffix);
	free(tmp);
	mf_uncharge(o->budget, bytes);
	step_pairs_free(&p, o->budget);
	return ret;
}
