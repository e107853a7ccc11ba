// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A traced process that forks, every way a job does: children must neither
 * crash nor change behaviour because the parent is traced (or was).
 *
 *   fork_matrix MODE [--children N]
 *
 * It waits for fvbpf_attached(), runs a few marked steps (so the kernel has
 * optimised its uprobes), then, by MODE:
 *   fork   N children (glibc fork) each run marked steps
 *   idle   N children that call nothing of fvbpf
 *   clone  N children made by the raw clone syscall (no fork handlers)
 *   late   N children forked now, which run marked steps only once the
 *          parent has seen fvbpf detach
 *   storm  a child every 2 ms, each running marked steps, until SIGTERM;
 *          the parent runs marked steps too (fvbpf comes and goes)
 *   serve  one child that runs marked steps until SIGTERM, printing
 *          "child=PID" (for tracing the child itself)
 * A child exits 0 if it ran its steps and fvbpf_attached() said 0 (it is not
 * traced), 3 if fvbpf_attached() said 1.  The parent prints
 * "children=N bad=M" (M: children that did not exit 0) and "done".
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fvbpf/fvbpf.h"
#include "workload.h"

static const char *const step = "training_train_one_step";
static const char *const fwd = "training_forward";

static void marked_steps(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		fvbpf_region_begin(step);
		fvbpf_region_begin(fwd);
		fvbpf_region_end(fwd);
		fvbpf_region_end(step);
	}
}

static int child_body(int steps)
{
	int attached;

	marked_steps(steps);
	attached = fvbpf_attached();
	marked_steps(steps);
	return attached ? 3 : 0;
}

/* Reap every child; count those that did not exit 0. */
static int reap(pid_t *pids, int n)
{
	int i, st, bad = 0;

	for (i = 0; i < n; i++) {
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st)) {
			bad++;
			if (WIFSIGNALED(st))
				printf("child %d killed by signal %d\n", pids[i], WTERMSIG(st));
			else
				printf("child %d exit %d\n", pids[i], WEXITSTATUS(st));
		}
	}
	return bad;
}

static pid_t raw_clone(void)
{
	/* The bare syscall: glibc's fork handlers (and ours, if we had any)
	 * do not run. */
	return (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
}

static int wait_attached(void)
{
	int i;

	for (i = 0; i < 12000 && !wl_stop; i++) { /* 2 minutes: a busy machine is slow to attach */
		if (fvbpf_attached())
			return 0;
		marked_steps(1);
		wl_sleep_us(10000);
	}
	printf("never attached\n");
	return -1;
}

static int run_batch(const char *mode, int n)
{
	pid_t pids[64];
	int i, gate[2] = { -1, -1 }, bad;
	char c;

	if (n > 64)
		n = 64;
	if (!strcmp(mode, "late") && pipe(gate))
		return 1;
	for (i = 0; i < n; i++) {
		pids[i] = !strcmp(mode, "clone") ? raw_clone() : fork();
		if (pids[i] < 0)
			return 1;
		if (pids[i] == 0) {
			if (!strcmp(mode, "idle"))
				_exit(0);
			if (!strcmp(mode, "late")) {
				close(gate[1]);
				if (read(gate[0], &c, 1) < 0)
					_exit(4);
			}
			_exit(child_body(200));
		}
	}
	if (!strcmp(mode, "late")) {
		close(gate[0]);
		/* Keep the parent traced until fvbpf leaves, then release them. */
		while (fvbpf_attached() && !wl_stop) {
			marked_steps(1);
			wl_sleep_us(2000);
		}
		printf("parent saw detach\n");
		close(gate[1]);
	}
	bad = reap(pids, n);
	printf("children=%d bad=%d\n", n, bad);
	return 0;
}

static int run_storm(void)
{
	int children = 0, bad = 0, st;
	pid_t p;

	while (!wl_stop) {
		p = fork();
		if (p < 0)
			return 1;
		if (p == 0)
			_exit(child_body(50));
		marked_steps(5);
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st)) {
			bad++;
			printf("child %d status %#x\n", p, st);
		}
		children++;
		wl_sleep_us(2000);
	}
	printf("children=%d bad=%d\n", children, bad);
	return 0;
}

static int run_serve(void)
{
	pid_t p = fork();
	int bad;

	if (p < 0)
		return 1;
	if (p == 0) {
		printf("child=%d\n", getpid());
		while (!wl_stop) {
			marked_steps(1);
			wl_sleep_us(2000);
		}
		_exit(0);
	}
	while (!wl_stop) {
		marked_steps(1);
		wl_sleep_us(2000);
	}
	kill(p, SIGTERM);
	bad = reap(&p, 1);
	printf("children=1 bad=%d\n", bad);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	int n = 4, ret;

	if (argc > 3 && !strcmp(argv[2], "--children"))
		n = atoi(argv[3]);
	wl_start();
	if (strcmp(mode, "storm") && wait_attached())
		return 1;
	marked_steps(20);
	if (!strcmp(mode, "storm"))
		ret = run_storm();
	else if (!strcmp(mode, "serve"))
		ret = run_serve();
	else
		ret = run_batch(mode, n);
	printf("done\n");
	return ret;
}
