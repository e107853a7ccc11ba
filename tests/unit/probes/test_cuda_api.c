// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The CUDA/NCCL call table, argument decoders and entry/return pairing. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/api_pairing.h"
#include "probes/cuda_api.h"
#include "util/text_out.h"
#include "unit.h"

static struct api_call call_of(const char *symbol)
{
	struct api_call c;
	int id = cuda_api_find(symbol);

	memset(&c, 0, sizeof(c));
	CHECK(id >= 0);
	c.api_id = id < 0 ? 0 : (uint32_t)id;
	return c;
}

/* The decoded arguments as the trace writer prints them. */
static char *args_json(const struct api_call *c)
{
	static char buf[1024];
	static struct obuf o;
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	if (!f)
		return strcpy(buf, "(fmemopen failed)");
	ob_init(&o, f);
	cuda_api_write_args(&o, c);
	ob_flush(&o);
	fclose(f);
	return buf;
}

static void test_table(void)
{
	int id;

	CHECK(cuda_api_count() <= FVBPF_MAX_APIS);
	/* every row and variant found by its own name (the first two bytes
	 * cuda_api_find() compares first included); cuda_api_symbol() cuts a
	 * variant of a long mangled name at 63 bytes (gloo's: never probed) */
	for (unsigned int i = 0; i < cuda_api_count(); i++)
		if (strlen(cuda_api_symbol(i)) < 63)
			CHECK_EQ(cuda_api_find(cuda_api_symbol(i)), (int)i);
	id = cuda_api_find("cudaMemcpyAsync_ptsz");
	CHECK(id >= 0);
	CHECK_STR(cuda_api_symbol((unsigned int)id), "cudaMemcpyAsync_ptsz");
	CHECK_EQ(cuda_api_row((unsigned int)id)->layer, LAYER_RUNTIME);
	CHECK_STR(cuda_api_symbol((unsigned int)cuda_api_find("cuMemcpyHtoD_v2_ptds")),
		  "cuMemcpyHtoD_v2_ptds");
	CHECK_STR(cuda_api_layer_cat(cuda_api_row((unsigned int)cuda_api_find("ncclAllReduce"))->layer),
		  "nccl");
	CHECK_EQ(cuda_api_find("cudaMemcpyAsync_ptsq"), -1);
	CHECK_EQ(cuda_api_find("cudaMemcpyAsyn"), -1);
	CHECK_EQ(cuda_api_find("cudaMemcpyAsyncX"), -1);
	CHECK(cuda_api_is_launch((unsigned int)cuda_api_find("cuLaunchKernel")));
	CHECK(!cuda_api_is_launch((unsigned int)cuda_api_find("cudaMalloc")));
	/* only the handle plumbing is recorded outside segments */
	CHECK(cuda_api_cookie((unsigned int)cuda_api_find("__cudaGetKernel"), 0) & FVBPF_COOKIE_ALWAYS);
	CHECK(!(cuda_api_cookie((unsigned int)cuda_api_find("cudaMalloc"), 3) & FVBPF_COOKIE_ALWAYS));
	CHECK_EQ(cuda_api_cookie((unsigned int)cuda_api_find("cudaMalloc"), 3) & 0xffffffffu,
		 (unsigned int)cuda_api_find("cudaMalloc"));
	/* the process slot rides in the cookie, as BPF reads it */
	CHECK_EQ(cuda_api_cookie((unsigned int)cuda_api_find("cudaMalloc"), 3) >> FVBPF_COOKIE_SLOT_SHIFT, 3);
}

/* cudaLaunchKernel(func, dim3 grid, dim3 block, args, shmem, stream):
 * each dim3 takes two registers, shmem and stream are on the stack. */
static void test_launch_runtime(void)
{
	struct api_call c = call_of("cudaLaunchKernel");
	char *j;

	c.args[0] = 0x401000;
	c.args[1] = 4 | (2ull << 32);
	c.args[2] = 1;
	c.args[3] = 128 | (1ull << 32);
	c.args[4] = 1;
	c.args[5] = 0x7ffd0000;
	c.args[6] = 256;
	c.args[7] = 0x1234;
	j = args_json(&c);
	CHECK_STR(j, ",\"grid\":[4,2,1],\"block\":[128,1,1],\"shared_memory\":256,\"stream\":\"0x1234\"");
	CHECK_EQ(cuda_api_launch_func(&c), 0x401000);
}

static void test_launch_exc_and_driver(void)
{
	struct api_call c = call_of("cudaLaunchKernelExC_ptsz");
	uint32_t dims[6] = { 8, 1, 1, 256, 1, 1 };
	uint64_t smem = 4096, stream = 0xabc;

	memcpy(c.deref, dims, sizeof(dims));
	memcpy(c.deref + 24, &smem, 8);
	memcpy(c.deref + 32, &stream, 8);
	c.deref_len = FVBPF_API_DEREF;
	c.args[1] = 0x402000;
	CHECK_STR(args_json(&c),
		  ",\"grid\":[8,1,1],\"block\":[256,1,1],\"shared_memory\":4096,\"stream\":\"0xabc\"");
	CHECK_EQ(cuda_api_launch_func(&c), 0x402000);

	/* a config pointer that could not be read decodes as zeros, not junk */
	c.deref_len = 0;
	CHECK_STR(args_json(&c),
		  ",\"grid\":[0,0,0],\"block\":[0,0,0],\"shared_memory\":0,\"stream\":\"0x0\"");

	/* cuLaunchKernel: 11 arguments, the last five on the stack */
	c = call_of("cuLaunchKernel");
	c.args[0] = 0xf00;
	c.args[1] = 3; c.args[2] = 2; c.args[3] = 1;
	c.args[4] = 64; c.args[5] = 2; c.args[6] = 1;
	c.args[7] = 512; c.args[8] = 0x99;
	CHECK_STR(args_json(&c), ",\"grid\":[3,2,1],\"block\":[64,2,1],\"shared_memory\":512,"
		  "\"function\":\"0xf00\",\"stream\":\"0x99\"");
}

static void test_copies_and_memory(void)
{
	struct api_call c = call_of("cudaMemcpyAsync");
	char buf[32];

	c.args[0] = 0x10; c.args[1] = 0x20; c.args[2] = 8192; c.args[3] = 2; c.args[4] = 0x1234;
	CHECK_STR(args_json(&c), ",\"bytes\":8192,\"kind\":\"DeviceToHost\",\"dst\":\"0x10\","
		  "\"src\":\"0x20\",\"stream\":\"0x1234\"");
	CHECK_EQ(cuda_api_bytes(&c), 8192);

	c = call_of("cudaMemcpy2D");
	c.args[4] = 256; c.args[5] = 4; c.args[6] = 1;
	CHECK_EQ(cuda_api_bytes(&c), 1024);
	CHECK_STR(args_json(&c), ",\"bytes\":1024,\"width\":256,\"height\":4,\"kind\":\"HostToDevice\"");
	/* The target's width x height: saturated, not wrapped to a small size. */
	c.args[4] = 1ull << 33; c.args[5] = 1ull << 31;
	CHECK(cuda_api_bytes(&c) == UINT64_MAX);
	CHECK_STR(args_json(&c), ",\"bytes\":18446744073709551615,\"width\":8589934592,"
		  "\"height\":2147483648,\"kind\":\"HostToDevice\"");

	c = call_of("cuMemcpyDtoHAsync_v2");
	c.args[2] = 77; c.args[3] = 0x5;
	CHECK_STR(args_json(&c), ",\"bytes\":77,\"kind\":\"DtoH\",\"stream\":\"0x5\"");

	/* cudaMalloc(void **ptr, size): the pointer comes back through out */
	c = call_of("cudaMalloc");
	c.args[1] = 1 << 20;
	c.out = 0x7f0000000000;
	CHECK_STR(args_json(&c), ",\"bytes\":1048576,\"ptr\":\"0x7f0000000000\"");

	c.ret = 35;
	CHECK_STR(cuda_api_ret_name(&c, buf, sizeof(buf)), "cudaErrorInsufficientDriver");
	c.ret = 0;
	CHECK_STR(cuda_api_ret_name(&c, buf, sizeof(buf)), "cudaSuccess");
	c.ret = 123456;
	CHECK_STR(cuda_api_ret_name(&c, buf, sizeof(buf)), "error 123456");
	c = call_of("cuMemAlloc_v2");
	c.ret = 2;
	CHECK_STR(cuda_api_ret_name(&c, buf, sizeof(buf)), "CUDA_ERROR_OUT_OF_MEMORY");
}

static void test_nccl(void)
{
	struct api_call c = call_of("ncclAllReduce");
	char buf[32];

	/* send, recv, count, datatype, op, comm, stream (7th on the stack) */
	c.args[2] = 1000; c.args[3] = 7; c.args[4] = 0; c.args[5] = 0xc0; c.args[6] = 0x5;
	CHECK_STR(args_json(&c), ",\"count\":1000,\"datatype\":\"float32\",\"op\":\"sum\","
		  "\"comm\":\"0xc0\",\"Collective name\":\"allreduce\",\"In msg nelems\":1000,"
		  "\"Out msg nelems\":1000,\"dtype\":\"Float\",\"bytes\":4000,\"stream\":\"0x5\"");
	c = call_of("ncclReduce");
	c.args[2] = 10; c.args[3] = 9; c.args[4] = 2; c.args[5] = 3; c.args[6] = 0xc1; c.args[7] = 0x6;
	CHECK_STR(args_json(&c), ",\"count\":10,\"datatype\":\"bfloat16\",\"op\":\"max\",\"root\":3,"
		  "\"comm\":\"0xc1\",\"Collective name\":\"reduce\",\"In msg nelems\":10,"
		  "\"Out msg nelems\":10,\"dtype\":\"BFloat16\",\"bytes\":20,\"stream\":\"0x6\"");
	c = call_of("ncclSend");
	c.args[1] = 5; c.args[2] = 4; c.args[3] = 1; c.args[4] = 0xc2; c.args[5] = 0x7;
	CHECK_STR(args_json(&c), ",\"count\":5,\"datatype\":\"int64\",\"peer\":1,\"comm\":\"0xc2\","
		  "\"Collective name\":\"send\",\"In msg nelems\":5,\"dtype\":\"Long\",\"bytes\":40,"
		  "\"stream\":\"0x7\"");
	/* the target's numbers: a count whose bytes overflow has none, an
	 * unknown datatype no dtype */
	c = call_of("ncclReduceScatter");
	c.args[2] = UINT64_MAX / 2; c.args[3] = 7; c.args[5] = 0xc3;
	CHECK(strstr(args_json(&c), "\"Out msg nelems\":9223372036854775807,\"dtype\":\"Float\",\"stream"));
	CHECK(!strstr(args_json(&c), "In msg nelems"));
	c.args[3] = 99;
	CHECK(!strstr(args_json(&c), "dtype"));
	c.ret = 5;
	CHECK_STR(cuda_api_ret_name(&c, buf, sizeof(buf)), "ncclInvalidUsage");
}

static struct fvbpf_api_enter enter(uint32_t tid, const char *sym, uint64_t ts, uint64_t a0)
{
	struct fvbpf_api_enter e;

	memset(&e, 0, sizeof(e));
	e.hdr.type = FVBPF_EV_API_ENTER;
	e.hdr.tid = tid;
	e.hdr.ts_ns = ts;
	e.api_id = (uint32_t)cuda_api_find(sym);
	e.args[0] = a0;
	return e;
}

static struct fvbpf_api_exit leave(uint32_t tid, const char *sym, uint64_t ts, int32_t ret)
{
	struct fvbpf_api_exit x;

	memset(&x, 0, sizeof(x));
	x.hdr.type = FVBPF_EV_API_EXIT;
	x.hdr.tid = tid;
	x.hdr.ts_ns = ts;
	x.api_id = (uint32_t)cuda_api_find(sym);
	x.ret = ret;
	return x;
}

/* A driver call inside a runtime call on one thread is its child. */
static void test_pairing_nested(void)
{
	struct api_pairing p = { 0 };
	struct fvbpf_api_enter e;
	struct fvbpf_api_exit x;
	struct api_call c;

	e = enter(1, "cudaLaunchKernel", 100, 0xaa);
	CHECK_EQ(api_pairing_enter(&p, &e), 0);
	e = enter(1, "cuLaunchKernel", 110, 0xbb);
	CHECK_EQ(api_pairing_enter(&p, &e), 0);
	/* another thread interleaves */
	e = enter(2, "cudaMalloc", 115, 0);
	CHECK_EQ(api_pairing_enter(&p, &e), 0);
	x = leave(1, "cuLaunchKernel", 120, 0);
	CHECK_EQ(api_pairing_exit(&p, &x, &c), 1);
	CHECK_STR(cuda_api_symbol(c.api_id), "cuLaunchKernel");
	CHECK_EQ(c.depth, 1);
	CHECK_EQ(c.start_ns, 110);
	CHECK_EQ(c.end_ns, 120);
	CHECK_EQ(c.args[0], 0xbb);
	x = leave(2, "cudaMalloc", 125, 35);
	CHECK_EQ(api_pairing_exit(&p, &x, &c), 1);
	CHECK_EQ(c.tid, 2);
	CHECK_EQ(c.depth, 0);
	CHECK_EQ(c.ret, 35);
	x = leave(1, "cudaLaunchKernel", 130, 35);
	CHECK_EQ(api_pairing_exit(&p, &x, &c), 1);
	CHECK_EQ(c.depth, 0);
	CHECK_EQ(c.args[0], 0xaa);
	CHECK_EQ(c.end_ns - c.start_ns, 30);
	CHECK_EQ(p.unmatched_exits + p.lost_returns, 0);
	api_pairing_free(&p);
}

/* Lost records: a return without entry, an entry whose return was dropped,
 * and calls still open when the process went away. */
static void test_pairing_losses(void)
{
	struct api_pairing p = { 0 };
	struct fvbpf_api_enter e;
	struct fvbpf_api_exit x;
	struct api_call c;
	int n = 0;

	x = leave(1, "cudaFree", 10, 0);
	CHECK_EQ(api_pairing_exit(&p, &x, &c), 0);
	CHECK_EQ(p.unmatched_exits, 1);

	e = enter(1, "cudaMemcpy", 20, 0);
	api_pairing_enter(&p, &e);
	e = enter(1, "cuMemcpyHtoD_v2", 21, 0); /* its return will be lost */
	api_pairing_enter(&p, &e);
	x = leave(1, "cudaMemcpy", 30, 0);
	CHECK_EQ(api_pairing_exit(&p, &x, &c), 1);
	CHECK_STR(cuda_api_symbol(c.api_id), "cudaMemcpy");
	CHECK_EQ(p.lost_returns, 1);

	e = enter(3, "cudaDeviceSynchronize", 40, 0);
	api_pairing_enter(&p, &e);
	e = enter(4, "cudaStreamSynchronize", 41, 0);
	api_pairing_enter(&p, &e);
	while (api_pairing_drain(&p, 99, &c)) {
		CHECK(c.no_return);
		CHECK_EQ(c.end_ns, 99);
		n++;
	}
	CHECK_EQ(n, 2);
	CHECK_EQ(p.lost_returns, 3);
	api_pairing_free(&p);
}

static void test_pairing_too_deep(void)
{
	struct api_pairing p = { 0 };
	struct fvbpf_api_enter e;
	int i;

	for (i = 0; i < API_STACK_MAX + 2; i++) {
		e = enter(7, "cudaMemset", (uint64_t)i, 0);
		CHECK_EQ(api_pairing_enter(&p, &e), 0);
	}
	CHECK_EQ(p.too_deep, 2);
	api_pairing_free(&p);
}

/* Calls whose return a drop lost stop parenting later calls. */
static void test_pairing_drop_before(void)
{
	struct api_pairing p = { 0 };
	struct fvbpf_api_enter e;
	struct fvbpf_api_exit x;
	struct api_call c;

	e = enter(1, "cudaMalloc", 10, 0); /* its return was dropped */
	api_pairing_enter(&p, &e);
	e = enter(1, "cudaFree", 20, 0);   /* ditto */
	api_pairing_enter(&p, &e);
	e = enter(1, "cudaMemcpy", 100, 0); /* this segment's */
	api_pairing_enter(&p, &e);
	api_pairing_drop_before(&p, 1, 50);
	CHECK_EQ(p.lost_returns, 2);
	x = leave(1, "cudaMemcpy", 110, 0);
	CHECK_EQ(api_pairing_exit(&p, &x, &c), 1);
	CHECK_EQ(c.depth, 0);   /* no longer nested under the stale calls */
	CHECK_EQ(c.start_ns, 100);
	api_pairing_drop_before(&p, 1, 1000); /* nothing left: no change */
	api_pairing_drop_before(&p, 9, 1000); /* unknown thread */
	CHECK_EQ(p.lost_returns, 2);
	e = enter(1, "cudaMemset", 200, 0);
	api_pairing_enter(&p, &e);
	CHECK_EQ(api_pairing_set_correlation(&p, 1, 5), 0);
	CHECK_EQ(api_pairing_set_correlation(&p, 1, 6), 0); /* a second callback */
	CHECK_EQ(api_pairing_set_correlation(&p, 1, 5), 0); /* the first again */
	x = leave(1, "cudaMemset", 210, 0);
	CHECK_EQ(api_pairing_exit(&p, &x, &c), 1);
	CHECK_EQ(c.correlation, 5);
	CHECK_EQ(c.correlation2, 6);
	CHECK_EQ(api_pairing_set_correlation(&p, 1, 7), -ENOENT); /* nothing open */
	api_pairing_free(&p);
}


/* Threads without end: an idle entry is reused, and when every entry has a
 * call open, a new thread's events are counted, not stored. */
static void test_pairing_thread_limit(void)
{
	struct api_pairing p = { 0 };
	struct fvbpf_api_enter e;
	struct fvbpf_api_exit x;
	struct api_call c;
	uint32_t tid;

	/* 20000 short-lived threads: the table stays at its bound. */
	for (tid = 1; tid <= 20000; tid++) {
		e = enter(tid, "cudaMemset", tid, 0);
		CHECK_EQ(api_pairing_enter(&p, &e), 0);
		x = leave(tid, "cudaMemset", tid + 1, 0);
		CHECK_EQ(api_pairing_exit(&p, &x, &c), 1);
	}
	CHECK(p.n <= API_MAX_THREADS);
	CHECK_EQ(p.threads_dropped, 0);
	/* Every entry busy: the next thread is dropped and counted. */
	for (tid = 100000; tid < 100000 + API_MAX_THREADS; tid++) {
		e = enter(tid, "cudaMemset", 1, 0);
		CHECK_EQ(api_pairing_enter(&p, &e), 0);
	}
	CHECK_EQ(p.threads_dropped, 0);
	e = enter(7, "cudaMemset", 2, 0);
	CHECK_EQ(api_pairing_enter(&p, &e), 0);
	CHECK_EQ(p.threads_dropped, 1);
	x = leave(7, "cudaMemset", 3, 0);
	CHECK_EQ(api_pairing_exit(&p, &x, &c), 0);
	CHECK_EQ(p.n, API_MAX_THREADS);
	api_pairing_free(&p);
}

int main(void)
{
	RUN(test_table);
	RUN(test_launch_runtime);
	RUN(test_launch_exc_and_driver);
	RUN(test_copies_and_memory);
	RUN(test_nccl);
	RUN(test_pairing_nested);
	RUN(test_pairing_losses);
	RUN(test_pairing_too_deep);
	RUN(test_pairing_drop_before);
	RUN(test_pairing_thread_limit);
	UNIT_DONE();
}
