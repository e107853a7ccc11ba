// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/spill.h"
#include "pipeline/memory/seg_memory.h"

#define SPILL_MAGIC "FVBPFSP1"
#define SPILL_VERSION 1u

enum {
	SPILL_INCOMPLETE = 0x1u,
	SPILL_LOST_END = 0x2u,
	SPILL_BEFORE_ATTACH = 0x4u,
	SPILL_TRUNCATED = 0x8u,
	SPILL_MEMORY = 0x10u,   /* a --profile-memory trailer follows the arrays */
	SPILL_NC_SHIFT = 5,     /* bits 5-6: enum seg_not_counted */
	SPILL_NC_MASK = 0x60u,
	SPILL_FLAGS = 0x7fu,
};
_Static_assert(SEG_WHY_COUNT <= (SPILL_NC_MASK >> SPILL_NC_SHIFT) + 1, "reasons fit the bits");

/* Fixed-width fields only: a bool read back from a file someone changed
 * must not be loaded as a bool before it is checked. */
struct spill_header {
	char magic[8];
	uint32_t version, header_size;
	uint32_t slice_size, call_size, gpu_size, op_size;
	uint32_t pid, seq, region, flags;
	int32_t gpu_clock;
	uint32_t pad;
	uint64_t start_ns, end_ns;
	uint64_t nslices, ncalls, ngpu, nops;
	uint64_t unbalanced, forced, drops, gpu_missing, cupti_dropped;
	uint64_t slices_dropped, calls_dropped, gpu_dropped, ops_dropped;
	uint64_t limits[4];
	char gpu_status[sizeof(((struct segment *)0)->gpu_status)];
};

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EINVAL; /* shorter than its header says */
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void header_fill(struct spill_header *h, const struct segment *s)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, SPILL_MAGIC, sizeof(h->magic));
	h->version = SPILL_VERSION;
	h->header_size = sizeof(*h);
	h->slice_size = sizeof(*s->slices);
	h->call_size = sizeof(*s->calls);
	h->gpu_size = sizeof(*s->gpu);
	h->op_size = sizeof(*s->ops);
	h->pid = s->pid;
	h->seq = s->seq;
	h->region = s->region;
	h->flags = (s->incomplete ? SPILL_INCOMPLETE : 0) | (s->lost_end ? SPILL_LOST_END : 0) |
		   (s->started_before_attach ? SPILL_BEFORE_ATTACH : 0) |
		   (s->truncated_by_memory ? SPILL_TRUNCATED : 0) | (s->memory ? SPILL_MEMORY : 0) |
		   ((uint32_t)s->not_counted << SPILL_NC_SHIFT & SPILL_NC_MASK);
	h->gpu_clock = s->gpu_clock;
	h->start_ns = s->start_ns;
	h->end_ns = s->end_ns;
	h->nslices = s->nslices;
	h->ncalls = s->ncalls;
	h->ngpu = s->ngpu;
	h->nops = s->nops;
	h->unbalanced = s->unbalanced;
	h->forced = s->forced;
	h->drops = s->drops;
	h->gpu_missing = s->gpu_missing;
	h->cupti_dropped = s->cupti_dropped;
	h->slices_dropped = s->slices_dropped;
	h->calls_dropped = s->calls_dropped;
	h->gpu_dropped = s->gpu_dropped;
	h->ops_dropped = s->ops_dropped;
	h->limits[0] = s->limits.slices;
	h->limits[1] = s->limits.calls;
	h->limits[2] = s->limits.gpu;
	h->limits[3] = s->limits.threads;
	memcpy(h->gpu_status, s->gpu_status, sizeof(h->gpu_status));
}

/*
 * --profile-memory records after the arrays: a trailer the header does not
 * count (a file without one has none), so the header's layout stays.
 */
#define SPILL_MEM_MAGIC "FVBPFSM1"
struct spill_mem_trailer {
	char magic[8];
	uint64_t rec_size, n;
	uint64_t over_limit, bad, unknown_frees, table_full;
};

static int memory_write(int fd, const struct seg_memory *m)
{
	struct spill_mem_trailer t = { .rec_size = sizeof(*m->recs), .n = m->n,
				       .over_limit = m->over_limit, .bad = m->bad,
				       .unknown_frees = m->unknown_frees,
				       .table_full = m->table_full };
	int ret;

	memcpy(t.magic, SPILL_MEM_MAGIC, sizeof(t.magic));
	ret = write_all(fd, &t, sizeof(t));
	if (!ret && m->n)
		ret = write_all(fd, m->recs, m->n * sizeof(*m->recs));
	return ret;
}

static int read_array(int fd, void **p, size_t n, size_t size);

/* The trailer of @left bytes, if any: the records and their op indexes
 * checked against @s's ops. */
static int memory_read(int fd, uint64_t left, bool has, struct segment *s)
{
	struct spill_mem_trailer t;
	struct seg_memory *m;
	size_t i;
	int ret;

	if (!has)
		return left ? -EINVAL : 0;
	if (left < sizeof(t))
		return -EINVAL;
	ret = read_all(fd, &t, sizeof(t));
	if (ret)
		return ret;
	if (memcmp(t.magic, SPILL_MEM_MAGIC, sizeof(t.magic)) || t.rec_size != sizeof(*m->recs) ||
	    t.n > MEM_SEG_MAX || left != sizeof(t) + t.n * sizeof(*m->recs))
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	s->memory = m; /* freed with the segment */
	m->over_limit = t.over_limit;
	m->bad = t.bad;
	m->unknown_frees = t.unknown_frees;
	m->table_full = t.table_full;
	ret = read_array(fd, (void **)&m->recs, t.n, sizeof(*m->recs));
	if (ret)
		return ret;
	m->n = m->cap = t.n;
	for (i = 0; i < m->n; i++)
		if (m->recs[i].op < -1 || m->recs[i].op >= (int64_t)s->nops)
			return -EINVAL;
	return 0;
}

int spill_write_fd(int fd, const struct segment *seg)
{
	struct spill_header h;
	int ret;

	header_fill(&h, seg);
	ret = write_all(fd, &h, sizeof(h));
	if (!ret && seg->nslices)
		ret = write_all(fd, seg->slices, seg->nslices * sizeof(*seg->slices));
	if (!ret && seg->ncalls)
		ret = write_all(fd, seg->calls, seg->ncalls * sizeof(*seg->calls));
	if (!ret && seg->ngpu)
		ret = write_all(fd, seg->gpu, seg->ngpu * sizeof(*seg->gpu));
	if (!ret && seg->nops)
		ret = write_all(fd, seg->ops, seg->nops * sizeof(*seg->ops));
	if (!ret && seg->memory)
		ret = memory_write(fd, seg->memory);
	return ret;
}

/* What no segment we wrote could hold.  The counts are bounded by the
 * per-segment limits, so the sizes below cannot overflow. */
static int header_check(const struct spill_header *h, uint64_t file_size, uint32_t nregions,
			uint64_t *left)
{
	uint64_t want;

	if (memcmp(h->magic, SPILL_MAGIC, sizeof(h->magic)) || h->version != SPILL_VERSION ||
	    h->header_size != sizeof(*h) || h->slice_size != sizeof(struct seg_slice) ||
	    h->call_size != sizeof(struct api_call) || h->gpu_size != sizeof(struct gpu_activity) ||
	    h->op_size != sizeof(struct torch_call) || (h->flags & ~(uint32_t)SPILL_FLAGS) ||
	    h->region >= nregions || !memchr(h->gpu_status, '\0', sizeof(h->gpu_status)))
		return -EINVAL;
	if (h->nslices > SEG_MAX_SLICES || h->ncalls > SEG_MAX_CALLS || h->ngpu > SEG_MAX_GPU ||
	    h->nops > SEG_MAX_OPS || h->limits[0] > SEG_MAX_SLICES ||
	    h->limits[1] > SEG_MAX_CALLS || h->limits[2] > SEG_MAX_GPU ||
	    h->limits[3] > SEG_MAX_THREADS)
		return -EINVAL;
	want = sizeof(*h) + h->nslices * sizeof(struct seg_slice) +
	       h->ncalls * sizeof(struct api_call) + h->ngpu * sizeof(struct gpu_activity) +
	       h->nops * sizeof(struct torch_call);
	if (want > file_size)
		return -EINVAL;
	*left = file_size - want; /* the memory trailer's bytes */
	return 0;
}

static void header_apply(struct segment *s, const struct spill_header *h)
{
	s->pid = h->pid;
	s->seq = h->seq;
	s->region = h->region;
	s->incomplete = h->flags & SPILL_INCOMPLETE;
	s->lost_end = h->flags & SPILL_LOST_END;
	s->started_before_attach = h->flags & SPILL_BEFORE_ATTACH;
	s->truncated_by_memory = h->flags & SPILL_TRUNCATED;
	s->not_counted = (uint8_t)((h->flags & SPILL_NC_MASK) >> SPILL_NC_SHIFT);
	s->gpu_clock = h->gpu_clock;
	s->start_ns = h->start_ns;
	s->end_ns = h->end_ns;
	s->unbalanced = h->unbalanced;
	s->forced = h->forced;
	s->drops = h->drops;
	s->gpu_missing = h->gpu_missing;
	s->cupti_dropped = h->cupti_dropped;
	s->slices_dropped = h->slices_dropped;
	s->calls_dropped = h->calls_dropped;
	s->gpu_dropped = h->gpu_dropped;
	s->ops_dropped = h->ops_dropped;
	s->limits = (struct seg_limits){ .slices = h->limits[0], .calls = h->limits[1],
					 .gpu = h->limits[2], .threads = h->limits[3] };
	memcpy(s->gpu_status, h->gpu_status, sizeof(s->gpu_status));
}

/* Read @n elements of @size into a new array (NULL for none). */
static int read_array(int fd, void **p, size_t n, size_t size)
{
	if (!n)
		return 0;
	*p = malloc(n * size);
	if (!*p)
		return -ENOMEM;
	return read_all(fd, *p, n * size);
}

/* The indexes the writers follow: every one inside what it indexes. */
static int arrays_check(const struct segment *s, uint32_t nregions)
{
	uint8_t b;
	size_t i;

	for (i = 0; i < s->nslices; i++)
		if (s->slices[i].region >= nregions)
			return -EINVAL;
	for (i = 0; i < s->ncalls; i++) {
		memcpy(&b, (const char *)&s->calls[i] + offsetof(struct api_call, no_return), 1);
		if (b > 1 || s->calls[i].deref_len > FVBPF_API_DEREF ||
		    s->calls[i].api_id >= cuda_api_count())
			return -EINVAL;
	}
	for (i = 0; i < s->ngpu; i++)
		if (s->gpu[i].call < -1 || s->gpu[i].call >= (int64_t)s->ncalls)
			return -EINVAL;
	for (i = 0; i < s->nops; i++)
		if (s->ops[i].kind < 1 || s->ops[i].kind > 3)
			return -EINVAL;
	return 0;
}

int spill_read_fd(int fd, uint32_t nregions, struct segment **out)
{
	struct spill_header h;
	struct segment *s;
	struct stat st;
	uint64_t left = 0;
	int ret;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(h))
		return -EINVAL;
	ret = read_all(fd, &h, sizeof(h));
	if (ret)
		return ret;
	ret = header_check(&h, (uint64_t)st.st_size, nregions, &left);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	header_apply(s, &h);
	s->nslices = s->cap = h.nslices;
	s->ncalls = s->capcalls = h.ncalls;
	s->ngpu = s->capgpu = h.ngpu;
	s->nops = s->capops = h.nops;
	ret = read_array(fd, (void **)&s->slices, s->nslices, sizeof(*s->slices));
	if (!ret)
		ret = read_array(fd, (void **)&s->calls, s->ncalls, sizeof(*s->calls));
	if (!ret)
		ret = read_array(fd, (void **)&s->gpu, s->ngpu, sizeof(*s->gpu));
	if (!ret)
		ret = read_array(fd, (void **)&s->ops, s->nops, sizeof(*s->ops));
	if (!ret)
		ret = arrays_check(s, nregions);
	if (!ret)
		ret = memory_read(fd, left, h.flags & SPILL_MEMORY, s);
	if (ret) {
		segment_free(s);
		return ret;
	}
	s->bytes = segment_bytes(s);
	*out = s;
	return 0;
}

int spill_path(char *buf, size_t len, const char *outdir, uint64_t n)
{
	int w = snprintf(buf, len, "%s/.spill_%llu.bin.tmp.%d", outdir, (unsigned long long)n,
			 (int)getpid());

	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

int spill_save(const char *outdir, uint64_t n, const struct segment *seg, uint64_t *bytes)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, ret;

	ret = spill_path(path, sizeof(path), outdir, n);
	if (ret)
		return ret;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = spill_write_fd(fd, seg);
	if (!ret && fstat(fd, &st))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (ret) {
		unlink(path);
		return ret;
	}
	*bytes = (uint64_t)st.st_size;
	return 0;
}

int spill_load(const char *outdir, uint64_t n, uint32_t nregions, struct segment **out)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, ret;

	ret = spill_path(path, sizeof(path), outdir, n);
	if (ret)
		return ret;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		unlink(path); /* a link put in its place: the link, not its target */
		return ret;
	}
	/* Someone who can write the directory may have put another file in
	 * its place: only ours, as we left it, is read. */
	if (fstat(fd, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1)
		ret = -EINVAL;
	else
		ret = spill_read_fd(fd, nregions, out);
	close(fd);
	unlink(path);
	return ret;
}
