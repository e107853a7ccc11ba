// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The trace and summary writers (user/output/json/trace_writer.c,
 * user/output/summary/summary.c) fed what a hostile target can send: any
 * bytes in its comm, thread names,
 * command line, kernel names and agent status, and extreme numbers in its
 * GPU records.  Every JSON file must pass a strict parser (strict_json.h),
 * the text summary must hold no control character, and no arithmetic may
 * overflow (this test also runs under UBSan).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "util/name_table.h"
#include "pipeline/registry.h"
#include "output/seg_output.h"
#include "pipeline/segment.h"
#include "strict_json.h"
#include "output/summary/summary.h"
#include "output/json/trace_writer.h"
#include "unit.h"

#define HOSTILE "\x1b[31m\"q\\\nfvbpf: forged\r\x07\x7f\xff\xfe\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe6\x97\xc2\x9b"
/* A thread name holds 15 bytes. */
#define HOSTILE_COMM "\x1b[31m\n\xff\xc0\xaf\x01\x7f\xed\xa0\x80z"

struct fixture {
	struct region_registry reg;
	struct name_table knames;
	struct proc_target proc;
	struct session_meta meta;
	struct segment seg;
	struct seg_output_ctx ctx;
	uint32_t kname;
};

static void add_gpu(struct segment *seg, const struct gpu_activity *a)
{
	CHECK_EQ(seg_add_gpu(seg, a), 0);
}

static struct api_call launch(uint32_t tid, uint32_t kernel, uint64_t t)
{
	struct api_call c;

	memset(&c, 0, sizeof(c));
	c.tid = tid;
	c.api_id = (uint32_t)cuda_api_find("cudaLaunchKernel");
	c.start_ns = t;
	c.end_ns = t + 500;
	c.kernel = kernel;
	c.correlation = 7;
	c.gpu_records = 1;
	c.args[4] = UINT64_MAX; /* block z: the target's number */
	c.args[6] = UINT64_MAX; /* shared memory */
	return c;
}

/* GPU records at the edges of their types. */
static void extreme_gpu(struct fixture *x)
{
	struct gpu_activity a;

	memset(&a, 0, sizeof(a));
	a.kind = FVBPF_GPU_KERNEL;
	a.correlation = 7;
	a.start = 1000;
	a.end = UINT64_MAX;          /* ends at the end of time */
	a.device = UINT32_MAX;
	a.stream = UINT32_MAX;
	a.name = x->kname;
	a.registers = UINT32_MAX;
	a.grid[0] = INT32_MIN;
	a.block[0] = INT32_MAX;
	a.static_smem = INT32_MAX;   /* their sum overflows an int */
	a.dynamic_smem = INT32_MAX;
	a.call = 0;
	add_gpu(&x->seg, &a);
	a.static_smem = a.dynamic_smem = INT32_MIN;
	a.start = 500;               /* another huge one: the totals saturate */
	add_gpu(&x->seg, &a);
	memset(&a, 0, sizeof(a));
	a.kind = FVBPF_GPU_MEMCPY;
	a.start = 5000;
	a.end = 4000;                /* ends before it starts */
	a.bytes = UINT64_MAX;
	a.copy_kind = 255;
	a.call = -1;
	add_gpu(&x->seg, &a);
	a.kind = FVBPF_GPU_SYNC;
	a.stream = 0x40000000u;      /* collides with the sync track bit */
	add_gpu(&x->seg, &a);
	a.kind = 77;                 /* a kind that does not exist */
	add_gpu(&x->seg, &a);
}

static void setup(struct fixture *x)
{
	struct api_call c;
	uint32_t me = (uint32_t)getpid();
	int hostile_region;

	memset(x, 0, sizeof(*x));
	registry_init(&x->reg);
	/* registry_add takes any bytes (a region file is checked before). */
	hostile_region = registry_add(&x->reg, "r\x1b[31m\xff\xc0\xaf\x01q", NULL);
	CHECK(hostile_region >= 0);
	name_table_init(&x->knames);
	x->kname = name_table_intern(&x->knames, "void k<" HOSTILE ">(int)");
	/* Our own thread name is what the writer reads from /proc. */
	prctl(PR_SET_NAME, HOSTILE_COMM);
	x->proc.pid = (pid_t)me;
	snprintf(x->proc.comm, sizeof(x->proc.comm), "%s", HOSTILE_COMM);
	snprintf(x->proc.cmdline, sizeof(x->proc.cmdline), "python3 %s", HOSTILE);
	snprintf(x->proc.marker.path, sizeof(x->proc.marker.path), "/lib/%s.so", HOSTILE);
	snprintf(x->meta.hostname, sizeof(x->meta.hostname), "host%s", HOSTILE);

	x->seg.pid = me;
	x->seg.seq = UINT32_MAX;
	x->seg.region = (uint32_t)(hostile_region < 0 ? 0 : hostile_region);
	x->seg.start_ns = 100;
	x->seg.end_ns = 90;          /* before its start: a span of 0, not 2^64 */
	x->seg.drops = UINT64_MAX;
	x->seg.unbalanced = UINT64_MAX;
	x->seg.gpu_missing = UINT64_MAX;
	x->seg.cupti_dropped = UINT64_MAX;
	snprintf(x->seg.gpu_status, sizeof(x->seg.gpu_status), "unavailable: %s", HOSTILE);
	x->seg.slices = calloc(2, sizeof(*x->seg.slices));
	if (x->seg.slices) {
		x->seg.slices[0] = (struct seg_slice){ me, x->seg.region, 100, 90, 0, 0, 0 };
		x->seg.slices[1] = (struct seg_slice){ 999999, x->seg.region, 0, UINT64_MAX, 0,
						       SLICE_OPEN_AT_END, 0 };
		x->seg.nslices = x->seg.cap = 2;
	}
	x->seg.calls = calloc(2, sizeof(*x->seg.calls));
	if (x->seg.calls) {
		x->seg.calls[0] = launch(me, x->kname, 200);
		c = launch(me, x->kname, UINT64_MAX - 100);
		c.end_ns = 0;        /* returned before it was called */
		x->seg.calls[1] = c;
		x->seg.ncalls = x->seg.capcalls = 2;
	}
	extreme_gpu(x);
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

/* What a writer writes, as a string; the caller frees it. */
static char *written(int (*fn)(FILE *, const void *, const void *), const void *a, const void *b,
		     size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	CHECK_EQ(fn(f, a, b), 0);
	fclose(f);
	return buf;
}

static int do_trace(FILE *f, const void *ctx, const void *unused)
{
	(void)unused;
	return trace_write(f, ctx);
}

static int do_json(FILE *f, const void *sum, const void *ctx)
{
	return summary_write_json(f, sum, ctx);
}

static int do_text(FILE *f, const void *sum, const void *ctx)
{
	return summary_write_text(f, sum, ctx);
}

static void test_trace_is_strict_json(void)
{
	struct fixture x;
	size_t len = 0;
	char *out;

	setup(&x);
	out = written(do_trace, &x.ctx, NULL, &len);
	CHECK(out != NULL);
	if (out) {
		CHECK(strict_json_ok(out, len));
		/* No raw byte a terminal obeys, even in a JSON viewer. */
		CHECK(!ref_has_control(out, 1));
		/* INT32_MAX + INT32_MAX, computed wide (UBSan aborts otherwise). */
		CHECK(strstr(out, "\"shared_memory\":4294967294,") != NULL);
		CHECK(strstr(out, "\"shared_memory\":-4294967296,") != NULL);
		/* Device 2^32-1: the same pid on its metadata and its slices. */
		CHECK(strstr(out, "\"ph\":\"M\",\"pid\":4294967295,\"tid\":0,\"name\":\"process_name\"") != NULL);
		CHECK(strstr(out, "\"pid\":4294967295,\"tid\":4294967295,\"ts\"") != NULL);
		CHECK(strstr(out, "\"pid\":-1") == NULL);
		/* Reversed spans are empty, not 2^64 ns. */
		CHECK(strstr(out, "\"duration_us\":0.000,") != NULL);
		CHECK(strstr(out, "\\u001b[31m") != NULL);
		CHECK(strstr(out, "\"segment\":4294967295,") != NULL);
		if (!strict_json_ok(out, len))
			printf("# %.2000s\n", out);
	}
	free(out);
	teardown(&x);
}

static void test_summaries(void)
{
	struct fixture x;
	struct summary sum;
	size_t len = 0;
	char *out;

	setup(&x);
	CHECK_EQ(summary_build(&sum, &x.ctx), 0);
	/* Two records of about 2^64 ns: the total saturates. */
	CHECK(sum.gpu_total_ns == UINT64_MAX);
	CHECK_EQ(sum.segment_ns, 0);
	out = written(do_json, &sum, &x.ctx, &len);
	CHECK(out != NULL);
	if (out) {
		CHECK(strict_json_ok(out, len));
		CHECK(!ref_has_control(out, 1));
		CHECK(strstr(out, "\"ringbuf_drops\":18446744073709551615") != NULL);
		if (!strict_json_ok(out, len))
			printf("# %.3000s\n", out);
	}
	free(out);
	out = written(do_text, &sum, &x.ctx, &len);
	CHECK(out != NULL);
	if (out) {
		/* A user may cat it: valid UTF-8, no control but newlines. */
		CHECK(ref_utf8_valid(out, len));
		CHECK(!ref_has_control(out, 1));
		CHECK(strstr(out, "\\x1b[31m") != NULL);
	}
	free(out);
	summary_free(&sum);
	teardown(&x);
}

/* Many distinct kernel names and streams: rows and tracks are found by
 * hashing and sorting, and every one is there. */
static void test_many_names_and_streams(void)
{
	enum { N = 20000 };
	static const char key[] = "\"thread_name\",\"args\":{\"name\":\"";
	struct fixture x;
	struct gpu_activity a;
	struct summary sum;
	char name[64], *out, *p;
	size_t len = 0, i, tracks = 0;

	setup(&x);
	memset(&a, 0, sizeof(a));
	a.kind = FVBPF_GPU_KERNEL;
	a.call = -1;
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "kernel_%zu", i);
		a.name = name_table_intern(&x.knames, name);
		a.stream = (uint32_t)i;
		a.device = (uint32_t)(i % 3);
		a.start = 10 * i;
		a.end = 10 * i + 5;
		add_gpu(&x.seg, &a);
		add_gpu(&x.seg, &a); /* the same track and row twice */
	}
	CHECK_EQ(summary_build(&sum, &x.ctx), 0);
	/* N kernels + the hostile one + memcpy + the calls' rows + region */
	CHECK(sum.n >= N + 2);
	for (i = 0; i < sum.n; i++)
		if (!strncmp(sum.rows[i].name, "kernel_", 7))
			CHECK_EQ(sum.rows[i].dev_count, 2);
	summary_free(&sum);
	out = written(do_trace, &x.ctx, NULL, &len);
	CHECK(out != NULL);
	/* memmem, not strstr: ASan's strstr measures the rest each time. */
	for (p = out; p && (p = memmem(p, len - (size_t)(p - out), key, sizeof(key) - 1)); p++)
		tracks += !strncmp(p + sizeof(key) - 1, "stream ", 7) ||
			  !strncmp(p + sizeof(key) - 1, "sync (", 6);
	/* N streams, and the hostile record's stream 2^32-1 on its device */
	CHECK_EQ(tracks, N + 2);
	CHECK(out && strict_json_ok(out, len));
	free(out);
	teardown(&x);
}

int main(void)
{
	RUN(test_trace_is_strict_json);
	RUN(test_summaries);
	RUN(test_many_names_and_streams);
	UNIT_DONE();
}
