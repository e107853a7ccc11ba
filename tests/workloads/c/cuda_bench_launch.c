// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Workload of `make bench` (tests/bench/bench.sh), CUDA section: a tight loop
 * of cudaLaunchKernel calls on the real libcudart, timed from inside the
 * process.  It needs the CUDA toolkit, not a GPU: without a driver every
 * call returns 35 (cudaErrorInsufficientDriver) quickly, but each one is
 * entered, so a uprobe on cudaLaunchKernel fires on every call.
 *
 * Each call is cudaLaunchKernel(bench_stub, 1x1x1, 1x1x1, NULL, 0, 0), where
 * bench_stub is a plain host function (as an nvcc host stub would be).  A few
 * calls are made before "pid=" is printed, so libcudart's one-time set-up is
 * over before a tool attaches and a tool counts exactly rounds x calls.
 *
 * One round = (with --inside: begin "training_train_one_step", an fvbpf region
 * that the benchmark enables, so every call is inside a segment) --calls
 * calls (with --inside: end "training_train_one_step").  Only the calls are
 * timed (CLOCK_MONOTONIC); the result is the median over --rounds rounds.  A
 * short pause between rounds lets a tracer's consumer and writer catch up so
 * that one round's backlog does not land in the next.
 *
 *   --calls N        cudaLaunchKernel calls per round, default 100000
 *   --rounds R       rounds, default 5
 *   --gap-ms MS      pause between rounds, default 200
 *   --inside         each round inside the region training_train_one_step
 *                    (otherwise no region is open during the calls)
 *   --wait-signal    wait for SIGUSR1 before the first round (a tool
 *                    attaches meanwhile)
 *   --fork           after the rounds, fork a child that makes one call
 *                    inside the region, prints "child=PID attached=A ret=E"
 *                    and waits to be killed (30 s at most); the parent
 *                    waits for it before its result
 *
 * Output (stdout, line buffered, one line each): "pid=PID" at start, then
 * "attached=A ret=E" when the rounds start (A: fvbpf_attached(), E: what the
 * last set-up call returned: 35 without a GPU), then
 * "ns_per_call=F calls=N rounds=R inside=0|1 min_ns_per_call=F
 * max_ns_per_call=F".
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "fvbpf/fvbpf.h"

#define MAX_ROUNDS 1000
#define REGION "training_train_one_step"
#define WARMUP_CALLS 16

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

/* The "kernel": never called; noinline and used keep it a function of its own. */
__attribute__((noinline, used)) static void bench_stub(void)
{
	__asm__ volatile("" ::: "memory");
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static long parse_long(const char *opt, const char *arg, long min, long max)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*arg == '\0' || *end || v < min || v > max) {
		fprintf(stderr, "cuda_bench_launch: invalid %s '%s' (%ld..%ld)\n", opt, arg,
			min, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "calls", required_argument, NULL, 'c' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "gap-ms", required_argument, NULL, 'g' },
		{ "inside", no_argument, NULL, 'i' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "fork", no_argument, NULL, 'f' },
		{},
	};
	static double per_call[MAX_ROUNDS];
	long calls = 100000, rounds = 5, gap_ms = 200, r, i, waited = 0;
	int inside = 0, wait_signal = 0, fork_child = 0, c;
	dim3 one = { 1, 1, 1 };
	cudaError_t ret = cudaSuccess;
	double t0, t1, med;
	sigset_t set;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': calls = parse_long("--calls", optarg, 1, 1L << 40); break;
		case 'r': rounds = parse_long("--rounds", optarg, 1, MAX_ROUNDS); break;
		case 'g': gap_ms = parse_long("--gap-ms", optarg, 0, 60000); break;
		case 'i': inside = 1; break;
		case 'w': wait_signal = 1; break;
		case 'f': fork_child = 1; break;
		default:
			fprintf(stderr, "usage: %s [--calls N] [--rounds R] [--gap-ms MS] "
				"[--inside] [--wait-signal] [--fork]\n", argv[0]);
			return 2;
		}
	}

	/* libcudart's one-time set-up (and its lazy binding) before any tool. */
	for (i = 0; i < WARMUP_CALLS; i++)
		ret = cudaLaunchKernel((const void *)bench_stub, one, one, NULL, 0, 0);

	/* Install the handler before announcing the pid: no signal is lost. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGUSR1, on_usr1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid=%d\n", getpid());
	fflush(stdout);

	if (wait_signal) {
		/* sigtimedwait: no busy loop that would steal a core from the tool. */
		struct timespec tmo = { 0, 100 * 1000000L };

		while (!go) {
			if (sigtimedwait(&set, NULL, &tmo) == SIGUSR1)
				break;
			if (++waited > 600) { /* 60 s */
				fprintf(stderr, "cuda_bench_launch: no SIGUSR1 within 60 s\n");
				return 2;
			}
		}
	}
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	printf("attached=%d ret=%d\n", fvbpf_attached(), (int)ret);

	for (r = 0; r < rounds; r++) {
		if (r && gap_ms)
			sleep_ms(gap_ms);
		if (inside)
			fvbpf_region_begin(REGION);
		t0 = now_ns();
		for (i = 0; i < calls; i++)
			cudaLaunchKernel((const void *)bench_stub, one, one, NULL, 0, 0);
		t1 = now_ns();
		if (inside)
			fvbpf_region_end(REGION);
		per_call[r] = (t1 - t0) / (double)calls;
	}

	if (fork_child) {
		pid_t pid = fork();

		if (pid == 0) {
			alarm(30);
			fvbpf_region_begin(REGION);
			ret = cudaLaunchKernel((const void *)bench_stub, one, one, NULL, 0, 0);
			fvbpf_region_end(REGION);
			printf("child=%d attached=%d ret=%d\n", getpid(), fvbpf_attached(), (int)ret);
			pause();
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}

	qsort(per_call, (size_t)rounds, sizeof(per_call[0]), cmp_double);
	med = rounds % 2 ? per_call[rounds / 2]
			 : (per_call[rounds / 2 - 1] + per_call[rounds / 2]) / 2;
	printf("ns_per_call=%.3f calls=%ld rounds=%ld inside=%d min_ns_per_call=%.3f "
	       "max_ns_per_call=%.3f\n",
	       med, calls, rounds, inside, per_call[0], per_call[rounds - 1]);
	return 0;
}
