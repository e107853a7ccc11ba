// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A simulated training loop that uses the fvbpf markers: the demo workload
 * and the C workload of the end-to-end tests.  It counts its own region
 * invocations so that tests can compare fvbpf's output with the truth.
 *
 *   train > train_one_step > dataloader, forward, backward, optimizer,
 *                            callbacks (+ an unregistered region)
 * A helper thread runs a "training_dataloader" region of its own inside each
 * step when --threads is given (a prefetching worker).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fvbpf/fvbpf.h"
#include "workload.h"

static int step_ms = 20, use_threads, do_work;
static unsigned long n_step, n_dl, n_fwd, n_bwd, n_opt, n_cb, n_train, n_worker_dl;
static pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t worker_cond = PTHREAD_COND_INITIALIZER;
static int worker_todo, worker_done, worker_quit;


/* Some real CPU work so that demo traces show compute, not only sleep. */
static double burn(int n)
{
	static double a[64][64], b[64][64], c[64][64];
	int i, j, k, r;

	for (r = 0; r < n; r++)
		for (i = 0; i < 64; i++)
			for (j = 0; j < 64; j++) {
				double s = 0;

				for (k = 0; k < 64; k++)
					s += a[i][k] * b[k][j] + 1e-9;
				c[i][j] = s;
			}
	return c[1][1];
}

static void phase(const char *region, unsigned long *counter, int share)
{
	fvbpf_region_begin(region);
	if (do_work)
		burn(share);
	wl_sleep_us((long)step_ms * 1000 * share / 12);
	fvbpf_region_end(region);
	(*counter)++;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "dl_worker");
	pthread_mutex_lock(&worker_lock);
	for (;;) {
		while (!worker_todo && !worker_quit)
			pthread_cond_wait(&worker_cond, &worker_lock);
		if (worker_quit)
			break;
		worker_todo = 0;
		pthread_mutex_unlock(&worker_lock);
		phase("training_dataloader", &n_worker_dl, 1);
		pthread_mutex_lock(&worker_lock);
		worker_done = 1;
		pthread_cond_broadcast(&worker_cond);
	}
	pthread_mutex_unlock(&worker_lock);
	return NULL;
}

static void one_step(void)
{
	fvbpf_region_begin("profiler_region_training_train_one_step");
	if (use_threads) {
		pthread_mutex_lock(&worker_lock);
		worker_todo = 1;
		worker_done = 0;
		pthread_cond_broadcast(&worker_cond);
		pthread_mutex_unlock(&worker_lock);
	}
	phase("training_dataloader", &n_dl, 1);
	phase("Training_Forward", &n_fwd, 3);
	phase("  training_backward ", &n_bwd, 4);
	phase("training_optimizer", &n_opt, 2);
	phase("training_callbacks", &n_cb, 1);
	fvbpf_region_begin("not_a_registered_region");
	fvbpf_region_end("not_a_registered_region");
	if (use_threads) {
		pthread_mutex_lock(&worker_lock);
		while (!worker_done)
			pthread_cond_wait(&worker_cond, &worker_lock);
		pthread_mutex_unlock(&worker_lock);
	}
	fvbpf_region_end("profiler_region_training_train_one_step");
	n_step++;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "steps", required_argument, NULL, 's' },
		{ "step-ms", required_argument, NULL, 'm' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "idle", no_argument, NULL, 'i' },
		{ "threads", no_argument, NULL, 't' },
		{ "work", no_argument, NULL, 'k' },
		{ "exit-in-region", no_argument, NULL, 'x' },
		{ "train", no_argument, NULL, 'T' },
		{ "hang-in-region", no_argument, NULL, 'H' },
		{ "wait-attached", no_argument, NULL, 'A' },
		{},
	};
	long steps = 3, i;
	int wait_signal = 0, idle = 0, exit_in_region = 0, train = 0, hang = 0, wait_att = 0, c;
	pthread_t th;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': steps = atol(optarg); break;
		case 'm': step_ms = atoi(optarg); break;
		case 'w': wait_signal = 1; break;
		case 'i': idle = 1; break;
		case 't': use_threads = 1; break;
		case 'k': do_work = 1; break;
		case 'x': exit_in_region = 1; break;
		case 'T': train = 1; break;
		case 'H': hang = 1; break;
		case 'A': wait_att = 1; break;
		default:
			fprintf(stderr, "usage: %s [--steps N (0: forever)] [--step-ms MS] [--wait-signal] "
				"[--idle] [--threads] [--work] [--exit-in-region] [--hang-in-region] [--train] "
				"[--wait-attached]\n", argv[0]);
			return 2;
		}
	}
	wl_start();
	if (use_threads && pthread_create(&th, NULL, worker, NULL)) {
		perror("pthread_create");
		return 1;
	}
	if (wait_signal && wl_wait_go())
		return 2;
	/* What a user would write: start the counted steps once traced. */
	for (i = 0; wait_att && !fvbpf_attached() && !wl_stop; i++) {
		if (i > 12000) { /* 2 minutes: a busy machine can take one to start fvbpf */
			printf("never attached\n");
			return 2;
		}
		wl_sleep_us(10000);
	}
	if (wait_att)
		printf("saw attached\n");
	if (train)
		fvbpf_region_begin("training_train");
	for (i = 0; (steps == 0 || i < steps) && !wl_stop; i++)
		one_step();
	if (train) {
		fvbpf_region_end("training_train");
		n_train++;
	}
	printf("counts train_one_step=%lu dataloader=%lu forward=%lu backward=%lu optimizer=%lu "
	       "callbacks=%lu worker_dataloader=%lu train=%lu\n",
	       n_step, n_dl, n_fwd, n_bwd, n_opt, n_cb, n_worker_dl, n_train);
	printf("attached=%d\n", fvbpf_attached());
	if (exit_in_region) {
		fvbpf_region_begin("training_train_one_step");
		fvbpf_region_begin("training_forward");
		wl_sleep_us(200000);
		printf("exiting inside a region\n");
		_exit(0);
	}
	if (hang) {
		/* Stay inside a step until told to wl_stop: fvbpf sees it open. */
		fvbpf_region_begin("training_train_one_step");
		fvbpf_region_begin("training_forward");
		printf("hanging inside a region\n");
		while (!wl_stop)
			wl_sleep_us(20000);
		fvbpf_region_end("training_forward");
		fvbpf_region_end("training_train_one_step");
		printf("attached=%d\n", fvbpf_attached());
		return 0;
	}
	while (idle && !wl_stop) {
		printf("attached=%d\n", fvbpf_attached());
		wl_sleep_us(100000);
	}
	if (use_threads) {
		pthread_mutex_lock(&worker_lock);
		worker_quit = 1;
		pthread_cond_broadcast(&worker_cond);
		pthread_mutex_unlock(&worker_lock);
		pthread_join(th, NULL);
	}
	return 0;
}
