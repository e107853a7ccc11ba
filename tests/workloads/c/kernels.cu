// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Real CUDA kernels launched with <<<>>> inside fvbpf regions, for the
 * end-to-end tests of fvbpf's launch probes and kernel naming.  Built twice
 * from this file: kernels_shared (launches go through libcudart.so.13) and
 * kernels_static (cudart linked into the executable, so the launch
 * functions are local symbols of the executable itself).
 *
 * No GPU is needed: without a driver every launch fails with 35
 * (cudaErrorInsufficientDriver), but nvcc's host stub still calls the
 * runtime's launch function with the kernel's configuration, which is what
 * fvbpf probes.  With a GPU the kernels really run.
 *
 * Each step:
 *   training_train_one_step
 *     training_forward
 *       scale<<<dim3(8,1,1), dim3(256,1,1), 0, 0>>>            twice
 *       fv::tmpl<7><<<2, 64>>>                                  once
 *       fv::detail::reduce_rows_with_a_deliberately_long_kernel_name
 *         <float, fv::detail::Plus<float>, 4><<<dim3(3,1,1), dim3(32,1,1), 128, 0>>>  once
 *     cudaDeviceSynchronize
 * Outside every region, before the first step: one launch of each kernel
 * (so three), and the allocations; after the last step: the frees.
 *
 * Output, one line each (stdout is line buffered):
 *   pid=<pid>
 *   (with --wait-signal, "no signal" and exit 2 if no SIGUSR1 in 30 s)
 *   launch_error=<code> <name>          once, what the first launch left behind
 *   args scale grid=8,1,1 block=256,1,1 shmem=0 stream=0x0 tmpl grid=2,1,1
 *        block=64,1,1 shmem=0 stream=0x0 long grid=3,1,1 block=32,1,1
 *        shmem=128 stream=0x0                                          (one line)
 *   counts steps=N scale=N tmpl=N long=N cudaLaunchKernel=N cudaDeviceSynchronize=N
 *   outside cudaLaunchKernel=N cudaMalloc=N cudaFree=N cudaDeviceSynchronize=N
 *           cudaGetLastError=N                                         (one line)
 *   attached=<0|1>
 * and with --idle, attached=<0|1> every 100 ms until SIGTERM/SIGINT.
 * The counts are <<<>>> launches (each reaches the runtime's
 * cudaLaunchKernel once) and runtime calls made by this file.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "fvbpf/fvbpf.h"
#include "workload.h"

__global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= a;
}

namespace fv {

template <int N> __global__ void tmpl(int *p)
{
	p[blockIdx.x * blockDim.x + threadIdx.x] = N;
}

namespace detail {

template <typename T> struct Plus {
	__device__ T operator()(T a, T b) const { return a + b; }
};

template <typename T, typename Op, int K>
__global__ void reduce_rows_with_a_deliberately_long_kernel_name(const T *in, T *out, int rows, Op op)
{
	extern __shared__ unsigned char smem[];
	T *part = reinterpret_cast<T *>(smem);
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	T acc = T();

	if (r < rows)
		for (int k = 0; k < K; k++)
			acc = op(acc, in[r * K + k]);
	part[threadIdx.x] = acc;
	__syncthreads();
	if (r < rows)
		out[r] = part[threadIdx.x];
}

} // namespace detail
} // namespace fv

#define SCALE_N 2048
#define TMPL_THREADS (2 * 64)
#define LONG_ROWS (3 * 32)
#define LONG_K 4
#define LONG_SHMEM (32 * sizeof(float))

static int step_ms = 10;
static unsigned long n_step, n_scale, n_tmpl, n_long, n_launch, n_sync;
static unsigned long out_launch, out_malloc, out_free, out_sync, out_lasterr;
static float *x, *rows_in, *rows_out;
static int *ints;


/* Each launcher counts one <<<>>> in the counters it is given. */
static void launch_scale(unsigned long *kernel, unsigned long *launch)
{
	scale<<<dim3(8, 1, 1), dim3(256, 1, 1), 0, 0>>>(x, 2.0f, SCALE_N);
	if (kernel)
		(*kernel)++;
	(*launch)++;
}

static void launch_tmpl(unsigned long *kernel, unsigned long *launch)
{
	fv::tmpl<7><<<2, 64>>>(ints);
	if (kernel)
		(*kernel)++;
	(*launch)++;
}

static void launch_long(unsigned long *kernel, unsigned long *launch)
{
	fv::detail::reduce_rows_with_a_deliberately_long_kernel_name<float, fv::detail::Plus<float>, LONG_K>
		<<<dim3(3, 1, 1), dim3(32, 1, 1), LONG_SHMEM, 0>>>(rows_in, rows_out, LONG_ROWS,
								   fv::detail::Plus<float>());
	if (kernel)
		(*kernel)++;
	(*launch)++;
}

template <typename T> static T *device_alloc(size_t count)
{
	void *p = NULL;

	out_malloc++;
	if (cudaMalloc(&p, count * sizeof(T)) != cudaSuccess)
		return NULL;
	return static_cast<T *>(p);
}

static void one_step(void)
{
	fvbpf_region_begin("training_train_one_step");
	fvbpf_region_begin("training_forward");
	launch_scale(&n_scale, &n_launch);
	launch_scale(&n_scale, &n_launch);
	launch_tmpl(&n_tmpl, &n_launch);
	launch_long(&n_long, &n_launch);
	wl_sleep_us((long)step_ms * 1000);
	fvbpf_region_end("training_forward");
	n_sync++;
	cudaDeviceSynchronize();
	fvbpf_region_end("training_train_one_step");
	n_step++;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "steps", required_argument, NULL, 's' },
		{ "step-ms", required_argument, NULL, 'm' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "idle", no_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	long steps = 3, i;
	int wait_signal = 0, idle = 0, c;
	cudaError_t err;

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

	/* Outside every region. */
	x = device_alloc<float>(SCALE_N);
	ints = device_alloc<int>(TMPL_THREADS);
	rows_in = device_alloc<float>(LONG_ROWS * LONG_K);
	rows_out = device_alloc<float>(LONG_ROWS);
	launch_scale(NULL, &out_launch);
	out_lasterr++;
	err = cudaGetLastError();
	printf("launch_error=%d %s\n", (int)err, cudaGetErrorName(err));
	launch_tmpl(NULL, &out_launch);
	launch_long(NULL, &out_launch);
	out_sync++;
	cudaDeviceSynchronize();
	printf("args scale grid=8,1,1 block=256,1,1 shmem=0 stream=0x0 "
	       "tmpl grid=2,1,1 block=64,1,1 shmem=0 stream=0x0 "
	       "long grid=3,1,1 block=32,1,1 shmem=%zu stream=0x0\n", (size_t)LONG_SHMEM);

	for (i = 0; (steps == 0 || i < steps) && !wl_stop; i++)
		one_step();

	/* Outside every region again: cudaFree(NULL) is a valid call too. */
	out_free += 4;
	cudaFree(x);
	cudaFree(ints);
	cudaFree(rows_in);
	cudaFree(rows_out);

	printf("counts steps=%lu scale=%lu tmpl=%lu long=%lu cudaLaunchKernel=%lu "
	       "cudaDeviceSynchronize=%lu\n", n_step, n_scale, n_tmpl, n_long, n_launch, n_sync);
	printf("outside cudaLaunchKernel=%lu cudaMalloc=%lu cudaFree=%lu "
	       "cudaDeviceSynchronize=%lu cudaGetLastError=%lu\n",
	       out_launch, out_malloc, out_free, out_sync, out_lasterr);
	printf("attached=%d\n", fvbpf_attached());
	while (idle && !wl_stop) {
		printf("attached=%d\n", fvbpf_attached());
		wl_sleep_us(100000);
	}
	return 0;
}
