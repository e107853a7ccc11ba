// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A program started WITHOUT fvbpf (not linked with libfvbpf.so), for
 * `fvbpf attach --inject`.  It checks its own behaviour as it runs and
 * prints only what is deterministic, so a test can compare its output
 * with what it must be whatever happened to it from outside:
 *
 *   tick:  "tick N" every 10 ms for --count ticks (N continuous), then
 *          "done ticks=N sigusr1=S errors=E"
 *   sleep: one nanosleep of --ms; "sleep ok" when it returned 0 after at
 *          least that long (else "sleep ERROR ...")
 *   pipe:  a blocking read on a pipe a thread writes "x" into after --ms
 *   cond:  pthread_cond_wait until a thread signals it after --ms
 *   epoll: epoll_wait(-1) on a pipe a thread writes into after --ms
 *
 * --regions: each tick is a region training_train_one_step once an
 * injected libfvbpf.so shows up (looked up as FastVideo's lazy marker
 * lookup would: by the loaded object's name, never linked, no preload).
 * --threads N adds N busy threads (their counters must all advance).
 * SIGUSR1 is counted (SA_RESTART); SIGUSR2 makes "tick" mode stop early.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "injected.h"
#include "workload.h"

static volatile sig_atomic_t usr1, stop;
static long wait_ms = 2000;
static int pfd[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int signalled;
static atomic_ulong busy_count[64];
static atomic_int busy_stop;

typedef void (*marker_fn)(const char *);
static marker_fn region_begin, region_end;

/* The injected copy's markers, once it is there. */
static void find_injected(void)
{
	void *h = wl_injected_lib();

	if (!h)
		return;
	region_end = (marker_fn)dlsym(h, "fvbpf_region_end");
	region_begin = (marker_fn)dlsym(h, "fvbpf_region_begin");
}

static void on_usr1(int sig) { (void)sig; usr1++; }
static void on_usr2(int sig) { (void)sig; stop = 1; }



static void *waker(void *arg)
{
	(void)arg;
	wl_sleep_ms(wait_ms);
	pthread_mutex_lock(&mu);
	signalled = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	if (write(pfd[1], "x", 1) != 1)
		printf("waker ERROR write: %s\n", strerror(errno));
	return NULL;
}

static void *busy(void *arg)
{
	atomic_ulong *c = arg;

	while (!atomic_load_explicit(&busy_stop, memory_order_relaxed))
		atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
	return NULL;
}

static int run_tick(long count, int regions)
{
	struct timespec next;
	long i, errors = 0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0; i < count && !stop; i++) {
		if (regions && !region_begin)
			find_injected();
		if (region_begin)
			region_begin("training_train_one_step");
		printf("tick %ld\n", i);
		fflush(stdout);
		next.tv_nsec += 10000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		/* clock_nanosleep returns the error (EINTR only with a handler
		 * that has no SA_RESTART, which we do not install). */
		while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL)) == EINTR)
			;
		if (r) {
			printf("tick ERROR clock_nanosleep: %s\n", strerror(r));
			errors++;
		}
		if (region_begin)
			region_end("training_train_one_step");
	}
	printf("done ticks=%ld sigusr1=%d errors=%ld\n", i, (int)usr1, errors);
	return errors != 0;
}

int main(int argc, char **argv)
{
	const char *mode = "tick";
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	long count = 300, nthreads = 0, i;
	int regions = 0;
	pthread_t th[64], wt;
	double t0, el;
	char c = 0;
	int ret = 0;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--regions"))
			regions = 1;
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--regions"))
			i--;
		else if (!strcmp(argv[i], "--mode"))
			mode = argv[i + 1];
		else if (!strcmp(argv[i], "--count"))
			count = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--ms"))
			wait_ms = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--threads"))
			nthreads = atol(argv[i + 1]) > 64 ? 64 : atol(argv[i + 1]);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	if (pipe(pfd))
		return 1;
	for (i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, busy, &busy_count[i]);
	printf("pid=%d\n", getpid());
	fflush(stdout);
	if (!strcmp(mode, "tick")) {
		ret = run_tick(count, regions);
	} else {
		/* Let the test start its attach first: the wait must be under way. */
		wl_sleep_ms(200);
		pthread_create(&wt, NULL, waker, NULL);
		printf("waiting %s\n", mode);
		fflush(stdout);
		t0 = wl_now_ms();
		if (!strcmp(mode, "sleep")) {
			struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000L };
			int r = nanosleep(&ts, NULL);

			el = wl_now_ms() - t0;
			if (r == 0 && el >= (double)wait_ms - 1)
				printf("sleep ok\n");
			else
				printf("sleep ERROR r=%d errno=%s after %.0f ms\n", r, strerror(errno), el);
		} else if (!strcmp(mode, "pipe")) {
			ssize_t n = read(pfd[0], &c, 1);

			if (n == 1 && c == 'x')
				printf("pipe ok\n");
			else
				printf("pipe ERROR n=%zd errno=%s\n", n, strerror(errno));
		} else if (!strcmp(mode, "cond")) {
			int r = 0;

			pthread_mutex_lock(&mu);
			while (!signalled && !r)
				r = pthread_cond_wait(&cv, &mu);
			pthread_mutex_unlock(&mu);
			if (r)
				printf("cond ERROR %d\n", r);
			else
				printf("cond ok\n");
		} else if (!strcmp(mode, "epoll")) {
			struct epoll_event ev = { .events = EPOLLIN }, got;
			int ep = epoll_create1(0), n;

			epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev);
			n = epoll_wait(ep, &got, 1, -1);
			if (n == 1)
				printf("epoll ok\n");
			else
				printf("epoll ERROR n=%d errno=%s\n", n, strerror(errno));
		}
		el = wl_now_ms() - t0;
		/* Woken by the waker, not earlier: it waited about --ms. */
		if (el >= (double)wait_ms - 50 && el <= (double)wait_ms + 1500)
			printf("waited ok\n");
		else
			printf("waited ERROR %.0f ms\n", el);
		pthread_join(wt, NULL);
	}
	atomic_store(&busy_stop, 1);
	for (i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		if (!atomic_load(&busy_count[i])) {
			printf("thread %ld ERROR never ran\n", i);
			ret = 1;
		}
	}
	if (nthreads)
		printf("threads ok %ld\n", nthreads);
	return ret;
}
