// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The exact join of the agent's GPU records to the calls that caused them
 * (user/pipeline/gpu_join.c): record streams built by hand from include/fvbpf_gpu.h,
 * fed in chunks as BPF hands them over, against segments held here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probes/cuda_api.h"
#include "fvbpf_gpu.h"
#include "pipeline/gpu_join.h"
#include "util/name_table.h"
#include "pipeline/segment.h"
#include "unit.h"

/* ---- segments, held by seq as the consumer holds them ---- */

#define MAXSEG 8

struct store {
	struct segment *segs[MAXSEG];
	int finds;
};

static struct segment *find(void *ctx, uint32_t seq)
{
	struct store *s = ctx;
	int i;

	s->finds++;
	for (i = 0; i < MAXSEG; i++)
		if (s->segs[i] && s->segs[i]->seq == seq)
			return s->segs[i];
	return NULL;
}

static struct segment *seg_new(struct store *s, uint32_t seq)
{
	struct segment *seg = calloc(1, sizeof(*seg));
	int i;

	CHECK(seg != NULL);
	if (!seg)
		abort();
	seg->pid = 4242;
	seg->seq = seq;
	for (i = 0; i < MAXSEG; i++)
		if (!s->segs[i]) {
			s->segs[i] = seg;
			return seg;
		}
	abort();
}

/* The segment is written: find() no longer sees it. */
static void seg_drop(struct store *s, struct segment *seg)
{
	int i;

	for (i = 0; i < MAXSEG; i++)
		if (s->segs[i] == seg)
			s->segs[i] = NULL;
	segment_free(seg);
}

static void store_free(struct store *s)
{
	int i;

	for (i = 0; i < MAXSEG; i++)
		segment_free(s->segs[i]);
	memset(s, 0, sizeof(*s));
}

/* Appends a probed call; returns its index. */
static size_t add_call(struct segment *seg, const char *symbol, uint32_t corr)
{
	struct api_call c, *n;
	int id = cuda_api_find(symbol);

	CHECK(id >= 0);
	memset(&c, 0, sizeof(c));
	c.tid = 4243;
	c.api_id = id < 0 ? 0 : (uint32_t)id;
	c.correlation = corr;
	c.start_ns = 1000 * (seg->ncalls + 1);
	c.end_ns = c.start_ns + 500;
	if (seg->ncalls == seg->capcalls) {
		seg->capcalls = seg->capcalls ? seg->capcalls * 2 : 4;
		n = realloc(seg->calls, seg->capcalls * sizeof(*n));
		if (!n)
			abort();
		seg->calls = n;
	}
	seg->calls[seg->ncalls] = c;
	return seg->ncalls++;
}

/* add_call + what the consumer does with its correlation. */
static size_t add_noted(struct gpu_join *j, struct segment *seg, const char *symbol, uint32_t corr)
{
	size_t i = add_call(seg, symbol, corr);

	CHECK_EQ(gpu_join_note_call(j, corr, seg->seq, i), 0);
	return i;
}

/* ---- the record stream ---- */

struct stream {
	uint8_t b[16384] __attribute__((aligned(8)));
	size_t len;
};

static void *put(struct stream *s, size_t size)
{
	void *p = s->b + s->len;

	if (s->len + size > sizeof(s->b))
		abort();
	memset(p, 0, size);
	s->len += size;
	return p;
}

static void name_rec(struct stream *s, uint32_t id, const char *name)
{
	size_t n = strlen(name), size = (sizeof(struct fvbpf_gpu_hdr) + n + 1 + 7) & ~(size_t)7;
	struct fvbpf_gpu_name *r = put(s, size);

	r->hdr.kind = FVBPF_GPU_NAME;
	r->hdr.size = (uint16_t)size;
	r->hdr.correlation = id;
	memcpy(r->name, name, n);
}

static void span(struct fvbpf_gpu_span *sp, uint16_t kind, uint16_t size, uint32_t corr,
		 uint64_t start)
{
	sp->hdr.kind = kind;
	sp->hdr.size = size;
	sp->hdr.correlation = corr;
	sp->start = start;
	sp->end = start + 700;
	sp->device = 1;
	sp->context = 2;
	sp->stream = 7;
}

static struct fvbpf_gpu_kernel *kernel_rec(struct stream *s, uint32_t corr, uint32_t name_id,
					   uint64_t start)
{
	struct fvbpf_gpu_kernel *k = put(s, sizeof(*k));

	span(&k->s, FVBPF_GPU_KERNEL, sizeof(*k), corr, start);
	k->name_id = name_id;
	k->registers = 40;
	k->grid[0] = 64; k->grid[1] = 2; k->grid[2] = 1;
	k->block[0] = 128; k->block[1] = 4; k->block[2] = 1;
	k->static_smem = 2048;
	k->dynamic_smem = 4096;
	return k;
}

static void memcpy_rec(struct stream *s, uint32_t corr, uint64_t start, uint64_t bytes)
{
	struct fvbpf_gpu_memcpy *m = put(s, sizeof(*m));

	span(&m->s, FVBPF_GPU_MEMCPY, sizeof(*m), corr, start);
	m->bytes = bytes;
	m->copy_kind = 1; /* HtoD */
	m->src_kind = 1;
	m->dst_kind = 3;
}

static void memset_rec(struct stream *s, uint32_t corr, uint64_t start, uint64_t bytes)
{
	struct fvbpf_gpu_memset *m = put(s, sizeof(*m));

	span(&m->s, FVBPF_GPU_MEMSET, sizeof(*m), corr, start);
	m->bytes = bytes;
	m->value = 0;
}

static void sync_rec(struct stream *s, uint32_t corr, uint64_t start)
{
	struct fvbpf_gpu_sync *r = put(s, sizeof(*r));

	span(&r->s, FVBPF_GPU_SYNC, sizeof(*r), corr, start);
	r->type = 3;
}

static int feed(struct gpu_join *j, const struct stream *s)
{
	return gpu_join_chunk(j, s->b, s->len, true); /* a whole batch */
}

/* A chunk; an empty one only once something was buffered (see
 * test_empty_first_chunk). */
static int part(struct gpu_join *j, const uint8_t *data, size_t len)
{
	if (!len && !j->cap)
		return 0;
	return gpu_join_chunk(j, data, len, false); /* a piece of a batch */
}

static const char *kname(struct name_table *t, uint32_t id)
{
	static char buf[FVBPF_GPU_NAME_MAX + 8];

	name_table_get(t, id, buf, sizeof(buf));
	return buf;
}

/* ---- the tests ---- */

/* Each record lands on its call, with every field and the demangled name. */
static void test_join_fields(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	struct stream s = { .len = 0 };
	struct segment *seg;
	const struct gpu_activity *a;
	uint32_t other, stub;
	size_t malloc_i, launch, cpy, set;

	name_table_init(&names);
	/* session ids differ from the agent's */
	other = name_table_intern(&names, "some_other_kernel");
	stub = name_table_intern(&names, "host_stub_name");
	gpu_join_init(&j, &names, find, &st);
	seg = seg_new(&st, 3);
	malloc_i = add_noted(&j, seg, "cudaMalloc", 0);
	launch = add_noted(&j, seg, "cudaLaunchKernel", 10);
	seg->calls[launch].kernel = stub;
	cpy = add_noted(&j, seg, "cudaMemcpyAsync", 11);
	set = add_noted(&j, seg, "cudaMemsetAsync", 12);
	CHECK_EQ(gpu_join_missing(seg), 3);

	name_rec(&s, 1, "_Z5scalePffi");
	kernel_rec(&s, 10, 1, 5000);
	memcpy_rec(&s, 11, 6000, 1ull << 33);
	memset_rec(&s, 12, 7000, 4096);
	CHECK_EQ(feed(&j, &s), 0);

	CHECK_EQ(j.records, 4);
	CHECK_EQ(j.joined, 3);
	CHECK_EQ(j.outside, 0);
	CHECK_EQ(j.late, 0);
	CHECK_EQ(j.bad, 0);
	CHECK_EQ(seg->ngpu, 3);
	CHECK_EQ(gpu_join_missing(seg), 0);
	CHECK_EQ(seg->calls[malloc_i].gpu_records, 0);
	CHECK_EQ(seg->calls[launch].gpu_records, 1);
	CHECK_EQ(seg->calls[cpy].gpu_records, 1);
	CHECK_EQ(seg->calls[set].gpu_records, 1);
	/* CUPTI's name replaces the host stub's, as a session name */
	CHECK(seg->calls[launch].kernel != stub);
	CHECK(seg->calls[launch].kernel != other);
	CHECK(seg->calls[launch].kernel != 1);
	CHECK_STR(kname(&names, seg->calls[launch].kernel), "scale(float*, float, int)");
	CHECK_EQ(seg->calls[cpy].kernel, 0);
	CHECK_EQ(seg->calls[set].kernel, 0);

	if (seg->ngpu == 3) {
		a = &seg->gpu[0];
		CHECK_EQ(a->kind, FVBPF_GPU_KERNEL);
		CHECK_EQ(a->correlation, 10);
		CHECK_EQ(a->call, (int64_t)launch);
		CHECK_EQ(a->start, 5000);
		CHECK_EQ(a->end, 5700);
		CHECK_EQ(a->device, 1);
		CHECK_EQ(a->stream, 7);
		CHECK_EQ(a->name, seg->calls[launch].kernel);
		CHECK_EQ(a->registers, 40);
		CHECK_EQ(a->grid[0], 64);
		CHECK_EQ(a->grid[1], 2);
		CHECK_EQ(a->grid[2], 1);
		CHECK_EQ(a->block[0], 128);
		CHECK_EQ(a->block[1], 4);
		CHECK_EQ(a->block[2], 1);
		CHECK_EQ(a->static_smem, 2048);
		CHECK_EQ(a->dynamic_smem, 4096);
		CHECK_EQ(a->bytes, 0);

		a = &seg->gpu[1];
		CHECK_EQ(a->kind, FVBPF_GPU_MEMCPY);
		CHECK_EQ(a->correlation, 11);
		CHECK_EQ(a->call, (int64_t)cpy);
		CHECK_EQ(a->start, 6000);
		CHECK_EQ(a->end, 6700);
		CHECK_EQ(a->bytes, 1ull << 33);
		CHECK_EQ(a->copy_kind, 1);
		CHECK_EQ(a->name, 0);

		a = &seg->gpu[2];
		CHECK_EQ(a->kind, FVBPF_GPU_MEMSET);
		CHECK_EQ(a->correlation, 12);
		CHECK_EQ(a->call, (int64_t)set);
		CHECK_EQ(a->bytes, 4096);
		CHECK_EQ(a->start, 7000);
	}
	CHECK_EQ(st.finds, 3);

	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* One cudaGraphLaunch, many kernels of its correlation. */
static void test_graph(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	struct stream s = { .len = 0 };
	struct segment *seg;
	size_t g, sync, i;

	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	seg = seg_new(&st, 0);
	g = add_noted(&j, seg, "cudaGraphLaunch", 20);
	sync = add_noted(&j, seg, "cudaStreamSynchronize", 21);
	CHECK_EQ(gpu_join_missing(seg), 1);

	name_rec(&s, 1, "_Z3addPfS_");
	name_rec(&s, 2, "_Z4reluPf");
	kernel_rec(&s, 20, 1, 100);
	kernel_rec(&s, 20, 2, 200);
	kernel_rec(&s, 20, 1, 300);
	sync_rec(&s, 21, 400);
	CHECK_EQ(feed(&j, &s), 0);

	CHECK_EQ(j.records, 6);
	CHECK_EQ(j.joined, 4);
	CHECK_EQ(seg->ngpu, 4);
	CHECK_EQ(seg->calls[g].gpu_records, 3);
	CHECK_EQ(seg->calls[sync].gpu_records, 1);
	CHECK_EQ(gpu_join_missing(seg), 0);
	/* a graph is no launch: its call names no single kernel */
	CHECK_EQ(seg->calls[g].kernel, 0);
	for (i = 0; i < 3 && i < seg->ngpu; i++) {
		CHECK_EQ(seg->gpu[i].call, (int64_t)g);
		CHECK_EQ(seg->gpu[i].correlation, 20);
		CHECK_EQ(seg->gpu[i].start, 100 * (i + 1));
	}
	if (seg->ngpu == 4) {
		CHECK_STR(kname(&names, seg->gpu[0].name), "add(float*, float*)");
		CHECK_STR(kname(&names, seg->gpu[1].name), "relu(float*)");
		CHECK_EQ(seg->gpu[2].name, seg->gpu[0].name);
		CHECK_EQ(seg->gpu[3].kind, FVBPF_GPU_SYNC);
		CHECK_EQ(seg->gpu[3].call, (int64_t)sync);
	}
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* GPU records come in their own order, across segments. */
static void test_out_of_order(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	struct stream s = { .len = 0 };
	struct segment *s0, *s1;
	size_t a, b, c, d;

	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	s0 = seg_new(&st, 0);
	a = add_noted(&j, s0, "cudaLaunchKernel", 30);
	b = add_noted(&j, s0, "cudaMemcpyAsync", 31);
	c = add_noted(&j, s0, "cuLaunchKernel", 32);
	s1 = seg_new(&st, 1);
	d = add_noted(&j, s1, "cudaLaunchKernel", 33);

	name_rec(&s, 1, "_Z1kv");
	name_rec(&s, 2, "_Z1lv");
	kernel_rec(&s, 33, 2, 50);
	kernel_rec(&s, 32, 1, 40);
	kernel_rec(&s, 30, 2, 10);
	memcpy_rec(&s, 31, 20, 8);
	CHECK_EQ(feed(&j, &s), 0);
	CHECK_EQ(j.joined, 4);
	CHECK_EQ(s0->ngpu, 3);
	CHECK_EQ(s1->ngpu, 1);
	if (s0->ngpu == 3 && s1->ngpu == 1) {
		CHECK_EQ(s1->gpu[0].call, (int64_t)d);
		CHECK_EQ(s1->gpu[0].correlation, 33);
		CHECK_EQ(s0->gpu[0].call, (int64_t)c);
		CHECK_EQ(s0->gpu[1].call, (int64_t)a);
		CHECK_EQ(s0->gpu[2].call, (int64_t)b);
	}
	CHECK_STR(kname(&names, s0->calls[a].kernel), "l()");
	CHECK_STR(kname(&names, s0->calls[c].kernel), "k()");
	CHECK_STR(kname(&names, s1->calls[d].kernel), "l()");
	CHECK_EQ(s0->calls[b].gpu_records, 1);
	CHECK_EQ(gpu_join_missing(s0), 0);
	CHECK_EQ(gpu_join_missing(s1), 0);
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* The stream NAME KERNEL MEMCPY, cut into three chunks at every pair of
 * offsets (empty chunks included, though never as the very first one:
 * test_empty_first_chunk): records straddle chunks, nothing changes. */
static void test_split_chunks(void)
{
	struct name_table names;
	struct stream s = { .len = 0 };
	size_t x, y, bad = 0, runs = 0;

	name_table_init(&names);
	name_rec(&s, 1, "_Z5scalePffi");
	kernel_rec(&s, 10, 1, 5000);
	memcpy_rec(&s, 11, 6000, 12345);
	CHECK_EQ(s.len, 24 + 88 + 56);

	for (x = 0; x <= s.len; x++) {
		for (y = x; y <= s.len; y++) {
			struct gpu_join j;
			struct store st = { 0 };
			struct segment *seg = seg_new(&st, 9);
			size_t l, m;
			int ok = 1;

			gpu_join_init(&j, &names, find, &st);
			l = add_noted(&j, seg, "cudaLaunchKernel", 10);
			m = add_noted(&j, seg, "cudaMemcpy", 11);
			ok &= part(&j, s.b, x) == 0;
			ok &= part(&j, s.b + x, y - x) == 0;
			ok &= part(&j, s.b + y, s.len - y) == 0;
			ok &= j.records == 3 && j.joined == 2 && j.bad == 0 && j.len == 0;
			ok &= seg->ngpu == 2;
			if (seg->ngpu == 2) {
				ok &= seg->gpu[0].call == (int64_t)l && seg->gpu[0].start == 5000 &&
				      seg->gpu[0].grid[0] == 64 && seg->gpu[0].dynamic_smem == 4096;
				ok &= seg->gpu[1].call == (int64_t)m && seg->gpu[1].bytes == 12345;
				ok &= !strcmp(kname(&names, seg->gpu[0].name),
					      "scale(float*, float, int)");
			}
			ok &= seg->calls[l].gpu_records == 1 && seg->calls[m].gpu_records == 1;
			if (!ok && bad++ < 5)
				printf("# split at %zu, %zu: wrong join\n", x, y);
			runs++;
			gpu_join_free(&j);
			store_free(&st);
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(runs, (s.len + 1) * (s.len + 2) / 2);
	/* every run interned the same name */
	CHECK_EQ(names.n, 1);
	name_table_free(&names);
}

/* One byte at a time, a few hundred records (the buffer grows). */
static void test_bytewise(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	static struct stream s;
	struct segment *seg;
	size_t i;
	int err = 0;

	memset(&s, 0, sizeof(s));
	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	seg = seg_new(&st, 2);
	name_rec(&s, 7, "_Z6kernelv");
	for (i = 0; i < 150; i++) {
		add_noted(&j, seg, "cudaLaunchKernel", 100 + (uint32_t)i);
		kernel_rec(&s, 100 + (uint32_t)i, 7, 10 * i);
	}
	for (i = 0; i < s.len; i++)
		err |= gpu_join_chunk(&j, s.b + i, 1, false);
	CHECK_EQ(err, 0);
	CHECK_EQ(j.records, 151);
	CHECK_EQ(j.joined, 150);
	CHECK_EQ(seg->ngpu, 150);
	for (i = 0; i < seg->ngpu; i++) {
		CHECK_EQ(seg->gpu[i].call, (int64_t)i);
		CHECK_EQ(seg->calls[i].gpu_records, 1);
	}
	CHECK_STR(kname(&names, seg->calls[149].kernel), "kernel()");
	CHECK_EQ(gpu_join_missing(seg), 0);

	/* all at once, in a chunk larger than the first buffer (4 KiB) */
	j.joined = 0;
	for (i = 0; i < seg->ncalls; i++)
		seg->calls[i].gpu_records = 0;
	seg->ngpu = 0;
	CHECK(s.len > 8192);
	CHECK_EQ(feed(&j, &s), 0);
	CHECK_EQ(j.joined, 150);
	CHECK_EQ(j.len, 0);
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* No call for the correlation (or none at all): outside segments. */
static void test_outside(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	struct stream s = { .len = 0 };
	struct segment *seg;

	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	seg = seg_new(&st, 0);
	add_noted(&j, seg, "cudaLaunchKernel", 5);
	/* a call without correlation is not noted */
	CHECK_EQ(j.corrs.n, 1);
	CHECK_EQ(gpu_join_note_call(&j, 0, 0, 0), 0);
	CHECK_EQ(j.corrs.n, 1);
	kernel_rec(&s, 6, 0, 10);
	kernel_rec(&s, 0, 0, 20);
	memcpy_rec(&s, 123456, 30, 1);
	CHECK_EQ(feed(&j, &s), 0);
	CHECK_EQ(j.records, 3);
	CHECK_EQ(j.outside, 3);
	CHECK_EQ(j.joined, 0);
	CHECK_EQ(j.late, 0);
	CHECK_EQ(seg->ngpu, 0);
	CHECK_EQ(seg->calls[0].gpu_records, 0);
	CHECK_EQ(gpu_join_missing(seg), 1);
	CHECK_EQ(st.finds, 0);
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* The segment was written before its records came. */
static void test_late(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	struct stream s = { .len = 0 };
	struct segment *s0, *s1;

	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	s0 = seg_new(&st, 0);
	add_noted(&j, s0, "cudaLaunchKernel", 1);
	s1 = seg_new(&st, 1);
	add_noted(&j, s1, "cudaLaunchKernel", 2);
	seg_drop(&st, s0); /* written without forget: find() says NULL */
	kernel_rec(&s, 1, 0, 10);
	kernel_rec(&s, 2, 0, 20);
	CHECK_EQ(feed(&j, &s), 0);
	CHECK_EQ(j.late, 1);
	CHECK_EQ(j.joined, 1);
	CHECK_EQ(j.outside, 0);
	CHECK_EQ(s1->ngpu, 1);
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* After forget, records of the segment are late even while it is still
 * found; a correlation reused by a later segment is not forgotten. */
static void test_forget(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	struct stream s = { .len = 0 };
	struct segment *s0, *s1;
	size_t l0, m0, l1;

	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	s0 = seg_new(&st, 0);
	l0 = add_noted(&j, s0, "cudaLaunchKernel", 1);
	m0 = add_noted(&j, s0, "cudaMemcpy", 2);
	add_call(s0, "cudaMalloc", 0);
	s1 = seg_new(&st, 1);
	/* correlation 2 again (CUPTI wrapped, or another context) */
	l1 = add_noted(&j, s1, "cudaLaunchKernel", 2);
	CHECK_EQ(gpu_join_missing(s0), 2);

	gpu_join_forget(&j, s0);
	CHECK_EQ(gpu_join_missing(s0), 2); /* forget leaves the segment alone */
	kernel_rec(&s, 1, 0, 10);
	kernel_rec(&s, 2, 0, 20);
	CHECK_EQ(feed(&j, &s), 0);
	CHECK_EQ(j.late, 1);
	CHECK_EQ(j.joined, 1);
	CHECK_EQ(j.outside, 0);
	CHECK_EQ(s0->ngpu, 0);
	CHECK_EQ(s0->calls[l0].gpu_records, 0);
	CHECK_EQ(s0->calls[m0].gpu_records, 0);
	CHECK_EQ(s1->ngpu, 1);
	CHECK_EQ(s1->calls[l1].gpu_records, 1);

	/* forgetting twice, or a segment with no noted calls, is harmless */
	gpu_join_forget(&j, s0);
	gpu_join_forget(&j, s1);
	s.len = 0;
	kernel_rec(&s, 2, 0, 30);
	CHECK_EQ(feed(&j, &s), 0);
	CHECK_EQ(j.late, 2);
	CHECK_EQ(s1->ngpu, 1);
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* Two processes: the same correlation and name ids mean different things. */
static void test_two_processes(void)
{
	struct name_table names;
	struct gpu_join ja, jb;
	struct store sa = { 0 }, sb = { 0 };
	struct stream a = { .len = 0 }, b = { .len = 0 };
	struct segment *pa, *pb;
	size_t la, lb;

	name_table_init(&names);
	gpu_join_init(&ja, &names, find, &sa);
	gpu_join_init(&jb, &names, find, &sb);
	pa = seg_new(&sa, 0);
	pb = seg_new(&sb, 0);
	la = add_noted(&ja, pa, "cudaLaunchKernel", 1);
	add_noted(&ja, pa, "cudaMemcpy", 2);
	lb = add_noted(&jb, pb, "cudaLaunchKernel", 1);

	name_rec(&a, 1, "_Z5scalePffi");
	kernel_rec(&a, 1, 1, 10);
	name_rec(&b, 1, "_Z3addv");
	kernel_rec(&b, 1, 1, 20);
	memcpy_rec(&b, 2, 30, 64); /* process B has no correlation 2 */

	/* interleaved chunks, as one ring buffer delivers them */
	CHECK_EQ(gpu_join_chunk(&ja, a.b, 20, false), 0);
	CHECK_EQ(gpu_join_chunk(&jb, b.b, 12, false), 0);
	CHECK_EQ(gpu_join_chunk(&ja, a.b + 20, a.len - 20, true), 0);
	CHECK_EQ(gpu_join_chunk(&jb, b.b + 12, b.len - 12, true), 0);

	CHECK_EQ(ja.joined, 1);
	CHECK_EQ(jb.joined, 1);
	CHECK_EQ(jb.outside, 1);
	CHECK_EQ(pa->ngpu, 1);
	CHECK_EQ(pb->ngpu, 1);
	if (pa->ngpu == 1 && pb->ngpu == 1) {
		CHECK_EQ(pa->gpu[0].start, 10);
		CHECK_EQ(pb->gpu[0].start, 20);
		CHECK_STR(kname(&names, pa->gpu[0].name), "scale(float*, float, int)");
		CHECK_STR(kname(&names, pb->gpu[0].name), "add()");
	}
	CHECK_STR(kname(&names, pa->calls[la].kernel), "scale(float*, float, int)");
	CHECK_STR(kname(&names, pb->calls[lb].kernel), "add()");
	CHECK_EQ(gpu_join_missing(pa), 1); /* its memcpy record never came */
	CHECK_EQ(gpu_join_missing(pb), 0);
	CHECK_EQ(names.n, 2);
	gpu_join_free(&ja);
	gpu_join_free(&jb);
	store_free(&sa);
	store_free(&sb);
	name_table_free(&names);
}

/* Which calls count as missing their GPU record. */
static void test_missing(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	struct stream s = { .len = 0 };
	struct segment *seg;
	size_t nr;

	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	seg = seg_new(&st, 0);
	CHECK_EQ(gpu_join_missing(seg), 0);
	add_noted(&j, seg, "cudaLaunchKernel", 1);    /* expects */
	add_noted(&j, seg, "cudaMemcpy", 2);          /* expects */
	add_noted(&j, seg, "cudaMemset", 3);          /* expects */
	add_noted(&j, seg, "cudaMalloc", 4);          /* no GPU work */
	add_noted(&j, seg, "cudaStreamSynchronize", 5); /* no GPU work counted */
	add_call(seg, "cudaLaunchKernel", 0);         /* no correlation: agent off */
	nr = add_noted(&j, seg, "cuLaunchKernel", 6);
	seg->calls[nr].no_return = true;              /* the thread died inside */
	add_noted(&j, seg, "ncclAllReduce", 7);       /* NCCL kernels: no CUPTI expectation */
	add_noted(&j, seg, "cuGraphLaunch", 8);       /* expects */
	CHECK_EQ(gpu_join_missing(seg), 4);

	kernel_rec(&s, 1, 0, 10);
	CHECK_EQ(feed(&j, &s), 0);
	CHECK_EQ(gpu_join_missing(seg), 3);
	s.len = 0;
	memcpy_rec(&s, 2, 20, 1);
	memset_rec(&s, 3, 30, 1);
	kernel_rec(&s, 8, 0, 40);
	kernel_rec(&s, 6, 0, 50);  /* a no-return call's record still joins */
	CHECK_EQ(feed(&j, &s), 0);
	CHECK_EQ(gpu_join_missing(seg), 0);
	CHECK_EQ(seg->calls[nr].gpu_records, 1);
	CHECK_EQ(j.joined, 5);
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* A record that cannot be one: -EINVAL, counted, the stream starts over
 * and the next chunk joins again. */
static void test_garbage(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	struct stream s = { .len = 0 }, good = { .len = 0 };
	struct segment *seg;
	struct fvbpf_gpu_hdr *h;
	uint64_t joined;
	int i;

	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	seg = seg_new(&st, 0);
	add_noted(&j, seg, "cudaLaunchKernel", 1);
	kernel_rec(&good, 1, 0, 10);

	/* each a lone header: the check must not need the record's body */
	for (i = 0; i < 6; i++) {
		s.len = 0;
		h = put(&s, sizeof(*h));
		switch (i) {
		case 0: h->kind = FVBPF_GPU_KERNEL; h->size = 92; break;      /* not a multiple of 8 */
		case 1: h->kind = 99; h->size = 64; break;                    /* unknown kind */
		case 2: h->kind = FVBPF_GPU_KERNEL; h->size = 48; break;      /* shorter than a kernel */
		case 3: h->kind = FVBPF_GPU_MEMCPY; h->size = 0; break;       /* would never advance */
		case 4: h->kind = FVBPF_GPU_NAME; h->size = 8; break;         /* no room for a name */
		case 5: h->kind = 0; h->size = 16; break;
		}
		h->correlation = 1;
		joined = j.joined;
		CHECK_EQ(feed(&j, &s), -EINVAL);
		CHECK_EQ(j.bad, (uint64_t)i + 1);
		CHECK_EQ(j.len, 0);
		CHECK_EQ(j.joined, joined);
		CHECK_EQ(feed(&j, &good), 0);
		CHECK_EQ(j.joined, joined + 1);
	}
	CHECK_EQ(seg->ngpu, 6);
	CHECK_EQ(seg->calls[0].gpu_records, 6);

	/* A good record before the garbage in one chunk still joins; the
	 * rest of that chunk is dropped. */
	s.len = 0;
	kernel_rec(&s, 1, 0, 70);
	h = put(&s, 16);
	h->kind = 42;
	h->size = 16;
	kernel_rec(&s, 1, 0, 80);
	CHECK_EQ(feed(&j, &s), -EINVAL);
	CHECK_EQ(j.bad, 7);
	CHECK_EQ(seg->ngpu, 7);
	CHECK_EQ(seg->gpu[6].start, 70);

	/* A header cut between chunks: the record before it joins at once,
	 * the garbage shows when its header is whole. */
	s.len = 0;
	kernel_rec(&s, 1, 0, 90);
	h = put(&s, 16);
	h->kind = 99;
	h->size = 16;
	CHECK_EQ(gpu_join_chunk(&j, s.b, 88 + 4, false), 0);
	CHECK_EQ(seg->ngpu, 8);
	CHECK_EQ(j.len, 4);
	CHECK_EQ(gpu_join_chunk(&j, s.b + 92, s.len - 92, true), -EINVAL);
	CHECK_EQ(j.bad, 8);
	CHECK_EQ(j.len, 0);
	CHECK_EQ(feed(&j, &good), 0);
	CHECK_EQ(seg->ngpu, 9);
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* Name records: bounded by their size, demangled when mangled, cut when
 * too long; a kernel whose name never came has none. */
static void test_names(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	static struct stream s;
	struct segment *seg;
	struct fvbpf_gpu_name *r;
	char *longname;
	size_t i, n = 3000;

	memset(&s, 0, sizeof(s));
	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	seg = seg_new(&st, 0);
	for (i = 0; i < 5; i++)
		add_noted(&j, seg, "cudaLaunchKernel", 1 + (uint32_t)i);
	seg->calls[4].kernel = 77; /* the host stub's name, kept */

	/* 8 name bytes and no NUL inside the record */
	r = put(&s, 16);
	r->hdr.kind = FVBPF_GPU_NAME;
	r->hdr.size = 16;
	r->hdr.correlation = 1;
	memcpy(r->name, "ABCDEFGH", 8);
	kernel_rec(&s, 1, 1, 10);
	/* not mangled: as is */
	name_rec(&s, 2, "ampere_sgemm_128x64_nn");
	kernel_rec(&s, 2, 2, 20);
	/* longer than FVBPF_GPU_NAME_MAX */
	longname = malloc(n + 1);
	CHECK(longname != NULL);
	if (!longname)
		return;
	for (i = 0; i < n; i++)
		longname[i] = (char)('a' + i % 26);
	longname[n] = 0;
	name_rec(&s, 3, longname);
	kernel_rec(&s, 3, 3, 30);
	/* the same agent id announced again (after the agent reset its names) */
	name_rec(&s, 1, "_Z5scalePffi");
	kernel_rec(&s, 4, 1, 40);
	/* a name id that was never announced */
	kernel_rec(&s, 5, 9, 50);
	CHECK_EQ(feed(&j, &s), 0);

	CHECK_EQ(j.joined, 5);
	CHECK_STR(kname(&names, seg->calls[0].kernel), "ABCDEFGH");
	CHECK_STR(kname(&names, seg->calls[1].kernel), "ampere_sgemm_128x64_nn");
	CHECK_EQ(strlen(kname(&names, seg->calls[2].kernel)), FVBPF_GPU_NAME_MAX - 1);
	CHECK(!strncmp(kname(&names, seg->calls[2].kernel), longname, FVBPF_GPU_NAME_MAX - 1));
	CHECK_STR(kname(&names, seg->calls[3].kernel), "scale(float*, float, int)");
	CHECK_EQ(seg->calls[4].kernel, 77);
	CHECK_EQ(seg->calls[4].gpu_records, 1);
	if (seg->ngpu == 5)
		CHECK_EQ(seg->gpu[4].name, 0);
	free(longname);
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* Odd inputs: empty chunks, a call index past the segment's calls. */
static void test_edges(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	struct stream s = { .len = 0 };
	struct segment *seg;
	static const uint8_t nothing[8];

	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	seg = seg_new(&st, 0);
	add_call(seg, "cudaLaunchKernel", 1);
	CHECK_EQ(gpu_join_note_call(&j, 1, 0, 5), 0); /* no such call (yet) */
	kernel_rec(&s, 1, 0, 10);
	CHECK_EQ(gpu_join_chunk(&j, s.b, 8, false), 0);
	CHECK_EQ(gpu_join_chunk(&j, nothing, 0, false), 0);
	CHECK_EQ(gpu_join_chunk(&j, s.b + 8, s.len - 8, false), 0);
	CHECK_EQ(j.records, 1);
	CHECK_EQ(seg->ngpu, 1);
	if (seg->ngpu == 1)
		CHECK_EQ(seg->gpu[0].call, -1);
	CHECK_EQ(seg->calls[0].gpu_records, 0);
	gpu_join_free(&j);
	/* free twice (after init) is harmless */
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}


/* A target that sends endless kernel names: the first GPU_JOIN_MAX_NAMES
 * are kept, the rest counted; their kernels show no name. */
static void test_name_limit(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	static struct stream s;
	struct segment *seg;
	char name[32];
	uint32_t i;

	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	seg = seg_new(&st, 0);
	add_noted(&j, seg, "cudaLaunchKernel", 1);
	for (i = 1; i <= GPU_JOIN_MAX_NAMES + 10; i++) {
		memset(&s, 0, sizeof(s));
		snprintf(name, sizeof(name), "k%u", i);
		name_rec(&s, i, name);
		CHECK_EQ(feed(&j, &s), 0);
	}
	CHECK_EQ(j.nnames, GPU_JOIN_MAX_NAMES);
	CHECK_EQ(j.names_dropped, 10);
	CHECK_EQ(names.n, GPU_JOIN_MAX_NAMES);
	memset(&s, 0, sizeof(s));
	kernel_rec(&s, 1, GPU_JOIN_MAX_NAMES + 5, 10);
	CHECK_EQ(feed(&j, &s), 0);
	CHECK_EQ(seg->ngpu, 1);
	if (seg->ngpu == 1)
		CHECK_EQ(seg->gpu[0].name, 0);
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* Records past the segment's bound are counted by the join too. */
static void test_gpu_limit(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	static struct stream s;
	struct segment *seg;
	int i;

	memset(&s, 0, sizeof(s));
	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	seg = seg_new(&st, 0);
	seg->limits.gpu = 3;
	add_noted(&j, seg, "cudaGraphLaunch", 1);
	for (i = 0; i < 5; i++)
		kernel_rec(&s, 1, 0, 10 + (uint64_t)i);
	CHECK_EQ(feed(&j, &s), 0);
	CHECK_EQ(j.records, 5);
	CHECK_EQ(j.joined, 3);
	CHECK_EQ(j.over_limit, 2);
	CHECK_EQ(seg->ngpu, 3);
	CHECK_EQ(seg->gpu_dropped, 2);
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/*
 * BPF sends a chunk of length 0 when it could not read the agent's batch;
 * it may be the first of its process.  Nothing is buffered yet then
 * (j->buf == NULL): the chunk must be a no-op, not memcpy(NULL, data, 0),
 * which is undefined (UBSan stops the sanitizer build here).  Last, since
 * that build aborts.
 */
static void test_empty_first_chunk(void)
{
	struct name_table names;
	struct gpu_join j;
	struct store st = { 0 };
	struct stream s = { .len = 0 };
	struct segment *seg;
	static const uint8_t nothing[8];

	name_table_init(&names);
	gpu_join_init(&j, &names, find, &st);
	seg = seg_new(&st, 0);
	add_noted(&j, seg, "cudaLaunchKernel", 1);
	CHECK_EQ(gpu_join_chunk(&j, nothing, 0, false), 0);
	CHECK_EQ(j.records, 0);
	CHECK_EQ(j.len, 0);
	kernel_rec(&s, 1, 0, 10);
	CHECK_EQ(feed(&j, &s), 0);
	CHECK_EQ(j.joined, 1);
	CHECK_EQ(seg->ngpu, 1);
	gpu_join_free(&j);
	store_free(&st);
	name_table_free(&names);
}

/* A lost chunk in the middle of a batch: the rest of the batch is skipped,
 * the next batch joins; a batch that ends inside a record is counted. */
static void test_resync_at_batch_end(void)
{
	struct name_table names;
	struct gpu_join j;
	struct fvbpf_gpu_hdr bad = { .kind = 99, .size = 8, .correlation = 0 };
	struct fvbpf_gpu_kernel k;

	name_table_init(&names);
	gpu_join_init(&j, &names, NULL, NULL);
	memset(&k, 0, sizeof(k));
	k.s.hdr.kind = FVBPF_GPU_KERNEL;
	k.s.hdr.size = sizeof(k);
	k.s.hdr.correlation = 77; /* unknown: counted as outside when parsed */
	CHECK_EQ(gpu_join_chunk(&j, (const uint8_t *)&bad, sizeof(bad), false), -EINVAL);
	CHECK(j.resync);
	/* still the broken batch: dropped unparsed */
	CHECK_EQ(gpu_join_chunk(&j, (const uint8_t *)&k, sizeof(k), false), 0);
	CHECK_EQ(j.records, 0);
	CHECK_EQ(gpu_join_chunk(&j, (const uint8_t *)&k, sizeof(k), true), 0);
	CHECK(!j.resync);
	CHECK_EQ(j.records, 0);
	/* the next batch is parsed */
	CHECK_EQ(gpu_join_chunk(&j, (const uint8_t *)&k, sizeof(k), true), 0);
	CHECK_EQ(j.records, 1);
	CHECK_EQ(j.outside, 1);
	/* a batch ending in the middle of a record: counted, dropped */
	CHECK_EQ(gpu_join_chunk(&j, (const uint8_t *)&k, 40, true), -EINVAL);
	CHECK_EQ(j.bad, 2);
	CHECK_EQ(j.len, 0);
	CHECK_EQ(gpu_join_chunk(&j, (const uint8_t *)&k, sizeof(k), true), 0);
	CHECK_EQ(j.records, 2);
	gpu_join_free(&j);
	name_table_free(&names);
}

int main(void)
{
	/* TAP lines survive a sanitizer abort */
	setvbuf(stdout, NULL, _IOLBF, 0);
	RUN(test_join_fields);
	RUN(test_graph);
	RUN(test_out_of_order);
	RUN(test_split_chunks);
	RUN(test_bytewise);
	RUN(test_outside);
	RUN(test_late);
	RUN(test_forget);
	RUN(test_two_processes);
	RUN(test_missing);
	RUN(test_garbage);
	RUN(test_names);
	RUN(test_edges);
	RUN(test_name_limit);
	RUN(test_gpu_limit);
	RUN(test_empty_first_chunk);
	RUN(test_resync_at_batch_end);
	UNIT_DONE();
}
