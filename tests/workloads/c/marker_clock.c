// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Whose clock the region times are: this program defines clock_gettime(),
 * which libfvbpf.so's calls bind to (an executable's definition comes first
 * in the lookup scope).  Its CLOCK_MONOTONIC is the kernel's cut to whole
 * microseconds and moved by --skew-s seconds, so a trace whose region
 * slices all start on a whole microsecond took the library's readings, and
 * a skew of an hour shows what fvbpf does with a time that cannot be.
 *
 *   --skew-s S   add S seconds (may be negative) to CLOCK_MONOTONIC
 *   --pairs N    training_forward begin/end pairs inside one training_train
 *
 * Waits up to 2 minutes for fvbpf_attached(), runs one training_train
 * region with N training_forward regions inside, then prints
 * "counts train_one_step=0 forward=N train=1" and exits.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fvbpf/fvbpf.h"

static long skew_s;

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	long ret = syscall(SYS_clock_gettime, clk, ts);

	if (ret || clk != CLOCK_MONOTONIC)
		return (int)ret;
	ts->tv_nsec -= ts->tv_nsec % 1000;
	ts->tv_sec += skew_s;
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 10 * 1000000L };
	long pairs = 20, i;
	int a;

	for (a = 1; a + 1 < argc; a += 2) {
		if (!strcmp(argv[a], "--skew-s"))
			skew_s = strtol(argv[a + 1], NULL, 10);
		else if (!strcmp(argv[a], "--pairs"))
			pairs = strtol(argv[a + 1], NULL, 10);
	}
	printf("pid=%d\n", getpid());
	fflush(stdout);
	for (i = 0; !fvbpf_attached(); i++) {
		if (i > 12000) {
			fprintf(stderr, "marker_clock: fvbpf did not attach within 2 minutes\n");
			return 1;
		}
		nanosleep(&nap, NULL);
	}
	fvbpf_region_begin("training_train");
	for (i = 0; i < pairs; i++) {
		fvbpf_region_begin("training_forward");
		nanosleep(&(struct timespec){ 0, 100000L }, NULL);
		fvbpf_region_end("training_forward");
	}
	fvbpf_region_end("training_train");
	printf("counts train_one_step=0 forward=%ld train=1\n", pairs);
	fflush(stdout);
	return 0;
}
