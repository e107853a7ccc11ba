// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A marked training loop that loads libcudart only after it was told to
 * start, for the end-to-end test of CUDA libraries mapped after fvbpf
 * attached: fvbpf attaches while no libcudart is mapped, the test sends
 * SIGUSR1, this program dlopen()s libcudart and makes its calls through
 * dlsym()ed pointers inside the regions, and fvbpf must still see them (it
 * re-scans /proc/PID/maps).
 *
 * It is built by the generic workload rule: it does not link libcudart and
 * needs no CUDA header (dlopen is in glibc's libc since 2.34).  Without a
 * GPU every call returns 35 (cudaErrorInsufficientDriver) but is entered.
 *
 * Each step:
 *   training_train_one_step
 *     training_forward
 *       cudaMalloc(1048576) cudaMemcpy(4096, host to device) cudaMemset(7, 2048)
 *     cudaDeviceSynchronize cudaFree
 * Outside every region, after loading and before the first step: one of each.
 *
 * Options: --steps N, --step-ms MS, --wait-signal (load and run only after
 * SIGUSR1), --cudart PATH (default $CUDA_HOME/lib64/libcudart.so.13, else
 * /usr/local/cuda/lib64/libcudart.so.13), --after-load-ms MS (sleep between
 * loading and the first call), --wait-after-load (after loading and
 * printing "loaded", wait for another SIGUSR1 before the first call),
 * --idle.
 *
 * Output, one line each (stdout is line buffered):
 *   pid=<pid>
 *   mapped=0                    libcudart in /proc/self/maps before loading
 *   (with --wait-signal, "no signal" and exit 2 if no SIGUSR1 in 30 s)
 *   loaded cudart=<path> mapped=1
 *   (with --wait-after-load, "no signal" and exit 2 if no SIGUSR1 in 30 s)
 *   args malloc=1048576 memcpy=4096 memset=2048
 *   ret=<what the first cudaMalloc returned: 35 without a GPU>
 *   counts steps=N cudaMalloc=N cudaMemcpy=N cudaMemset=N cudaDeviceSynchronize=N cudaFree=N
 *   outside cudaMalloc=N cudaMemcpy=N cudaMemset=N cudaDeviceSynchronize=N cudaFree=N
 *   attached=<0|1>
 * and with --idle, attached=<0|1> every 100 ms until SIGTERM/SIGINT.
 * Exit status 3 when libcudart cannot be loaded ("dlopen failed: ...").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fvbpf/fvbpf.h"

/* The few libcudart declarations needed, ABI-compatible with the real ones. */
typedef int cuda_error_t;
enum { CUDA_SUCCESS = 0, CUDA_MEMCPY_HOST_TO_DEVICE = 1 };

#define APIS(X) X(cudaMalloc) X(cudaMemcpy) X(cudaMemset) X(cudaDeviceSynchronize) X(cudaFree)

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

static struct {
	cuda_error_t (*cudaMalloc)(void **ptr, size_t size);
	cuda_error_t (*cudaMemcpy)(void *dst, const void *src, size_t count, int kind);
	cuda_error_t (*cudaMemset)(void *ptr, int value, size_t count);
	cuda_error_t (*cudaDeviceSynchronize)(void);
	cuda_error_t (*cudaFree)(void *ptr);
} rt;

enum where { OUTSIDE, STEP, N_WHERE };

static enum where where;
static unsigned long calls[N_WHERE][N_API];

#define CALL(n, ...) (calls[where][API_##n]++, rt.n(__VA_ARGS__))

#define MALLOC_BYTES (1 << 20)
#define MEMCPY_BYTES 4096
#define MEMSET_BYTES 2048

static volatile sig_atomic_t n_usr1, stop;
static int step_ms = 10;
static unsigned char host_buf[MEMCPY_BYTES];
static int first_ret = -1;

static void on_usr1(int sig) { (void)sig; n_usr1++; }
static void on_term(int sig) { (void)sig; stop = 1; }

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && !stop)
		;
}

/* Wait until SIGUSR1 number @n arrived; 0, or -1 after 30 s. */
static int wait_usr1(int n)
{
	long waited = 0;

	while (n_usr1 < n && !stop) {
		sleep_us(10000);
		if (++waited > 3000)
			return -1;
	}
	return 0;
}

static int cudart_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "libcudart") != NULL;
	fclose(f);
	return found;
}

static int load(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return -1;
	}
#define X(n)                                                             \
	*(void **)&rt.n = dlsym(h, #n);                                  \
	if (!rt.n) {                                                     \
		printf("dlsym failed: %s: %s\n", #n, dlerror());         \
		return -1;                                               \
	}
	APIS(X)
#undef X
	return 0;
}

static void *device_alloc(void)
{
	void *p = NULL;
	cuda_error_t ret = CALL(cudaMalloc, &p, MALLOC_BYTES);

	if (first_ret < 0)
		first_ret = ret;
	return ret == CUDA_SUCCESS ? p : NULL;
}

static void one_step(void)
{
	void *p;

	fvbpf_region_begin("training_train_one_step");
	where = STEP;
	fvbpf_region_begin("training_forward");
	p = device_alloc();
	CALL(cudaMemcpy, p, host_buf, MEMCPY_BYTES, CUDA_MEMCPY_HOST_TO_DEVICE);
	CALL(cudaMemset, p, 7, MEMSET_BYTES);
	sleep_us((long)step_ms * 1000);
	fvbpf_region_end("training_forward");
	CALL(cudaDeviceSynchronize);
	CALL(cudaFree, p);
	where = OUTSIDE;
	fvbpf_region_end("training_train_one_step");
}

static void print_calls(const char *label, const unsigned long *a)
{
	int i;

	printf("%s", label);
	for (i = 0; i < N_API; i++)
		printf(" %s=%lu", api_name[i], a[i]);
	printf("\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "steps", required_argument, NULL, 's' },
		{ "step-ms", required_argument, NULL, 'm' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "cudart", required_argument, NULL, 'c' },
		{ "after-load-ms", required_argument, NULL, 'a' },
		{ "wait-after-load", no_argument, NULL, 'W' },
		{ "idle", no_argument, NULL, 'i' },
		{},
	};
	long steps = 3, i, n_step = 0;
	int wait_signal = 0, wait_after_load = 0, after_load_ms = 0, idle = 0, c;
	const char *cuda_home = getenv("CUDA_HOME");
	char path[4096], label[48];
	void *p;

	if (cuda_home && *cuda_home)
		snprintf(path, sizeof(path), "%s/lib64/libcudart.so.13", cuda_home);
	else
		snprintf(path, sizeof(path), "/usr/local/cuda/lib64/libcudart.so.13");
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': steps = atol(optarg); break;
		case 'm': step_ms = atoi(optarg); break;
		case 'w': wait_signal = 1; break;
		case 'c': snprintf(path, sizeof(path), "%s", optarg); break;
		case 'a': after_load_ms = atoi(optarg); break;
		case 'W': wait_after_load = 1; break;
		case 'i': idle = 1; break;
		default:
			fprintf(stderr, "usage: %s [--steps N (0: forever)] [--step-ms MS] [--wait-signal] "
				"[--cudart PATH] [--after-load-ms MS] [--wait-after-load] [--idle]\n", argv[0]);
			return 2;
		}
	}
	signal(SIGUSR1, on_usr1);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid=%d\n", getpid());
	printf("mapped=%d\n", cudart_mapped());
	if (wait_signal && wait_usr1(1)) {
		printf("no signal\n");
		return 2;
	}

	if (load(path))
		return 3;
	printf("loaded cudart=%s mapped=%d\n", path, cudart_mapped());
	if (wait_after_load && wait_usr1(n_usr1 + 1)) {
		printf("no signal\n");
		return 2;
	}
	if (after_load_ms > 0)
		sleep_us((long)after_load_ms * 1000);

	/* Outside every region: one of each. */
	p = device_alloc();
	CALL(cudaMemcpy, p, host_buf, MEMCPY_BYTES, CUDA_MEMCPY_HOST_TO_DEVICE);
	CALL(cudaMemset, p, 7, MEMSET_BYTES);
	CALL(cudaDeviceSynchronize);
	CALL(cudaFree, p);
	printf("args malloc=%d memcpy=%d memset=%d\n", MALLOC_BYTES, MEMCPY_BYTES, MEMSET_BYTES);
	printf("ret=%d\n", first_ret);

	for (i = 0; (steps == 0 || i < steps) && !stop; i++) {
		one_step();
		n_step++;
	}

	snprintf(label, sizeof(label), "counts steps=%ld", n_step);
	print_calls(label, calls[STEP]);
	print_calls("outside", calls[OUTSIDE]);
	printf("attached=%d\n", fvbpf_attached());
	while (idle && !stop) {
		printf("attached=%d\n", fvbpf_attached());
		sleep_us(100000);
	}
	return 0;
}
