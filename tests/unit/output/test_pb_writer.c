// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The protobuf encoder (user/output/pftrace/pb_writer.c) against known byte
 * strings (the examples of protobuf's encoding guide among them), the gzip
 * stream against zlib's own reader, and the pftrace writer on a small clean
 * segment.  With FVBPF_FORMATS_OUT=DIR the segment is also written there as
 * fixture.json, fixture.json.gz and fixture.pftrace, for the independent
 * Python reader (tests/bats/formats.bats).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "util/gz_stream.h"
#include "util/name_table.h"
#include "output/pftrace/pb_writer.h"
#include "output/pftrace/pftrace_writer.h"
#include "pipeline/loader/dl_join.h"
#include "probes/torch_ops.h"
#include "pipeline/pystack.h"
#include "pipeline/registry.h"
#include "output/seg_output.h"
#include "pipeline/segment.h"
#include "output/json/trace_writer.h"
#include "unit.h"

static void check_bytes(const struct pb_buf *b, const char *want, size_t n)
{
	CHECK_EQ(b->err, 0);
	CHECK_EQ(b->len, n);
	CHECK(b->len == n && !memcmp(b->p, want, n));
}

static void test_varints(void)
{
	static const struct { uint64_t v; const char *bytes; size_t n; } cases[] = {
		{ 0, "\x00", 1 }, { 1, "\x01", 1 }, { 127, "\x7f", 1 }, { 128, "\x80\x01", 2 },
		{ 150, "\x96\x01", 2 }, { 300, "\xac\x02", 2 }, { 16383, "\xff\x7f", 2 },
		{ 16384, "\x80\x80\x01", 3 },
		{ UINT64_MAX, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10 },
	};
	struct pb_buf b;
	size_t i;

	pb_init(&b);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pb_reset(&b);
		pb_varint(&b, cases[i].v);
		check_bytes(&b, cases[i].bytes, cases[i].n);
		CHECK_EQ(pb_varint_len(cases[i].v), cases[i].n);
	}
	pb_free(&b);
}

static void test_fields(void)
{
	struct pb_buf b;
	char body[200];
	size_t m, i;

	pb_init(&b);
	pb_uint(&b, 1, 150);                  /* the guide's "08 96 01" */
	check_bytes(&b, "\x08\x96\x01", 3);
	pb_reset(&b);
	pb_string(&b, 2, "testing");          /* "12 07 74 65 73 74 69 6e 67" */
	check_bytes(&b, "\x12\x07testing", 9);
	pb_reset(&b);
	m = pb_begin(&b, 3);                  /* "1a 03 08 96 01" */
	pb_uint(&b, 1, 150);
	pb_end(&b, m);
	check_bytes(&b, "\x1a\x03\x08\x96\x01", 5);
	pb_reset(&b);
	pb_int(&b, 4, -1);                    /* int64 -1: ten bytes */
	check_bytes(&b, "\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
	pb_reset(&b);
	pb_fixed64(&b, 47, 0x0102030405060708ull); /* tag 47<<3|1 = 377 */
	check_bytes(&b, "\xf9\x02\x08\x07\x06\x05\x04\x03\x02\x01", 10);
	pb_reset(&b);
	pb_uint(&b, 60, 1);                   /* a two-byte tag */
	check_bytes(&b, "\xe0\x03\x01", 3);
	/* A nested body past 127 bytes: its length takes two bytes, the body moves. */
	pb_reset(&b);
	memset(body, 'x', sizeof(body));
	m = pb_begin(&b, 1);
	pb_bytes(&b, 2, body, sizeof(body));  /* 12 c8 01 + 200 */
	pb_end(&b, m);
	CHECK_EQ(b.len, 1 + 2 + 1 + 2 + 200);
	CHECK(b.len > 7 && !memcmp(b.p, "\x0a\xcb\x01\x12\xc8\x01", 6));
	for (i = 6; i < b.len; i++)
		CHECK(b.p[i] == 'x');
	/* Nested twice, the inner one long. */
	pb_reset(&b);
	m = pb_begin(&b, 1);
	i = pb_begin(&b, 2);
	pb_bytes(&b, 3, body, 130);
	pb_end(&b, i);
	pb_end(&b, m);
	CHECK(b.len == 3 + 3 + 3 + 130 && !memcmp(b.p, "\x0a\x88\x01\x12\x85\x01\x1a\x82\x01", 9));
	pb_free(&b);
}

struct fixture {
	struct region_registry reg;
	struct name_table knames;
	struct proc_target proc;
	struct session_meta meta;
	struct segment seg;
	struct seg_output_ctx ctx;
};

static struct api_call call_at(uint32_t tid, const char *sym, uint64_t t, uint64_t dur,
			       uint32_t corr, uint32_t kernel)
{
	struct api_call c;

	memset(&c, 0, sizeof(c));
	c.tid = tid;
	c.api_id = (uint32_t)cuda_api_find(sym);
	c.start_ns = t;
	c.end_ns = t + dur;
	c.correlation = corr;
	c.gpu_records = corr ? 1 : 0;
	c.kernel = kernel;
	return c;
}

/* A step with nested regions on two threads, two launches and their kernels. */
static void setup(struct fixture *x)
{
	uint32_t me = (uint32_t)getpid(), k;
	struct gpu_activity a;
	const uint64_t t0 = 5000000000123ull;

	memset(x, 0, sizeof(*x));
	registry_init(&x->reg);
	name_table_init(&x->knames);
	k = name_table_intern(&x->knames, "void gemm<float>(int)");
	x->proc.pid = (pid_t)me;
	snprintf(x->proc.comm, sizeof(x->proc.comm), "trainer");
	snprintf(x->proc.cmdline, sizeof(x->proc.cmdline), "python3 train.py");
	snprintf(x->meta.hostname, sizeof(x->meta.hostname), "node0");
	x->seg.pid = me;
	x->seg.seq = 3;
	x->seg.region = 0;
	x->seg.start_ns = t0;
	x->seg.end_ns = t0 + 1000000;
	x->seg.slices = calloc(4, sizeof(*x->seg.slices));
	x->seg.calls = calloc(3, sizeof(*x->seg.calls));
	CHECK(x->seg.slices && x->seg.calls);
	if (!x->seg.slices || !x->seg.calls)
		return;
	x->seg.slices[0] = (struct seg_slice){ me, 0, t0, t0 + 1000000, 0, 0, 0 };
	x->seg.slices[1] = (struct seg_slice){ me, 1, t0 + 10, t0 + 400001, 1, 0, 0 };
	x->seg.slices[2] = (struct seg_slice){ me, 1, t0 + 400001, t0 + 400001, 1, 0, 0 }; /* empty */
	x->seg.slices[3] = (struct seg_slice){ me + 1, 1, t0 + 7, t0 + 900000, 0, 0, 0 };
	x->seg.nslices = x->seg.cap = 4;
	x->seg.calls[0] = call_at(me, "cudaLaunchKernel", t0 + 100, 5000, 11, k);
	x->seg.calls[1] = call_at(me, "cudaLaunchKernel", t0 + 200000, 3999, 12, k);
	x->seg.calls[2] = call_at(me + 1, "cudaMalloc", t0 + 300, 70, 0, 0);
	x->seg.ncalls = x->seg.capcalls = 3;
	memset(&a, 0, sizeof(a));
	a.kind = FVBPF_GPU_KERNEL;
	a.name = k;
	a.stream = 7;
	a.correlation = 11;
	a.start = t0 + 9000;
	a.end = t0 + 19000;
	a.call = 0;
	CHECK_EQ(seg_add_gpu(&x->seg, &a), 0);
	a.correlation = 12;
	a.start = t0 + 205000;
	a.end = t0 + 215555;
	a.call = 1;
	CHECK_EQ(seg_add_gpu(&x->seg, &a), 0);
	x->ctx = (struct seg_output_ctx){ &x->seg, &x->proc, &x->reg, &x->meta, &x->knames,
					  TRACE_JSON, false, false, NULL };
}

static void teardown(struct fixture *x)
{
	free(x->seg.slices);
	free(x->seg.calls);
	free(x->seg.gpu);
	proc_target_free(&x->proc);
	name_table_free(&x->knames);
}

static char *in_memory(int (*fn)(FILE *, const struct seg_output_ctx *), const struct fixture *x,
		       size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	CHECK_EQ(fn(f, &x->ctx), 0);
	fclose(f);
	return buf;
}

static int gz_trace(FILE *f, const struct seg_output_ctx *c)
{
	FILE *gz = gz_stream_open(f);
	int ret;

	if (!gz)
		return -1;
	ret = trace_write(gz, c);
	return gz_stream_close(gz) ? -1 : ret;
}

static void save(const char *dir, const char *name, const char *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ(fwrite(buf, 1, len, f), len);
		fclose(f);
	}
}

/* @n more region slices on the main thread and @n cudaMalloc calls on the
 * other, inside the step: the events a real segment has thousands of. */
static void add_events(struct fixture *x, size_t n)
{
	uint32_t me = (uint32_t)getpid();
	const uint64_t t0 = x->seg.start_ns + 400002;
	struct seg_slice *sl = realloc(x->seg.slices, (x->seg.nslices + n) * sizeof(*sl));
	struct api_call *calls = realloc(x->seg.calls, (x->seg.ncalls + n) * sizeof(*calls));
	size_t i;

	CHECK(sl && calls);
	if (sl)
		x->seg.slices = sl;
	if (calls)
		x->seg.calls = calls;
	if (!sl || !calls)
		return;
	for (i = 0; i < n; i++) {
		sl[x->seg.nslices + i] = (struct seg_slice){ me, 1, t0 + i * 500, t0 + i * 500 + 400,
							     1, 0, 0 };
		calls[x->seg.ncalls + i] = call_at(me + 1, "cudaMalloc", t0 + i * 500, 70, 0, 0);
	}
	x->seg.nslices += n;
	x->seg.cap = x->seg.nslices;
	x->seg.ncalls += n;
	x->seg.capcalls = x->seg.ncalls;
}

static size_t written_len(int (*fn)(FILE *, const struct seg_output_ctx *), const struct fixture *x)
{
	size_t len = 0;
	char *buf = in_memory(fn, x, &len);

	free(buf);
	return buf ? len : 0;
}

/*
 * pftrace is chosen for compact events: each one costs a fraction of its
 * JSON.  Measured on what 1,000 more slices and 1,000 more calls add to
 * each file, not on the whole small fixture: a file of a few events is
 * mostly the segment's metadata, which both formats carry in full (every
 * seg_meta row), so a ratio of whole files would measure the metadata.
 */
static void test_events_compact(void)
{
	size_t json0, pf0, json1, pf1;
	struct fixture x;

	setup(&x);
	json0 = written_len(trace_write, &x);
	pf0 = written_len(pftrace_write, &x);
	add_events(&x, 1000);
	json1 = written_len(trace_write, &x);
	pf1 = written_len(pftrace_write, &x);
	CHECK(json1 > json0 && pf1 > pf0);
	if (json1 > json0 && pf1 > pf0) {
		printf("# 2000 events: json +%zu bytes, pftrace +%zu bytes\n", json1 - json0,
		       pf1 - pf0);
		CHECK(pf1 - pf0 < (json1 - json0) / 3);
	}
	/* The whole file is smaller too, metadata included. */
	CHECK(pf0 < json0);
	teardown(&x);
}

static void test_formats(void)
{
	struct fixture x;
	size_t njson, ngz, npf;
	char *json, *gz, *pf, *plain;
	uLongf nplain;
	const char *out = getenv("FVBPF_FORMATS_OUT");

	setup(&x);
	json = in_memory(trace_write, &x, &njson);
	gz = in_memory(gz_trace, &x, &ngz);
	pf = in_memory(pftrace_write, &x, &npf);
	CHECK(json && gz && pf);
	if (json && gz && pf) {
		/* zlib's own reader gives back the JSON byte for byte */
		nplain = njson + 1;
		plain = malloc(nplain);
		CHECK(plain != NULL);
		if (plain) {
			z_stream z = { .next_in = (Bytef *)gz, .avail_in = (uInt)ngz,
				       .next_out = (Bytef *)plain, .avail_out = (uInt)nplain };
			CHECK_EQ(inflateInit2(&z, 15 + 16), Z_OK);
			CHECK_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
			CHECK_EQ(z.total_out, njson);
			CHECK(!memcmp(plain, json, njson));
			inflateEnd(&z);
			free(plain);
		}
		CHECK(ngz > 18 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b);
		/* The first packet: Trace.packet, a track descriptor on sequence 1. */
		CHECK(npf > 8 && pf[0] == 0x0a);
		if (out) {
			save(out, "fixture.json", json, njson);
			save(out, "fixture.json.gz", gz, ngz);
			save(out, "fixture.pftrace", pf, npf);
		}
	}
	free(json);
	free(gz);
	free(pf);
	teardown(&x);
}

/* Both formats of @x into *@json and *@pf, saved as BASE.json and
 * BASE.pftrace in @out when it is set (FVBPF_FORMATS_OUT). */
static void both_formats(const struct fixture *x, const char *out, const char *base, char **json,
			 size_t *njson, char **pf, size_t *npf)
{
	char name[64];

	*json = in_memory(trace_write, x, njson);
	*pf = in_memory(pftrace_write, x, npf);
	CHECK(*json && *pf);
	if (!out || !*json || !*pf)
		return;
	snprintf(name, sizeof(name), "%s.json", base);
	save(out, name, *json, *njson);
	snprintf(name, sizeof(name), "%s.pftrace", base);
	save(out, name, *pf, *npf);
}

static struct pystack_entry *two_frames(struct name_table *n, const char *func, int line,
				       int first, int caller_line)
{
	struct pystack_entry *e = calloc(1, sizeof(*e) + 2 * sizeof(e->f[0]));

	CHECK(e != NULL);
	if (!e)
		return NULL;
	e->n = 2;
	e->f[0] = (struct pystack_frame){ name_table_intern(n, func), name_table_intern(n, "/w/a.py"),
					  line, first };
	e->f[1] = (struct pystack_frame){ name_table_intern(n, "Model.outer"),
					  name_table_intern(n, "/usr/lib/python3.11/b.py"),
					  caller_line, 25 };
	return e;
}

/* --with-stack: the fixture with torch calls, a region and a launch that
 * have Python stacks, on two threads, written as fixture_stack.json and
 * fixture_stack.pftrace: the reader checks the one against the other. */
static void test_formats_stacks(void)
{
	const char *out = getenv("FVBPF_FORMATS_OUT");
	struct torch_call ops[4];
	struct pystack_table tab;
	struct fixture x;
	size_t njson, npf;
	char *json, *pf;
	uint64_t t0;
	uint32_t me;

	setup(&x);
	t0 = x.seg.start_ns;
	me = x.seg.pid;
	pystack_table_init(&tab, &x.knames);
	tab.e = calloc(2, sizeof(*tab.e));
	CHECK(tab.e != NULL);
	if (!tab.e)
		return;
	tab.e[0] = two_frames(&x.knames, "inner", 12, 10, 30);
	tab.e[1] = two_frames(&x.knames, "Model.other", 50, 48, 31);
	tab.n = tab.cap = 2;
	memset(ops, 0, sizeof(ops));
	ops[0] = (struct torch_call){ .start_ns = t0 + 1000, .end_ns = t0 + 2000, .tid = me,
				      .name = name_table_intern(&x.knames, "aten::add"), .stack = 1 };
	ops[1] = (struct torch_call){ .start_ns = t0 + 1100, .end_ns = t0 + 1900, .tid = me,
				      .name = name_table_intern(&x.knames, "aten::copy_"), .depth = 1 };
	ops[2] = (struct torch_call){ .start_ns = t0 + 3000, .end_ns = t0 + 4000, .tid = me,
				      .name = name_table_intern(&x.knames, "aten::mm"), .stack = 2 };
	ops[3] = (struct torch_call){ .start_ns = t0 + 500, .end_ns = t0 + 800, .tid = me + 1,
				      .name = name_table_intern(&x.knames, "aten::add"), .stack = 1 };
	x.seg.ops = ops;
	x.seg.nops = 4;
	x.seg.slices[1].stack = 2;
	x.seg.calls[0].stack = 1;
	x.ctx.pystacks = &tab;
	both_formats(&x, out, "fixture_stack", &json, &njson, &pf, &npf);
	if (json && pf) {
		CHECK(memmem(json, njson, "\"Python line\":\"inner (/w/a.py:12)\"", 34) != NULL);
		/* each line once per sequence: interned */
		CHECK(memmem(pf, npf, "Python line", 11) != NULL);
		CHECK(memmem(pf, npf, "a.py(10): inner", 15) != NULL);
	}
	free(json);
	free(pf);
	x.seg.ops = NULL;
	pystack_table_free(&tab);
	teardown(&x);
}

/* DataLoader workers: each batch a slice on its worker's track, its flow
 * ending in the trainer's slice that held the receipt, two in one. */
static void test_formats_dl(void)
{
	const char *out = getenv("FVBPF_FORMATS_OUT");
	struct torch_call op;
	struct dl_seg d;
	struct dl_batch b[3];
	struct fixture x;
	size_t njson, npf;
	char *json, *pf;
	uint64_t t0;
	uint32_t me;

	setup(&x);
	t0 = x.seg.start_ns;
	me = x.seg.pid;
	op = (struct torch_call){ .start_ns = t0 + 1000, .end_ns = t0 + 5000, .tid = me,
				  .kind = TORCH_SCOPE,
				  .name = name_table_intern(&x.knames,
							    "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__") };
	x.seg.ops = &op;
	x.seg.nops = 1;
	memset(&d, 0, sizeof(d));
	memset(b, 0, sizeof(b));
	/* batches 0 and 1 received in one __next__, batch 2 later in the step */
	b[0] = (struct dl_batch){ .start_ns = t0 + 100, .end_ns = t0 + 1500, .recv_ns = t0 + 2000,
				  .idx = 0, .pid = (pid_t)me + 100, .recv_tid = me, .samples = 4 };
	b[1] = (struct dl_batch){ .start_ns = t0 + 200, .end_ns = t0 + 2500, .recv_ns = t0 + 3000,
				  .idx = 1, .pid = (pid_t)me + 101, .recv_tid = me, .worker_id = 1,
				  .samples = 4 };
	b[2] = (struct dl_batch){ .start_ns = t0 + 600000, .end_ns = t0 + 650000,
				  .recv_ns = t0 + 700000, .idx = 2, .pid = (pid_t)me + 100,
				  .recv_tid = me, .samples = 4 };
	d.batches = b;
	d.n = 3;
	d.sum.nworkers = 2;
	d.sum.workers[0] = (struct dl_worker_sum){ .pid = (pid_t)me + 100, .worker_id = 0 };
	d.sum.workers[1] = (struct dl_worker_sum){ .pid = (pid_t)me + 101, .worker_id = 1 };
	x.seg.dl = &d;
	both_formats(&x, out, "fixture_dl", &json, &njson, &pf, &npf);
	if (json && pf) {
		CHECK(memmem(json, njson, "DataLoader batch 1", 18) != NULL);
		CHECK(memmem(pf, npf, "DataLoader batch 1", 18) != NULL);
		CHECK(memmem(pf, npf, "rank 0 worker 1", 15) != NULL);
	}
	free(json);
	free(pf);
	x.seg.ops = NULL;
	x.seg.dl = NULL;
	teardown(&x);
}

static void test_format_names(void)
{
	enum trace_format f;

	CHECK_EQ(trace_format_parse("json", &f), 0);
	CHECK_EQ(f, TRACE_JSON);
	CHECK_EQ(trace_format_parse("json.gz", &f), 0);
	CHECK_EQ(f, TRACE_JSON_GZ);
	CHECK_EQ(trace_format_parse("pftrace", &f), 0);
	CHECK_EQ(f, TRACE_PFTRACE);
	CHECK(trace_format_parse("protobuf", &f) != 0);
	CHECK(trace_format_parse("", &f) != 0);
	CHECK_STR(trace_format_name(TRACE_JSON_GZ), "json.gz");
}

int main(void)
{
	RUN(test_varints);
	RUN(test_fields);
	RUN(test_formats);
	RUN(test_formats_stacks);
	RUN(test_formats_dl);
	RUN(test_events_compact);
	RUN(test_format_names);
	UNIT_DONE();
}
