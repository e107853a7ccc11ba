// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * `fvbpf export` (hta_export.h): every trace a manifest lists, linked into
 * OUT/<region>/step<NNNN>/<who>.pt.trace.json[.gz].  The manifest is
 * untrusted: names come from its files[] entries (plain names, opened
 * beneath the directory's descriptor by manifest_read's rules), the region
 * is sanitised and may not be "." or "..", and every path is made with
 * *at() calls beneath OUT's descriptor, no '/' in any component.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offline/hta_export.h"
#include "offline/manifest_read.h"
#include "output/output_files.h"
#include "util/file_open.h"

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

static int export_one(const struct manifest *m, size_t i, int outfd, struct hta_export_stats *st,
		      char *err, size_t errlen)
{
	const struct mf_file *f = &m->files[i];
	char region[96], step[32], who[64], name[128];
	int rfd = -1, sfd = -1, ret;
	uint64_t regions = 0;
	const char *ext;

	if (!f->trace || !*f->trace)
		return 0;
	if (f->rank < 0) {
		st->skipped_unranked++;
		return 0;
	}
	if (ends_with(f->trace, ".json.gz"))
		ext = ".pt.trace.json.gz";
	else if (ends_with(f->trace, ".json"))
		ext = ".pt.trace.json";
	else {
		if (ends_with(f->trace, ".pftrace"))
			st->skipped_pftrace++;
		else
			st->skipped_other++;
		return 0;
	}
	out_sanitize_name(region, sizeof(region), f->region ? f->region : "segment");
	if (!region[0] || !strcmp(region, ".") || !strcmp(region, ".."))
		snprintf(region, sizeof(region), "_");
	snprintf(step, sizeof(step), "step%04llu", (unsigned long long)f->segment);
	hta_export_who(m, i, who, sizeof(who));
	snprintf(name, sizeof(name), "%s%s", who, ext);
	rfd = subdir(outfd, region, &regions);
	if (rfd < 0) {
		ret = rfd;
		snprintf(err, errlen, "cannot make the folder %s: %s", region, strerror(-ret));
		return ret;
	}
	sfd = subdir(rfd, step, &st->steps);
	if (sfd < 0) {
		ret = sfd;
		snprintf(err, errlen, "cannot make the folder %s/%s: %s", region, step, strerror(-ret));
		goto out;
	}
	ret = place(m, f, sfd, name, st);
	if (ret) {
		snprintf(err, errlen, "%s/%s: cannot export it as %s/%s/%s: %s", m->dir, f->trace,
			 region, step, name, ret == -ENOSPC ? "no space left on the device" :
			 strerror(-ret));
		goto out;
	}
	st->traces++;
out:
	if (sfd >= 0)
		close(sfd);
	close(rfd);
	return ret;
}

int hta_export(const struct manifest *m, int outfd, struct hta_export_stats *st, char *err,
	       size_t errlen)
{
	size_t i;
	int ret;

	for (i = 0; i < m->nfiles; i++) {
		ret = export_one(m, i, outfd, st, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}
