// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Spill files (user/output/spill.c): every field back as written; a file cut
 * short or changed is refused with -EINVAL, never followed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/spill.h"
#include "pipeline/memory/seg_memory.h"
#include "unit.h"

#define NREGIONS 20

static struct segment *sample(void)
{
	struct segment *s = calloc(1, sizeof(*s));
	size_t i;

	s->pid = 4242;
	s->seq = 17;
	s->region = 3;
	s->start_ns = 1000;
	s->end_ns = 987654321;
	s->incomplete = true;
	s->started_before_attach = true;
	s->truncated_by_memory = true;
	s->unbalanced = 5;
	s->forced = 6;
	s->drops = 7;
	s->gpu_missing = 8;
	s->gpu_clock = 2;
	s->cupti_dropped = 9;
	s->limits = (struct seg_limits){ .slices = 100, .calls = 200, .gpu = 300, .threads = 40 };
	s->slices_dropped = 10;
	s->calls_dropped = 11;
	s->gpu_dropped = 12;
	s->ops_dropped = 13;
	snprintf(s->gpu_status, sizeof(s->gpu_status), "cupti");
	s->nslices = s->cap = 3;
	s->slices = calloc(3, sizeof(*s->slices));
	for (i = 0; i < 3; i++)
		s->slices[i] = (struct seg_slice){ .tid = 100 + (uint32_t)i, .region = (uint32_t)i,
						   .start_ns = 10 * i, .end_ns = 10 * i + 5,
						   .depth = (uint32_t)i, .flags = SLICE_FORCED_CLOSE };
	s->ncalls = s->capcalls = 2;
	s->calls = calloc(2, sizeof(*s->calls));
	for (i = 0; i < 2; i++) {
		s->calls[i].tid = 7;
		s->calls[i].api_id = (uint32_t)i;
		s->calls[i].start_ns = 50 + i;
		s->calls[i].args[3] = 0xdeadbeef;
		s->calls[i].deref_len = 4;
		memcpy(s->calls[i].deref, "abcd", 4);
		s->calls[i].no_return = i == 1;
		s->calls[i].correlation = 99;
	}
	s->ngpu = s->capgpu = 1;
	s->gpu = calloc(1, sizeof(*s->gpu));
	s->gpu[0] = (struct gpu_activity){ .kind = 1, .correlation = 99, .start = 60, .end = 70,
					   .grid = { 1, 2, 3 }, .bytes = 4096, .call = 1 };
	s->nops = s->capops = 2;
	s->ops = calloc(2, sizeof(*s->ops));
	s->ops[0] = (struct torch_call){ .start_ns = 1, .end_ns = 2, .tid = 7, .name = 5, .kind = 1 };
	s->ops[1] = (struct torch_call){ .start_ns = 3, .tid = 7, .name = 6, .kind = 3,
					 .flags = TORCH_CALL_NO_RETURN };
	/* --profile-memory records: the trailer */
	s->memory = calloc(1, sizeof(*s->memory));
	s->memory->n = s->memory->cap = 2;
	s->memory->recs = calloc(2, sizeof(*s->memory->recs));
	s->memory->recs[0] = (struct mem_rec){ .ts_ns = 5, .addr = 0x1000, .bytes = 4096,
					       .total_allocated = 4096, .op = 1, .tid = 7 };
	s->memory->recs[1] = (struct mem_rec){ .ts_ns = 6, .addr = 0x1000, .bytes = -4096,
					       .op = -1, .tid = 7, .dev_type = 1 };
	s->memory->unknown_frees = 3;
	s->memory->table_full = 4;
	return s;
}

/* A spill file of @s in a fresh temporary file, at offset 0. */
static int spilled(const struct segment *s)
{
	FILE *f = tmpfile();
	int fd = dup(fileno(f));

	fclose(f);
	CHECK(spill_write_fd(fd, s) == 0);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void test_round_trip(void)
{
	struct segment *a = sample(), *b = NULL;
	int fd = spilled(a);

	CHECK_EQ(spill_read_fd(fd, NREGIONS, &b), 0);
	close(fd);
	if (!b)
		return;
	CHECK_EQ(b->pid, a->pid);
	CHECK_EQ(b->seq, a->seq);
	CHECK_EQ(b->region, a->region);
	CHECK_EQ(b->start_ns, a->start_ns);
	CHECK_EQ(b->end_ns, a->end_ns);
	CHECK_EQ(b->incomplete, a->incomplete);
	CHECK_EQ(b->lost_end, a->lost_end);
	CHECK_EQ(b->started_before_attach, a->started_before_attach);
	CHECK_EQ(b->truncated_by_memory, a->truncated_by_memory);
	CHECK_EQ(b->unbalanced, a->unbalanced);
	CHECK_EQ(b->forced, a->forced);
	CHECK_EQ(b->drops, a->drops);
	CHECK_EQ(b->gpu_missing, a->gpu_missing);
	CHECK_EQ(b->gpu_clock, a->gpu_clock);
	CHECK_EQ(b->cupti_dropped, a->cupti_dropped);
	CHECK_EQ(b->slices_dropped, a->slices_dropped);
	CHECK_EQ(b->calls_dropped, a->calls_dropped);
	CHECK_EQ(b->gpu_dropped, a->gpu_dropped);
	CHECK_EQ(b->ops_dropped, a->ops_dropped);
	CHECK(!memcmp(&b->limits, &a->limits, sizeof(a->limits)));
	CHECK_STR(b->gpu_status, a->gpu_status);
	CHECK_EQ(b->nslices, a->nslices);
	CHECK_EQ(b->ncalls, a->ncalls);
	CHECK_EQ(b->ngpu, a->ngpu);
	CHECK_EQ(b->nops, a->nops);
	CHECK(!memcmp(b->slices, a->slices, a->nslices * sizeof(*a->slices)));
	CHECK(!memcmp(b->calls, a->calls, a->ncalls * sizeof(*a->calls)));
	CHECK(!memcmp(b->gpu, a->gpu, a->ngpu * sizeof(*a->gpu)));
	CHECK(!memcmp(b->ops, a->ops, a->nops * sizeof(*a->ops)));
	CHECK(b->memory && b->memory->n == a->memory->n);
	if (b->memory) {
		CHECK(!memcmp(b->memory->recs, a->memory->recs,
			      a->memory->n * sizeof(*a->memory->recs)));
		CHECK_EQ(b->memory->unknown_frees, 3);
		CHECK_EQ(b->memory->table_full, 4);
	}
	CHECK(b->mem == NULL);
	CHECK_EQ(b->bytes, segment_bytes(b));
	segment_free(a);
	segment_free(b);
}

static void test_empty_segment(void)
{
	struct segment a = { .pid = 1, .region = 0 }, *b = NULL;
	int fd = spilled(&a);

	CHECK_EQ(spill_read_fd(fd, NREGIONS, &b), 0);
	close(fd);
	CHECK(b && b->nslices == 0 && !b->slices && !b->calls && !b->gpu && !b->ops && !b->memory);
	segment_free(b);
}

/* Every length short of the whole file is refused. */
static void test_truncated(void)
{
	struct segment *a = sample(), *b = NULL;
	int fd = spilled(a);
	off_t size = lseek(fd, 0, SEEK_END), cut;
	int bad = 0;

	for (cut = size - 1; cut >= 0; cut -= (cut > 64 ? 37 : 1)) {
		CHECK(ftruncate(fd, cut) == 0);
		lseek(fd, 0, SEEK_SET);
		if (spill_read_fd(fd, NREGIONS, &b) != -EINVAL)
			bad++;
	}
	CHECK_EQ(bad, 0);
	close(fd);
	segment_free(a);
}

/* Patch @len bytes at @off of a fresh spill of sample() and read it back. */
static int read_patched(size_t off, const void *bytes, size_t len, uint32_t nregions)
{
	struct segment *a = sample(), *b = NULL;
	int fd = spilled(a), ret;

	CHECK(pwrite(fd, bytes, len, (off_t)off) == (ssize_t)len);
	ret = spill_read_fd(fd, nregions, &b);
	close(fd);
	segment_free(a);
	segment_free(b);
	return ret;
}

static void test_corrupt(void)
{
	uint64_t huge = 1ULL << 40, one = 1;
	uint32_t v = 999;
	uint8_t two = 2;
	struct segment *s = sample();
	size_t hdr, slice_region, call_bool, trailer, size;
	int64_t bad_op = 2; /* the sample has 2 ops */
	int fd = spilled(s);

	/* the header's size: where the first slice starts; the memory trailer
	 * (magic, 6 counts, the records) ends the file */
	size = (size_t)lseek(fd, 0, SEEK_END);
	trailer = size - (8 + 6 * 8) - s->memory->n * sizeof(*s->memory->recs);
	hdr = trailer - s->nslices * sizeof(*s->slices) -
	      s->ncalls * sizeof(*s->calls) - s->ngpu * sizeof(*s->gpu) - s->nops * sizeof(*s->ops);
	close(fd);
	segment_free(s);
	slice_region = hdr + offsetof(struct seg_slice, region);
	call_bool = hdr + 3 * sizeof(struct seg_slice) + offsetof(struct api_call, no_return);
	CHECK_EQ(read_patched(0, "NOTSPILL", 8, NREGIONS), -EINVAL);         /* magic */
	CHECK_EQ(read_patched(8, &v, 4, NREGIONS), -EINVAL);                 /* version */
	CHECK_EQ(read_patched(0, "FVBPFSP1", 8, 3), -EINVAL);                /* region 3 of 3 */
	CHECK_EQ(read_patched(slice_region, &v, 4, NREGIONS), -EINVAL);      /* a slice's region */
	CHECK_EQ(read_patched(call_bool, &two, 1, NREGIONS), -EINVAL);       /* a bool of 2 */
	CHECK_EQ(read_patched(trailer, "NOTMEMRY", 8, NREGIONS), -EINVAL);  /* trailer magic */
	CHECK_EQ(read_patched(trailer + 16, &huge, 8, NREGIONS), -EINVAL);  /* its count */
	CHECK_EQ(read_patched(trailer + 56 + offsetof(struct mem_rec, op), &bad_op, 8, NREGIONS),
		 -EINVAL);                                                  /* a record's op */
	/* counts: the first count field holds nslices, after 4 + 11 32-bit
	 * fields and two 64-bit times */
	CHECK_EQ(read_patched(8 + 4 * 12 + 16, &huge, 8, NREGIONS), -EINVAL);
	CHECK_EQ(read_patched(8 + 4 * 12 + 16, &one, 8, NREGIONS), -EINVAL);
}

static void test_save_load(void)
{
	char dir[] = "/tmp/fvbpf-spill.XXXXXX", path[PATH_MAX];
	struct segment *a = sample(), *b = NULL;
	uint64_t bytes = 0;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_EQ(spill_save(dir, 7, a, &bytes), 0);
	CHECK(bytes > 0);
	CHECK_EQ(spill_path(path, sizeof(path), dir, 7), 0);
	CHECK(access(path, F_OK) == 0);
	CHECK_EQ(spill_save(dir, 7, a, &bytes), -EEXIST);  /* never over another file */
	CHECK_EQ(spill_load(dir, 7, NREGIONS, &b), 0);
	CHECK(access(path, F_OK) != 0);                    /* removed once read */
	CHECK(b && b->ncalls == 2 && b->calls[1].no_return);
	CHECK_EQ(spill_load(dir, 7, NREGIONS, &b), -ENOENT);
	/* a symlink in its place is not followed */
	CHECK(symlink("/etc/passwd", path) == 0);
	CHECK(spill_load(dir, 7, NREGIONS, &b) < 0);
	CHECK(faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) != 0);
	CHECK(access("/etc/passwd", F_OK) == 0);
	rmdir(dir);
	segment_free(a);
	segment_free(b);
}

int main(void)
{
	RUN(test_round_trip);
	RUN(test_empty_segment);
	RUN(test_truncated);
	RUN(test_corrupt);
	RUN(test_save_load);
	UNIT_DONE();
}
