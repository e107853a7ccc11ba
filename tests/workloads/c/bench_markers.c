// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Workload of `make bench` (tests/bench/bench.sh): a tight loop over the
 * fvbpf region markers, timed from inside the process.
 *
 * One round = begin "training_train" (the enabled outer region, so fvbpf
 * opens a segment), then --hits/2 begin/end pairs of "training_forward" (an
 * enabled inner region: every call is a marker hit inside a segment), then end
 * "training_train".  Only the inner loop is timed (CLOCK_MONOTONIC).  The
 * result is the median over --rounds rounds, which damps the noise of a small
 * shared machine; a short pause between rounds lets a tracer's consumer catch
 * up so that one round's backlog does not land in the next.
 *
 *   --hits N           inner marker hits per round (begin and end both count;
 *                      rounded up to an even number), default 400000
 *   --rounds R         rounds, default 5
 *   --gap-ms MS        pause between rounds, default 200
 *   --force-semaphore  raise libfvbpf's semaphore ourselves (and make its
 *                      attach epoch odd, if it has one), so that the markers
 *                      call the probe functions with no loader attached (the
 *                      baseline, and the run under bpftrace, which does not
 *                      raise the semaphore)
 *   --wait-signal      wait for SIGUSR1 before the first round (a tool
 *                      attaches meanwhile)
 *
 * Output (stdout, one line each): "pid=PID" at start, then
 * "semaphore=V epoch=E" when the rounds start (E: 0 without an epoch), then
 * "clock_ns=F" (what one clock_gettime(CLOCK_MONOTONIC) costs here, the
 * fastest of 5 loops), then "ns_per_pair=F pairs=N rounds=R hits=H
 * min_ns_per_pair=F max_ns_per_pair=F".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fvbpf/fvbpf.h"
#include "fvbpf_events.h"

/*
 * libfvbpf.so's semaphore, which the kernel raises while fvbpf is attached.
 * Deliberately NOT declared `extern volatile unsigned short fvbpf_semaphore`:
 * a (PIE) executable that names a shared library's variable gets a copy
 * relocation, i.e. its own copy of the variable in its .bss, and the library's
 * markers then read that copy while the kernel raises the original in the
 * library's mapping, so the markers would never fire under fvbpf.  dlsym() on
 * the library's handle returns the library's own variable.
 */
static volatile unsigned short *semaphore;
/*
 * The markers also need an odd epoch in the library's control page (written
 * by the loader once its probes are in place; the page is wiped in forked
 * children): forcing the markers on means making it odd too.
 */
static volatile unsigned int *epoch;
static unsigned int saved_epoch;
/* And, as fvbpf asks, the markers hand their clock reading to the _ts
 * probes under that epoch: the path of a traced job. */
static volatile unsigned int *marker_ts_epoch;
static unsigned int saved_ts_epoch;

static void find_semaphore(void)
{
	void *h = dlopen("libfvbpf.so", RTLD_LAZY | RTLD_NOLOAD);

	if (h) {
		semaphore = dlsym(h, "fvbpf_semaphore");
		struct fvbpf_control *volatile *ctl = dlsym(h, "fvbpf_control");

		epoch = ctl && *ctl ? &(*ctl)->epoch : NULL;
		marker_ts_epoch = ctl && *ctl ? &(*ctl)->marker_ts_epoch : NULL;
	}
	if (!semaphore) {
		fprintf(stderr, "bench_markers: fvbpf_semaphore not found in libfvbpf.so: %s\n",
			h ? dlerror() : "library not loaded");
		exit(1);
	}
}

/* Make the markers call the probe functions as if a loader were attached. */
static void force_on(void)
{
	(*semaphore)++; /* counted like the kernel does: a loader's count survives */
	if (epoch) {
		saved_epoch = *epoch;
		if (!(saved_epoch & 1))
			*epoch = saved_epoch + 1;
		saved_ts_epoch = *marker_ts_epoch;
		*marker_ts_epoch = *epoch;
	}
}

static void force_off(void)
{
	(*semaphore)--;
	if (epoch) {
		*epoch = saved_epoch;
		*marker_ts_epoch = saved_ts_epoch;
	}
}

#define MAX_ROUNDS 1000
#define CLOCK_READS 200000

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
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
		fprintf(stderr, "bench_markers: invalid %s '%s' (%ld..%ld)\n", opt, arg, min, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hits", required_argument, NULL, 'h' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "gap-ms", required_argument, NULL, 'g' },
		{ "force-semaphore", no_argument, NULL, 'f' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{},
	};
	static double per_pair[MAX_ROUNDS];
	long hits = 400000, rounds = 5, gap_ms = 200, pairs, r, i, waited = 0;
	int force = 0, wait_signal = 0, c;
	double t0, t1, med, clk;
	sigset_t set;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'h': hits = parse_long("--hits", optarg, 2, 1L << 40); break;
		case 'r': rounds = parse_long("--rounds", optarg, 1, MAX_ROUNDS); break;
		case 'g': gap_ms = parse_long("--gap-ms", optarg, 0, 60000); break;
		case 'f': force = 1; break;
		case 'w': wait_signal = 1; break;
		default:
			fprintf(stderr, "usage: %s [--hits N] [--rounds R] [--gap-ms MS] "
				"[--force-semaphore] [--wait-signal]\n", argv[0]);
			return 2;
		}
	}
	pairs = (hits + 1) / 2;
	find_semaphore();

	/* Install the handler before announcing the pid: no signal is lost. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGUSR1, on_usr1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid=%d\n", getpid());

	if (wait_signal) {
		/* sigtimedwait: no busy loop that would steal a core from the tool. */
		struct timespec tmo = { 0, 100 * 1000000L };

		while (!go) {
			if (sigtimedwait(&set, NULL, &tmo) == SIGUSR1)
				break;
			if (++waited > 600) { /* 60 s */
				fprintf(stderr, "bench_markers: no SIGUSR1 within 60 s\n");
				return 2;
			}
		}
	}
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	if (force)
		force_on();
	printf("semaphore=%u epoch=%u\n", (unsigned int)*semaphore, epoch ? *epoch : 0);
	if (!!*semaphore != !!fvbpf_attached()) {
		fprintf(stderr, "bench_markers: the markers do not see the semaphore\n");
		return 1;
	}

	for (r = 0; r < rounds; r++) {
		if (r && gap_ms)
			sleep_ms(gap_ms);
		fvbpf_region_begin("training_train");
		t0 = now_ns();
		for (i = 0; i < pairs; i++) {
			fvbpf_region_begin("training_forward");
			fvbpf_region_end("training_forward");
		}
		t1 = now_ns();
		fvbpf_region_end("training_train");
		per_pair[r] = (t1 - t0) / (double)pairs;
	}

	if (force)
		force_off();
	/* What the library's clock read costs (it takes one per marker hit
	 * while probes are live, for the _ts probes): the bench counts it
	 * into fvbpf's cost per hit, which the forced-on baseline hides. */
	for (r = 0, clk = 1e9; r < 5; r++) {
		struct timespec ts;

		t0 = now_ns();
		for (i = 0; i < CLOCK_READS; i++)
			clock_gettime(CLOCK_MONOTONIC, &ts);
		t1 = now_ns();
		if ((t1 - t0) / CLOCK_READS < clk)
			clk = (t1 - t0) / CLOCK_READS;
	}
	printf("clock_ns=%.3f\n", clk);
	qsort(per_pair, (size_t)rounds, sizeof(per_pair[0]), cmp_double);
	med = rounds % 2 ? per_pair[rounds / 2]
			 : (per_pair[rounds / 2 - 1] + per_pair[rounds / 2]) / 2;
	printf("ns_per_pair=%.3f pairs=%ld rounds=%ld hits=%ld min_ns_per_pair=%.3f "
	       "max_ns_per_pair=%.3f\n",
	       med, pairs, rounds, 2 * pairs, per_pair[0], per_pair[rounds - 1]);
	return 0;
}
