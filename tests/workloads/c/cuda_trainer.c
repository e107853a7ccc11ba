// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A training loop with fvbpf markers that calls the real libcudart, for the
 * end-to-end tests of fvbpf's CUDA runtime probes.  It needs the CUDA
 * toolkit, not a GPU: without a driver every runtime call returns 35
 * (cudaErrorInsufficientDriver), but each one is entered with its arguments,
 * so the probes see it.  It counts its own calls so that tests can compare
 * fvbpf's output with the truth.
 *
 * Each step:
 *   training_train_one_step
 *     cudaMallocHost
 *     training_forward
 *       cudaMalloc cudaMemcpy cudaMemset cudaLaunchKernel cudaMemcpyAsync
 *       cudaMemsetAsync cudaEventRecord
 *     training_backward
 *       cudaStreamWaitEvent cudaLaunchKernel cudaMemcpy2D
 *       cudaStreamSynchronize
 *     cudaDeviceSynchronize cudaFree cudaFreeHost
 * Between steps (and before the first and after the last) the same kind of
 * calls are made outside every region, and some inside a
 * "training_validation" region that is not inside a step: the tests enable
 * training_train_one_step and training_forward only, so none of those may
 * appear in a segment.
 *
 * The arguments are distinctive so that tests can find them in the trace:
 * launches of the host function scale_stub with grid 4,2,1, block 128,1,1,
 * 256 bytes of shared memory on stream 0x1234 (a made-up handle: the calls
 * fail anyway; with a GPU a real stream is created instead and printed).
 *
 * Output, one line each (stdout is line buffered):
 *   pid=<pid>
 *   (with --wait-signal, "no signal" and exit 2 if no SIGUSR1 in 30 s)
 *   args launch kernel=scale_stub func=<addr> grid=4,2,1 block=128,1,1 shmem=256
 *        stream=0x1234 malloc=1048576 memcpy=4096 memcpyasync=8192 memset=2048
 *        memsetasync=1024 memcpy2d=256x4 mallochost=65536   (one line)
 *   ret=<what the first cudaMalloc returned: 35 without a GPU, 0 with one>
 *   counts steps=N <api>=N ...        calls inside training_train_one_step
 *   forward <api>=N ...               of those, the calls inside training_forward
 *   validation <api>=N ...            calls inside training_validation only
 *   outside <api>=N ...               calls outside every region
 *   attached=<0|1>
 * and with --idle, attached=<0|1> every 100 ms until SIGTERM/SIGINT.
 * Every line of API counts lists every API below, zeros included, keyed by
 * the exact libcudart symbol name.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "fvbpf/fvbpf.h"
#include "workload.h"

#define APIS(X)                                                         \
	X(cudaMalloc) X(cudaMemcpy) X(cudaMemcpyAsync) X(cudaMemset)    \
	X(cudaMemsetAsync) X(cudaLaunchKernel) X(cudaDeviceSynchronize) \
	X(cudaStreamSynchronize) X(cudaFree) X(cudaEventRecord)         \
	X(cudaStreamWaitEvent) X(cudaMallocHost) X(cudaFreeHost)        \
	X(cudaMemcpy2D) X(cudaStreamCreate) X(cudaEventCreate)          \
	X(cudaStreamDestroy) X(cudaEventDestroy)

enum api {
#define X(n) API_##n,
	APIS(X)
#undef X
	N_API
};

static const char *const api_name[N_API] = {
#define X(n) #n,
	APIS(X)
#undef X
};

/* Where the calls happen; a call is counted in exactly one of these. */
enum where { OUTSIDE, VALIDATION, STEP, FORWARD, N_WHERE };

static enum where where;
static unsigned long calls[N_WHERE][N_API];

/* Count, then make the call: the count is the truth whatever it returns. */
#define CALL(n, ...) (calls[where][API_##n]++, n(__VA_ARGS__))

/* The distinctive values. */
#define GRID_X 4
#define GRID_Y 2
#define GRID_Z 1
#define BLOCK_X 128
#define BLOCK_Y 1
#define BLOCK_Z 1
#define SHMEM 256
#define FAKE_STREAM ((cudaStream_t)(uintptr_t)0x1234)
#define FAKE_EVENT ((cudaEvent_t)(uintptr_t)0x5678)
#define MALLOC_BYTES (1 << 20)
#define MEMCPY_BYTES 4096
#define MEMCPY_ASYNC_BYTES 8192
#define MEMSET_BYTES 2048
#define MEMSET_ASYNC_BYTES 1024
#define MEMCPY2D_WIDTH 256
#define MEMCPY2D_HEIGHT 4
#define MEMCPY2D_DPITCH 512
#define MEMCPY2D_SPITCH 256
#define MALLOC_HOST_BYTES 65536

static int step_ms = 10;
static cudaStream_t stream = FAKE_STREAM;
static cudaEvent_t event = FAKE_EVENT;
static unsigned char host_buf[65536];
static float scale_a = 2.0f;
static int scale_n = 1024;
static int first_ret = -1;


/*
 * The "kernel": a plain host function whose address is given to
 * cudaLaunchKernel, as nvcc's host stubs do.  fvbpf names a launch by
 * looking this address up in the executable's symbol table.  It is never
 * called; noinline and used keep it a function of its own.
 */
__attribute__((noinline, used)) static void scale_stub(float *x, float a, int n)
{
	int i;

	for (i = 0; i < n; i++)
		x[i] *= a;
}

static void launch(void *dptr)
{
	dim3 grid = { GRID_X, GRID_Y, GRID_Z };
	dim3 block = { BLOCK_X, BLOCK_Y, BLOCK_Z };
	void *args[3] = { &dptr, &scale_a, &scale_n };

	CALL(cudaLaunchKernel, (const void *)scale_stub, grid, block, args, SHMEM, stream);
}

/* Device memory, or a made-up address when allocation failed (no GPU). */
static void *device_alloc(void)
{
	void *p = NULL;
	cudaError_t ret = CALL(cudaMalloc, &p, MALLOC_BYTES);

	if (first_ret < 0)
		first_ret = (int)ret;
	return ret == cudaSuccess ? p : (void *)(uintptr_t)0xd00000000ULL;
}

static void device_free(void *p)
{
	/* Never hand the made-up address to a working runtime. */
	CALL(cudaFree, first_ret == cudaSuccess ? p : NULL);
}

/* One of everything, wherever we are. */
static void all_calls(void)
{
	void *h = NULL;
	void *p = device_alloc();

	if (CALL(cudaMallocHost, &h, MALLOC_HOST_BYTES) != cudaSuccess)
		h = NULL;
	CALL(cudaMemcpy, p, host_buf, MEMCPY_BYTES, cudaMemcpyHostToDevice);
	CALL(cudaMemset, p, 7, MEMSET_BYTES);
	launch(p);
	CALL(cudaMemcpyAsync, host_buf, p, MEMCPY_ASYNC_BYTES, cudaMemcpyDeviceToHost, stream);
	CALL(cudaMemsetAsync, p, 9, MEMSET_ASYNC_BYTES, stream);
	CALL(cudaEventRecord, event, stream);
	CALL(cudaStreamWaitEvent, stream, event, 0);
	CALL(cudaMemcpy2D, p, MEMCPY2D_DPITCH, host_buf, MEMCPY2D_SPITCH,
	     MEMCPY2D_WIDTH, MEMCPY2D_HEIGHT, cudaMemcpyHostToDevice);
	CALL(cudaStreamSynchronize, stream);
	CALL(cudaDeviceSynchronize);
	device_free(p);
	CALL(cudaFreeHost, h);
}

static void one_step(void)
{
	void *h = NULL, *p;

	fvbpf_region_begin("training_train_one_step");
	where = STEP;
	if (CALL(cudaMallocHost, &h, MALLOC_HOST_BYTES) != cudaSuccess)
		h = NULL;

	fvbpf_region_begin("training_forward");
	where = FORWARD;
	p = device_alloc();
	CALL(cudaMemcpy, p, host_buf, MEMCPY_BYTES, cudaMemcpyHostToDevice);
	CALL(cudaMemset, p, 7, MEMSET_BYTES);
	launch(p);
	CALL(cudaMemcpyAsync, host_buf, p, MEMCPY_ASYNC_BYTES, cudaMemcpyDeviceToHost, stream);
	CALL(cudaMemsetAsync, p, 9, MEMSET_ASYNC_BYTES, stream);
	CALL(cudaEventRecord, event, stream);
	wl_sleep_us((long)step_ms * 1000 / 2);
	where = STEP;
	fvbpf_region_end("training_forward");

	fvbpf_region_begin("training_backward");
	CALL(cudaStreamWaitEvent, stream, event, 0);
	launch(p);
	CALL(cudaMemcpy2D, p, MEMCPY2D_DPITCH, host_buf, MEMCPY2D_SPITCH,
	     MEMCPY2D_WIDTH, MEMCPY2D_HEIGHT, cudaMemcpyHostToDevice);
	CALL(cudaStreamSynchronize, stream);
	wl_sleep_us((long)step_ms * 1000 / 2);
	fvbpf_region_end("training_backward");

	CALL(cudaDeviceSynchronize);
	device_free(p);
	CALL(cudaFreeHost, h);
	where = OUTSIDE;
	fvbpf_region_end("training_train_one_step");
}

/* Calls in a region that is not inside a step (and not enabled by tests). */
static void validation(void)
{
	fvbpf_region_begin("training_validation");
	where = VALIDATION;
	all_calls();
	where = OUTSIDE;
	fvbpf_region_end("training_validation");
}

static void print_calls(const char *label, const unsigned long *a, const unsigned long *b)
{
	int i;

	printf("%s", label);
	for (i = 0; i < N_API; i++)
		printf(" %s=%lu", api_name[i], a[i] + (b ? b[i] : 0));
	printf("\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "steps", required_argument, NULL, 's' },
		{ "step-ms", required_argument, NULL, 'm' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "idle", no_argument, NULL, 'i' },
		{},
	};
	long steps = 3, i, n_step = 0;
	int wait_signal = 0, idle = 0, c;
	char label[48];

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': steps = atol(optarg); break;
		case 'm': step_ms = atoi(optarg); break;
		case 'w': wait_signal = 1; break;
		case 'i': idle = 1; break;
		default:
			fprintf(stderr, "usage: %s [--steps N (0: forever)] [--step-ms MS] "
				"[--wait-signal] [--idle]\n", argv[0]);
			return 2;
		}
	}
	wl_start();
	if (wait_signal && wl_wait_go())
		return 2;

	/* Outside every region: set-up, and one of everything. */
	if (CALL(cudaStreamCreate, &stream) != cudaSuccess)
		stream = FAKE_STREAM;
	if (CALL(cudaEventCreate, &event) != cudaSuccess)
		event = FAKE_EVENT;
	all_calls();
	printf("args launch kernel=scale_stub func=%p grid=%d,%d,%d block=%d,%d,%d shmem=%d "
	       "stream=%p malloc=%d memcpy=%d memcpyasync=%d memset=%d memsetasync=%d "
	       "memcpy2d=%dx%d mallochost=%d\n",
	       (void *)scale_stub, GRID_X, GRID_Y, GRID_Z, BLOCK_X, BLOCK_Y, BLOCK_Z, SHMEM,
	       (void *)stream, MALLOC_BYTES, MEMCPY_BYTES, MEMCPY_ASYNC_BYTES, MEMSET_BYTES,
	       MEMSET_ASYNC_BYTES, MEMCPY2D_WIDTH, MEMCPY2D_HEIGHT, MALLOC_HOST_BYTES);
	printf("ret=%d\n", first_ret);

	for (i = 0; (steps == 0 || i < steps) && !wl_stop; i++) {
		one_step();
		n_step++;
		/* Between steps: outside every region, then in validation. */
		all_calls();
		validation();
	}

	if (stream != FAKE_STREAM)
		CALL(cudaStreamDestroy, stream);
	if (event != FAKE_EVENT)
		CALL(cudaEventDestroy, event);

	snprintf(label, sizeof(label), "counts steps=%ld", n_step);
	print_calls(label, calls[STEP], calls[FORWARD]);
	print_calls("forward", calls[FORWARD], NULL);
	print_calls("validation", calls[VALIDATION], NULL);
	print_calls("outside", calls[OUTSIDE], NULL);
	printf("attached=%d\n", fvbpf_attached());
	while (idle && !wl_stop) {
		printf("attached=%d\n", fvbpf_attached());
		wl_sleep_us(100000);
	}
	return 0;
}
