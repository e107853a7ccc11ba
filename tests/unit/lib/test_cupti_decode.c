// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The agent's CUPTI record decoder: activity buffers built by hand from the
 * real cupti_activity.h structs (the sizes of this CUPTI: Kernel10,
 * Memcpy6, Memset4, Synchronization2), walked by the real libcupti's
 * cuptiActivityGetNextRecord, which works without a GPU.  Without libcupti
 * every test is reported as skipped.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cupti_activity.h>

#include "cupti_decode.h"
#include "unit.h"

#ifndef CUPTI_LIB
#define CUPTI_LIB "/usr/local/cuda/lib64/libcupti.so.13"
#endif

static void *cupti_dl;
static cupti_next_record_fn next_fn;

/* ---- what the decoder emits ---- */

#define OUT_MAX 64

struct out {
	uint8_t *rec[OUT_MAX];
	size_t size[OUT_MAX];
	size_t n;
	int bad_size;       /* a record whose size is not a multiple of 8 or not hdr.size */
	int overflow;
};

static void collect(const void *rec, size_t size, void *ctx)
{
	struct out *o = ctx;
	const struct fvbpf_gpu_hdr *h = rec;

	if (size < sizeof(*h) || size % 8 || h->size != size)
		o->bad_size++;
	if (o->n == OUT_MAX) {
		o->overflow++;
		return;
	}
	o->rec[o->n] = malloc(size);
	if (!o->rec[o->n]) {
		o->overflow++;
		return;
	}
	memcpy(o->rec[o->n], rec, size);
	o->size[o->n++] = size;
}

static void out_clear(struct out *o)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		free(o->rec[i]);
	memset(o, 0, sizeof(*o));
}

static uint16_t kind_at(const struct out *o, size_t i)
{
	return i < o->n ? ((const struct fvbpf_gpu_hdr *)o->rec[i])->kind : 0;
}

static const struct fvbpf_gpu_kernel *kernel_at(const struct out *o, size_t i)
{
	static const struct fvbpf_gpu_kernel zero;

	CHECK_EQ(kind_at(o, i), FVBPF_GPU_KERNEL);
	CHECK(i >= o->n || o->size[i] == sizeof(struct fvbpf_gpu_kernel));
	return kind_at(o, i) == FVBPF_GPU_KERNEL ? (const void *)o->rec[i] : &zero;
}

static const struct fvbpf_gpu_name *name_at(const struct out *o, size_t i)
{
	static const struct { struct fvbpf_gpu_hdr h; char s[8]; } zero;

	CHECK_EQ(kind_at(o, i), FVBPF_GPU_NAME);
	return kind_at(o, i) == FVBPF_GPU_NAME ? (const void *)o->rec[i] : (const void *)&zero;
}

static void decoder_init(struct cupti_decoder *d, struct out *o, int64_t offset)
{
	memset(d, 0, sizeof(*d));
	memset(o, 0, sizeof(*o));
	d->next = next_fn;
	d->clock_offset = offset;
	d->emit = collect;
	d->ctx = o;
}

static void decoder_done(struct cupti_decoder *d, struct out *o)
{
	cupti_decoder_reset_names(d);
	out_clear(o);
}

/* ---- activity buffers, as CUPTI fills them ---- */

struct abuf {
	uint8_t b[8192] __attribute__((aligned(8)));
	size_t len;
	size_t off[32];     /* where each record starts */
	size_t n;
};

static void put(struct abuf *a, const void *rec, size_t size)
{
	CHECK(a->len + size <= sizeof(a->b));
	if (a->len + size > sizeof(a->b))
		return;
	a->off[a->n++] = a->len;
	memcpy(a->b + a->len, rec, size);
	a->len += (size + 7) & ~(size_t)7;
}

static const char NAME1[] = "_Z5scalePffi";
static const char NAME2[] = "_ZN2fv4tmplILi7EEEvPi";

static CUpti_ActivityKernel10 kernel_rec(CUpti_ActivityKind kind, const char *name, uint32_t corr,
					 uint64_t start)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = kind;
	k.name = name;
	k.correlationId = corr;
	k.start = start;
	k.end = start + 5000;
	k.deviceId = 1;
	k.contextId = 2;
	k.streamId = 7;
	k.gridX = 8; k.gridY = 4; k.gridZ = 2;
	k.blockX = 256; k.blockY = 2; k.blockZ = 1;
	k.registersPerThread = 32;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 128;
	return k;
}

/*
 * K1 K2 (same name) API K3 (another name, CUPTI_ACTIVITY_KIND_KERNEL)
 * MEMCPY MARKER MEMSET SYNC: 8 records, 2 of kinds fvbpf skips.
 */
static void build_mixed(struct abuf *a)
{
	CUpti_ActivityKernel10 k;
	CUpti_ActivityAPI api;
	CUpti_ActivityMemcpy6 m;
	CUpti_ActivityMarker2 mk;
	CUpti_ActivityMemset4 ms;
	CUpti_ActivitySynchronization2 s;

	memset(a, 0, sizeof(*a));
	k = kernel_rec(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, NAME1, 101, 1000000);
	put(a, &k, sizeof(k));
	k = kernel_rec(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, NAME1, 102, 2000000);
	k.deviceId = 3;
	k.contextId = 4;
	k.streamId = 13;
	k.gridX = 1; k.gridY = 1; k.gridZ = 1;
	k.blockX = 32; k.blockY = 32; k.blockZ = 1;
	k.registersPerThread = 255;
	k.staticSharedMemory = 0;
	k.dynamicSharedMemory = 49152;
	put(a, &k, sizeof(k));

	memset(&api, 0, sizeof(api));
	api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	api.correlationId = 103;
	api.start = 2500000;
	api.end = 2600000;
	put(a, &api, sizeof(api));

	k = kernel_rec(CUPTI_ACTIVITY_KIND_KERNEL, NAME2, 104, 3000000);
	k.graphId = 77;
	put(a, &k, sizeof(k));

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = 1ull << 33; /* 8 GiB: a 64-bit count */
	m.start = 4000000;
	m.end = 4100000;
	m.deviceId = 1;
	m.contextId = 2;
	m.streamId = 8;
	m.correlationId = 105;
	put(a, &m, sizeof(m));

	memset(&mk, 0, sizeof(mk));
	mk.kind = CUPTI_ACTIVITY_KIND_MARKER;
	mk.timestamp = 4200000;
	mk.name = "a marker";
	put(a, &mk, sizeof(mk));

	memset(&ms, 0, sizeof(ms));
	ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	ms.value = 0xab;
	ms.bytes = 4096;
	ms.start = 5000000;
	ms.end = 5000500;
	ms.deviceId = 1;
	ms.contextId = 2;
	ms.streamId = 9;
	ms.correlationId = 106;
	put(a, &ms, sizeof(ms));

	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = 6000000;
	s.end = 6100000;
	s.correlationId = 107;
	s.contextId = 2;
	s.streamId = 9;
	put(a, &s, sizeof(s));
}

/* @n bytes of @src at the end of a page followed by an inaccessible one:
 * reading past them faults, in libcupti as in the decoder. */
struct guarded {
	uint8_t *map, *buf;
	size_t maplen;
};

static int guard(struct guarded *g, const void *src, size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), data = (n + pg - 1) / pg * pg;

	memset(g, 0, sizeof(*g));
	g->maplen = data + pg;
	g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED) {
		g->map = NULL;
		return -1;
	}
	if (mprotect(g->map + data, pg, PROT_NONE))
		return -1;
	g->buf = g->map + data - n;
	memcpy(g->buf, src, n);
	return 0;
}

static void unguard(struct guarded *g)
{
	if (g->map)
		munmap(g->map, g->maplen);
}

/* ---- the tests ---- */

static void check_sizes(const struct out *o)
{
	CHECK_EQ(o->bad_size, 0);
	CHECK_EQ(o->overflow, 0);
}

/* The whole mixed buffer: names first and once, every field, offset applied. */
static void test_mixed_buffer(void)
{
	struct cupti_decoder d;
	struct out o;
	struct abuf a;
	const struct fvbpf_gpu_kernel *k;
	const struct fvbpf_gpu_memcpy *m;
	const struct fvbpf_gpu_memset *ms;
	const struct fvbpf_gpu_sync *s;
	const struct fvbpf_gpu_name *nm;
	long n;

	build_mixed(&a);
	CHECK_EQ(a.len, 216 * 3 + 40 + 96 + 56 + 88 + 56);
	decoder_init(&d, &o, 1000);
	n = cupti_decode_buffer(&d, a.b, a.len);
	CHECK_EQ(n, 8);
	CHECK_EQ(d.records, 8);
	CHECK_EQ(d.skipped, 2);
	check_sizes(&o);

	/* NAME 1, KERNEL, KERNEL (no second NAME), NAME 2, KERNEL, MEMCPY, MEMSET, SYNC */
	CHECK_EQ(o.n, 8);
	CHECK_EQ(kind_at(&o, 0), FVBPF_GPU_NAME);
	CHECK_EQ(kind_at(&o, 1), FVBPF_GPU_KERNEL);
	CHECK_EQ(kind_at(&o, 2), FVBPF_GPU_KERNEL);
	CHECK_EQ(kind_at(&o, 3), FVBPF_GPU_NAME);
	CHECK_EQ(kind_at(&o, 4), FVBPF_GPU_KERNEL);
	CHECK_EQ(kind_at(&o, 5), FVBPF_GPU_MEMCPY);
	CHECK_EQ(kind_at(&o, 6), FVBPF_GPU_MEMSET);
	CHECK_EQ(kind_at(&o, 7), FVBPF_GPU_SYNC);

	nm = name_at(&o, 0);
	CHECK_EQ(nm->hdr.correlation, 1);
	CHECK_STR(nm->name, NAME1);
	CHECK_EQ(nm->hdr.size, (8 + sizeof(NAME1) + 7) / 8 * 8);
	nm = name_at(&o, 3);
	CHECK_EQ(nm->hdr.correlation, 2);
	CHECK_STR(nm->name, NAME2);
	CHECK_EQ(nm->hdr.size, (8 + sizeof(NAME2) + 7) / 8 * 8);
	CHECK_EQ(d.names.n, 2);

	k = kernel_at(&o, 1);
	CHECK_EQ(k->s.hdr.size, sizeof(*k));
	CHECK_EQ(k->s.hdr.correlation, 101);
	CHECK_EQ(k->name_id, 1);
	CHECK_EQ(k->s.start, 1000000 + 1000);
	CHECK_EQ(k->s.end, 1005000 + 1000);
	CHECK_EQ(k->s.device, 1);
	CHECK_EQ(k->s.context, 2);
	CHECK_EQ(k->s.stream, 7);
	CHECK_EQ(k->grid[0], 8);
	CHECK_EQ(k->grid[1], 4);
	CHECK_EQ(k->grid[2], 2);
	CHECK_EQ(k->block[0], 256);
	CHECK_EQ(k->block[1], 2);
	CHECK_EQ(k->block[2], 1);
	CHECK_EQ(k->registers, 32);
	CHECK_EQ(k->static_smem, 1024);
	CHECK_EQ(k->dynamic_smem, 128);
	CHECK_EQ(k->graph_id, 0);
	CHECK_EQ(k->s.pad, 0);
	CHECK_EQ(k->pad, 0);

	k = kernel_at(&o, 2);
	CHECK_EQ(k->s.hdr.correlation, 102);
	CHECK_EQ(k->name_id, 1);
	CHECK_EQ(k->s.start, 2001000);
	CHECK_EQ(k->s.end, 2006000);
	CHECK_EQ(k->s.device, 3);
	CHECK_EQ(k->s.context, 4);
	CHECK_EQ(k->s.stream, 13);
	CHECK_EQ(k->grid[0], 1);
	CHECK_EQ(k->block[0], 32);
	CHECK_EQ(k->block[1], 32);
	CHECK_EQ(k->registers, 255);
	CHECK_EQ(k->static_smem, 0);
	CHECK_EQ(k->dynamic_smem, 49152);

	k = kernel_at(&o, 4);   /* CUPTI_ACTIVITY_KIND_KERNEL, same layout */
	CHECK_EQ(k->s.hdr.correlation, 104);
	CHECK_EQ(k->name_id, 2);
	CHECK_EQ(k->s.start, 3001000);
	CHECK_EQ(k->graph_id, 77);

	m = kind_at(&o, 5) == FVBPF_GPU_MEMCPY ? (const void *)o.rec[5] : NULL;
	CHECK(m != NULL);
	if (m) {
		CHECK_EQ(o.size[5], sizeof(*m));
		CHECK_EQ(m->s.hdr.correlation, 105);
		CHECK_EQ(m->s.start, 4001000);
		CHECK_EQ(m->s.end, 4101000);
		CHECK_EQ(m->s.device, 1);
		CHECK_EQ(m->s.context, 2);
		CHECK_EQ(m->s.stream, 8);
		CHECK_EQ(m->bytes, 1ull << 33);
		CHECK_EQ(m->copy_kind, 1); /* HtoD */
		CHECK_EQ(m->src_kind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
		CHECK_EQ(m->dst_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
	}

	ms = kind_at(&o, 6) == FVBPF_GPU_MEMSET ? (const void *)o.rec[6] : NULL;
	CHECK(ms != NULL);
	if (ms) {
		CHECK_EQ(o.size[6], sizeof(*ms));
		CHECK_EQ(ms->s.hdr.correlation, 106);
		CHECK_EQ(ms->s.start, 5001000);
		CHECK_EQ(ms->s.end, 5001500);
		CHECK_EQ(ms->s.device, 1);
		CHECK_EQ(ms->s.context, 2);
		CHECK_EQ(ms->s.stream, 9);
		CHECK_EQ(ms->bytes, 4096);
		CHECK_EQ(ms->value, 0xab);
	}

	s = kind_at(&o, 7) == FVBPF_GPU_SYNC ? (const void *)o.rec[7] : NULL;
	CHECK(s != NULL);
	if (s) {
		CHECK_EQ(o.size[7], sizeof(*s));
		CHECK_EQ(s->s.hdr.correlation, 107);
		CHECK_EQ(s->s.start, 6001000);
		CHECK_EQ(s->s.end, 6101000);
		CHECK_EQ(s->s.context, 2);
		CHECK_EQ(s->s.stream, 9);
		CHECK_EQ(s->type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
	}
	decoder_done(&d, &o);
}

/* Offsets move every timestamp, backwards too; counters add up over buffers. */
static void test_clock_offset(void)
{
	struct cupti_decoder d;
	struct out o;
	struct abuf a;

	build_mixed(&a);
	decoder_init(&d, &o, -500000);
	CHECK_EQ(cupti_decode_buffer(&d, a.b, a.len), 8);
	check_sizes(&o);
	CHECK_EQ(o.n, 8);
	CHECK_EQ(kernel_at(&o, 1)->s.start, 500000);
	CHECK_EQ(kernel_at(&o, 1)->s.end, 505000);
	CHECK_EQ(kernel_at(&o, 2)->s.start, 1500000);
	CHECK_EQ(kernel_at(&o, 4)->s.end, 2505000);
	if (kind_at(&o, 5) == FVBPF_GPU_MEMCPY)
		CHECK_EQ(((const struct fvbpf_gpu_memcpy *)o.rec[5])->s.start, 3500000);
	if (kind_at(&o, 6) == FVBPF_GPU_MEMSET)
		CHECK_EQ(((const struct fvbpf_gpu_memset *)o.rec[6])->s.end, 4500500);
	if (kind_at(&o, 7) == FVBPF_GPU_SYNC)
		CHECK_EQ(((const struct fvbpf_gpu_sync *)o.rec[7])->s.start, 5500000);
	out_clear(&o);

	/* A large (CLOCK_MONOTONIC vs. CUPTI epoch) offset in 64 bits. */
	d.clock_offset = -(int64_t)(1ull << 40);
	{
		CUpti_ActivityKernel10 k = kernel_rec(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, NAME1, 1,
						      (1ull << 41) + 3);
		struct abuf b;

		memset(&b, 0, sizeof(b));
		put(&b, &k, sizeof(k));
		CHECK_EQ(cupti_decode_buffer(&d, b.b, b.len), 1);
		CHECK_EQ(o.n, 1); /* the name is known from the first buffer */
		CHECK_EQ(kernel_at(&o, 0)->s.start, (1ull << 40) + 3);
		CHECK_EQ(kernel_at(&o, 0)->name_id, 1);
	}
	CHECK_EQ(d.records, 9);
	CHECK_EQ(d.skipped, 2);
	decoder_done(&d, &o);
}

static void test_empty(void)
{
	struct cupti_decoder d;
	struct out o;
	static uint8_t buf[256] __attribute__((aligned(8)));

	decoder_init(&d, &o, 0);
	CHECK_EQ(cupti_decode_buffer(&d, buf, 0), 0);
	CHECK_EQ(o.n, 0);
	CHECK_EQ(d.records, 0);
	CHECK_EQ(d.skipped, 0);
	decoder_done(&d, &o);
}

/* Records of build_mixed() wholly inside the first @cut bytes. */
static size_t whole_records(const struct abuf *a, size_t cut)
{
	size_t i, n = 0;

	for (i = 0; i < a->n; i++)
		if ((i + 1 < a->n ? a->off[i + 1] : a->len) <= cut)
			n = i + 1;
	return n;
}

/* What the decoder emits for the first @whole records of build_mixed(),
 * from a fresh name table: K1+NAME, K2, API, K3+NAME, MEMCPY, MARKER,
 * MEMSET, SYNC. */
static const size_t mixed_emits[] = { 0, 2, 3, 3, 5, 6, 6, 7, 8 };
static const size_t mixed_skipped[] = { 0, 0, 0, 1, 1, 1, 2, 2, 2 };

/*
 * A buffer whose valid size cuts a record: libcupti returns the whole
 * records before it and then "no more records", so the decoder returns
 * what it decoded.  Nothing past `valid` is read: the buffer ends at a
 * guard page (valid a multiple of 8, every such cut), or is an exact-size
 * heap block that ASan watches (every other cut).
 */
static void test_truncated(void)
{
	struct cupti_decoder d;
	struct out o;
	struct abuf a;
	struct guarded g;
	size_t cut, whole;
	long ret;
	uint8_t *h;

	build_mixed(&a);
	CHECK_EQ(a.n, 8);
	decoder_init(&d, &o, 0);
	for (cut = 8; cut <= a.len; cut += 8) {
		whole = whole_records(&a, cut);
		d.records = d.skipped = 0;
		CHECK_EQ(guard(&g, a.b, cut), 0);
		if (g.buf)
			CHECK_EQ(cupti_decode_buffer(&d, g.buf, cut), (long)whole);
		unguard(&g);
		CHECK_EQ(d.records, whole);
		CHECK_EQ(d.skipped, mixed_skipped[whole]);
		CHECK_EQ(o.n, mixed_emits[whole]);
		check_sizes(&o);
		out_clear(&o);
		cupti_decoder_reset_names(&d);
	}

	/* Half of the memcpy: NAME K K NAME K. */
	cut = a.off[4] + 48;
	CHECK_EQ(guard(&g, a.b, cut), 0);
	if (g.buf)
		CHECK_EQ(cupti_decode_buffer(&d, g.buf, cut), 4);
	unguard(&g);
	CHECK_EQ(o.n, 5);
	CHECK_EQ(kind_at(&o, 4), FVBPF_GPU_KERNEL);
	out_clear(&o);
	cupti_decoder_reset_names(&d);

	/*
	 * Sizes that are no multiple of 8 (CUPTI never hands those over).
	 * When at least the 4-byte kind of the cut record is inside `valid`,
	 * libcupti says "no more records"; with a 1-3 byte tail it reads the
	 * kind past `valid` (its own overread, outside the decoder), so
	 * either outcome is accepted there.  Records before the cut are
	 * emitted either way and nothing after it.
	 */
	for (cut = 1; cut < a.len; cut++) {
		if (cut % 8 == 0)
			continue;
		whole = whole_records(&a, cut);
		h = malloc(cut);
		CHECK(h != NULL);
		if (!h)
			break;
		memcpy(h, a.b, cut);
		ret = cupti_decode_buffer(&d, h, cut);
		free(h);
		if (cut - a.off[whole] >= 4) /* whole < a.n: cut < a.len */
			CHECK_EQ(ret, (long)whole);
		else
			CHECK(ret == (long)whole || ret == -1);
		CHECK_EQ(o.n, mixed_emits[whole]);
		check_sizes(&o);
		out_clear(&o);
		cupti_decoder_reset_names(&d);
	}
	decoder_done(&d, &o);
}

/* A record of a kind CUPTI does not know: libcupti says
 * CUPTI_ERROR_INVALID_KIND and the decoder reports the buffer corrupt,
 * after what came before it. */
static void test_garbage_kind(void)
{
	struct cupti_decoder d;
	struct out o;
	struct abuf a;
	struct guarded g;
	CUpti_ActivityKernel10 k = kernel_rec(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, NAME1, 9, 100);
	uint8_t junk[64];
	void *rec = NULL;

	memset(&a, 0, sizeof(a));
	put(&a, &k, sizeof(k));
	memset(junk, 0x5a, sizeof(junk));
	memcpy(junk, &(uint32_t){ 9999 }, 4);
	put(&a, junk, sizeof(junk));
	put(&a, &k, sizeof(k));

	/* What the real parser does. */
	CHECK_EQ(next_fn(a.b, a.len, &rec), CUPTI_SUCCESS);
	CHECK_EQ(next_fn(a.b, a.len, &rec), CUPTI_ERROR_INVALID_KIND);

	decoder_init(&d, &o, 0);
	CHECK_EQ(guard(&g, a.b, a.len), 0);
	if (g.buf)
		CHECK_EQ(cupti_decode_buffer(&d, g.buf, a.len), -1);
	unguard(&g);
	CHECK_EQ(d.records, 1);
	CHECK_EQ(o.n, 2); /* NAME, the kernel before the junk */
	CHECK_EQ(kind_at(&o, 1), FVBPF_GPU_KERNEL);
	out_clear(&o);

	/* Junk first, and a zeroed buffer (kind 0, CUPTI_ACTIVITY_KIND_INVALID). */
	CHECK_EQ(cupti_decode_buffer(&d, a.b + a.off[1], a.len - a.off[1]), -1);
	memset(a.b, 0, sizeof(a.b));
	CHECK_EQ(cupti_decode_buffer(&d, a.b, 256), -1);
	CHECK_EQ(o.n, 0);
	CHECK_EQ(d.records, 1);
	decoder_done(&d, &o);
}

/* Names live across buffers until reset; then they are announced again. */
static void test_reset_names(void)
{
	struct cupti_decoder d;
	struct out o;
	struct abuf a, b;
	CUpti_ActivityKernel10 k = kernel_rec(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, NAME1, 1, 10);
	CUpti_ActivityKernel10 k2 = kernel_rec(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, NAME2, 2, 20);

	memset(&a, 0, sizeof(a));
	put(&a, &k, sizeof(k));
	memset(&b, 0, sizeof(b));
	put(&b, &k2, sizeof(k2));
	put(&b, &k, sizeof(k));

	decoder_init(&d, &o, 0);
	CHECK_EQ(cupti_decode_buffer(&d, a.b, a.len), 1);
	CHECK_EQ(o.n, 2);
	CHECK_EQ(name_at(&o, 0)->hdr.correlation, 1);
	out_clear(&o);

	CHECK_EQ(cupti_decode_buffer(&d, b.b, b.len), 2);
	CHECK_EQ(o.n, 3); /* NAME 2, K2, K1 without its name again */
	CHECK_EQ(name_at(&o, 0)->hdr.correlation, 2);
	CHECK_STR(name_at(&o, 0)->name, NAME2);
	CHECK_EQ(kernel_at(&o, 1)->name_id, 2);
	CHECK_EQ(kernel_at(&o, 2)->name_id, 1);
	out_clear(&o);

	cupti_decoder_reset_names(&d);
	CHECK_EQ(d.names.n, 0);
	CHECK(d.names.names == NULL);
	CHECK_EQ(cupti_decode_buffer(&d, a.b, a.len), 1);
	CHECK_EQ(o.n, 2);
	CHECK_EQ(name_at(&o, 0)->hdr.correlation, 1);
	CHECK_STR(name_at(&o, 0)->name, NAME1);
	CHECK_EQ(kernel_at(&o, 1)->name_id, 1);
	check_sizes(&o);
	out_clear(&o);

	/* Reset twice is harmless. */
	cupti_decoder_reset_names(&d);
	cupti_decoder_reset_names(&d);
	decoder_done(&d, &o);
}

/* Long names are cut to FVBPF_GPU_NAME_MAX - 1 bytes, NUL-terminated,
 * zero-padded to 8; a kernel without a name gets id 0 and no NAME. */
static void test_long_names(void)
{
	static const size_t lens[] = { 0, 1, 6, 7, 8, 15, 1000, 1015, 1016, 1022, 1023, 1024, 1025,
				       5000 };
	struct cupti_decoder d;
	struct out o;
	struct abuf a;
	char *names[sizeof(lens) / sizeof(lens[0])];
	size_t i, want, j;
	CUpti_ActivityKernel10 k;

	decoder_init(&d, &o, 0);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		names[i] = malloc(lens[i] + 1);
		CHECK(names[i] != NULL);
		if (!names[i])
			return;
		for (j = 0; j < lens[i]; j++)
			names[i][j] = (char)('a' + (j + i) % 26);
		names[i][lens[i]] = 0;

		memset(&a, 0, sizeof(a));
		k = kernel_rec(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, names[i], (uint32_t)i + 1, 10);
		put(&a, &k, sizeof(k));
		out_clear(&o);
		CHECK_EQ(cupti_decode_buffer(&d, a.b, a.len), 1);
		CHECK_EQ(o.n, 2);
		check_sizes(&o);
		if (o.n != 2 || kind_at(&o, 0) != FVBPF_GPU_NAME)
			continue;
		want = lens[i] < FVBPF_GPU_NAME_MAX - 1 ? lens[i] : FVBPF_GPU_NAME_MAX - 1;
		CHECK_EQ(o.size[0], (8 + want + 1 + 7) / 8 * 8);
		CHECK(o.size[0] <= 8 + FVBPF_GPU_NAME_MAX);
		CHECK_EQ(name_at(&o, 0)->hdr.correlation, i + 1);
		CHECK_EQ(kernel_at(&o, 1)->name_id, i + 1);
		/* NUL inside the record, the prefix kept, zeros after it */
		CHECK(memchr(o.rec[0] + 8, 0, o.size[0] - 8) != NULL);
		CHECK_EQ(strnlen((const char *)o.rec[0] + 8, o.size[0] - 8), want);
		CHECK(!memcmp(o.rec[0] + 8, names[i], want));
		for (j = 8 + want; j < o.size[0]; j++)
			CHECK_EQ(o.rec[0][j], 0);
	}

	/* No name pointer at all. */
	memset(&a, 0, sizeof(a));
	k = kernel_rec(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, NULL, 99, 10);
	put(&a, &k, sizeof(k));
	out_clear(&o);
	CHECK_EQ(cupti_decode_buffer(&d, a.b, a.len), 1);
	CHECK_EQ(o.n, 1);
	CHECK_EQ(kernel_at(&o, 0)->name_id, 0);
	CHECK_EQ(kernel_at(&o, 0)->s.hdr.correlation, 99);

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		free(names[i]);
	decoder_done(&d, &o);
}

/* Many distinct names: the table grows (past its first 64) and ids stay put. */
static void test_many_names(void)
{
	struct cupti_decoder d;
	struct out o;
	static struct abuf a;
	static char names[200][16];
	CUpti_ActivityKernel10 k;
	size_t i, kernels = 0, nrec = 0;
	long total = 0;

	decoder_init(&d, &o, 0);
	for (i = 0; i < 200; i++) {
		snprintf(names[i], sizeof(names[i]), "_Z4k%03zuv", i);
		if (i % 25 == 0) {
			if (i) {
				total += cupti_decode_buffer(&d, a.b, a.len);
				nrec += o.n;
				out_clear(&o);
			}
			memset(&a, 0, sizeof(a));
		}
		k = kernel_rec(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, names[i], (uint32_t)i + 1, 10);
		put(&a, &k, sizeof(k));
		kernels++;
	}
	total += cupti_decode_buffer(&d, a.b, a.len);
	nrec += o.n;
	out_clear(&o);
	CHECK_EQ(total, 200);
	CHECK_EQ(nrec, 400);
	CHECK_EQ(d.names.n, 200);

	/* Old names again: no NAME records, their first ids. */
	memset(&a, 0, sizeof(a));
	k = kernel_rec(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, names[3], 1000, 10);
	put(&a, &k, sizeof(k));
	k = kernel_rec(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, names[150], 1001, 10);
	put(&a, &k, sizeof(k));
	CHECK_EQ(cupti_decode_buffer(&d, a.b, a.len), 2);
	CHECK_EQ(o.n, 2);
	CHECK_EQ(kernel_at(&o, 0)->name_id, 4);
	CHECK_EQ(kernel_at(&o, 1)->name_id, 151);
	check_sizes(&o);
	(void)kernels;
	decoder_done(&d, &o);
}

#define RUN_CUPTI(fn)                                                          \
	do {                                                                   \
		if (next_fn) {                                                 \
			RUN(fn);                                               \
		} else {                                                       \
			unit_count++;                                          \
			printf("ok %d # skip no libcupti\n", unit_count);      \
		}                                                              \
	} while (0)

/* Min-gap calibration picks the tightest sample and its midpoint. */
static void test_min_gap_calibration(void)
{
	uint64_t before[] = { 1000, 5000, 9000, 20 }, after[] = { 1400, 5010, 9100, 10 };
	uint64_t cupti[] = { 100, 4000, 8000, 0 };

	/* sample 1: gap 10, midpoint 5005, offset 5005 - 4000; sample 3 is
	 * not a sample (after < before) */
	CHECK_EQ(cupti_clock_offset(before, cupti, after, 4), 1005);
	CHECK_EQ(cupti_clock_offset(before, cupti, after, 1), 1200 - 100);
	CHECK_EQ(cupti_clock_offset(before, cupti, after, 0), 0);
	/* CUPTI ahead of CLOCK_MONOTONIC: a negative offset */
	cupti[1] = 9005;
	CHECK_EQ(cupti_clock_offset(before, cupti, after, 3), -4000);
}

int main(void)
{
	/* TAP lines survive a sanitizer abort */
	setvbuf(stdout, NULL, _IOLBF, 0);
	cupti_dl = dlopen(CUPTI_LIB, RTLD_NOW | RTLD_LOCAL);
	if (cupti_dl)
		next_fn = (cupti_next_record_fn)dlsym(cupti_dl, "cuptiActivityGetNextRecord");
	if (!next_fn)
		printf("# no libcupti: %s\n", dlerror());
	RUN_CUPTI(test_mixed_buffer);
	RUN_CUPTI(test_clock_offset);
	RUN_CUPTI(test_empty);
	RUN_CUPTI(test_truncated);
	RUN_CUPTI(test_garbage_kind);
	RUN_CUPTI(test_reset_names);
	RUN_CUPTI(test_long_names);
	RUN_CUPTI(test_many_names);
	RUN(test_min_gap_calibration);
	/* libcupti stays loaded: its threads and atexit handlers expect it */
	UNIT_DONE();
}
