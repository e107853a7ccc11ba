/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What the test workloads share: the "pid=" line, SIGUSR1 to start the
 * counted steps (--wait-signal, 30 s at most), SIGTERM/SIGINT to stop, and
 * a sleep that a stop interrupts.  Header-only, C and CUDA C++.
 */
#ifndef FVBPF_TEST_WORKLOAD_H
#define FVBPF_TEST_WORKLOAD_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t wl_go, wl_stop;

static void wl_on_usr1(int sig) { (void)sig; wl_go = 1; }
static void wl_on_term(int sig) { (void)sig; wl_stop = 1; }

/* CLOCK_MONOTONIC in milliseconds. */
static inline double wl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A sleep of @ms that signals do not cut short. */
static inline void wl_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Signals first, then "pid=": whoever reads the pid may signal at once. */
static inline void wl_start(void)
{
	signal(SIGUSR1, wl_on_usr1);
	signal(SIGTERM, wl_on_term);
	signal(SIGINT, wl_on_term);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid=%d\n", getpid());
}

static inline void wl_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && !wl_stop)
		;
}

static inline uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Wait for SIGUSR1 (or a stop); -1 and "no signal" after 30 s. */
static inline int wl_wait_go(void)
{
	long waited = 0;

	while (!wl_go && !wl_stop) {
		wl_sleep_us(10000);
		if (++waited > 3000) {
			printf("no signal\n");
			return -1;
		}
	}
	return 0;
}

#endif /* FVBPF_TEST_WORKLOAD_H */
