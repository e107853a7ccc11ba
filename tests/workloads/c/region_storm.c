// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Overload for the drop tests: short steps, each a burst of many nested
 * regions (many ring records, few segments), then a pause outside any
 * region.  A stopped or slow fvbpf then loses records mid-step.
 *
 *   region_storm [--burst N] [--pause-ms MS]   until SIGTERM/SIGINT
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "fvbpf/fvbpf.h"
#include "workload.h"

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "burst", required_argument, NULL, 'b' },
		{ "pause-ms", required_argument, NULL, 'p' },
		{},
	};
	long burst = 4000, pause_ms = 100, i;
	unsigned long steps = 0, forwards = 0;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'b': burst = atol(optarg); break;
		case 'p': pause_ms = atol(optarg); break;
		default:
			fprintf(stderr, "usage: %s [--burst N] [--pause-ms MS]\n", argv[0]);
			return 2;
		}
	}
	wl_start();
	while (!wl_stop) {
		fvbpf_region_begin("training_train_one_step");
		for (i = 0; i < burst; i++) {
			fvbpf_region_begin("training_forward");
			fvbpf_region_end("training_forward");
			forwards++;
		}
		fvbpf_region_end("training_train_one_step");
		steps++;
		wl_sleep_us(pause_ms * 1000);
	}
	printf("counts train_one_step=%lu forward=%lu\n", steps, forwards);
	return 0;
}
