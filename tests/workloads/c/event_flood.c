// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * As many marker events per second as the machine can make, for the
 * throughput and memory tests and `make bench`.  Each step: thread 0 opens
 * training_train_one_step (one segment), then every thread emits --pairs
 * training_forward begin/end pairs inside it, then thread 0 closes it.
 * Threads meet at a barrier around each step, so a segment holds
 * threads * pairs slices.  --pairs 0 never closes the step (one segment
 * that grows for the whole run).
 *
 *   event_flood [--threads N] [--pairs K] [--seconds S] [--wait-signal]
 *
 * With --wait-signal it waits for SIGUSR1 before the counted run and
 * counts only what it emitted after that: the test attaches first, then
 * signals.  At the end: "emitted steps=S pairs=P seconds=X".  It then waits
 * for SIGTERM (so the trace is closed by fvbpf's own detach, not an exit)
 * unless --exit.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "fvbpf/fvbpf.h"
#include "workload.h"

static long pairs_per_step = 2000;
static int nthreads = 1;
static double seconds = 3.0;
static pthread_barrier_t barrier;
static atomic_bool done;
static atomic_ulong pairs_total;
static unsigned long steps;

static void *flood(void *arg)
{
	long id = (long)arg, i;
	unsigned long mine = 0;

	for (;;) {
		pthread_barrier_wait(&barrier);
		if (atomic_load(&done))
			break;
		if (id == 0)
			fvbpf_region_begin("training_train_one_step");
		pthread_barrier_wait(&barrier);
		for (i = 0; pairs_per_step == 0 || i < pairs_per_step; i++) {
			fvbpf_region_begin("training_forward");
			fvbpf_region_end("training_forward");
			mine++;
			if (pairs_per_step == 0 && (i & 1023) == 0 && atomic_load(&done))
				break;
		}
		pthread_barrier_wait(&barrier);
		if (id == 0) {
			fvbpf_region_end("training_train_one_step");
			steps++;
		}
	}
	atomic_fetch_add(&pairs_total, mine);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "pairs", required_argument, NULL, 'k' },
		{ "seconds", required_argument, NULL, 's' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "exit", no_argument, NULL, 'x' },
		{},
	};
	pthread_t th[64];
	int c, wait = 0, exit_at_end = 0;
	long i;
	uint64_t t0, t1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't': nthreads = atoi(optarg); break;
		case 'k': pairs_per_step = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'w': wait = 1; break;
		case 'x': exit_at_end = 1; break;
		default:
			fprintf(stderr, "usage: %s [--threads N] [--pairs K] [--seconds S] "
				"[--wait-signal] [--exit]\n", argv[0]);
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64 || pairs_per_step < 0 || seconds <= 0) {
		fprintf(stderr, "event_flood: bad arguments\n");
		return 2;
	}
	wl_start();
	if (wait && wl_wait_go())
		return 1;
	if (pthread_barrier_init(&barrier, NULL, (unsigned)nthreads + 1))
		return 1;
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, flood, (void *)i))
			return 1;
	t0 = wl_now_ns();
	/* The main thread only paces the steps: it joins every barrier. */
	for (;;) {
		int stop = wl_stop || (double)(wl_now_ns() - t0) / 1e9 >= seconds;

		if (stop)
			atomic_store(&done, 1);
		pthread_barrier_wait(&barrier);
		if (stop)
			break;
		pthread_barrier_wait(&barrier);
		if (pairs_per_step == 0) {
			while (!wl_stop && (double)(wl_now_ns() - t0) / 1e9 < seconds)
				wl_sleep_us(10000);
			atomic_store(&done, 1);
		}
		pthread_barrier_wait(&barrier);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	t1 = wl_now_ns();
	printf("emitted steps=%lu pairs=%lu seconds=%.3f\n", steps,
	       atomic_load(&pairs_total), (double)(t1 - t0) / 1e9);
	while (!exit_at_end && !wl_stop)
		wl_sleep_us(10000);
	return 0;
}
