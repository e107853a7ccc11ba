// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A marker worker whose libfvbpf is mapped 500 ms before its constructor
 * runs (lib/slow_init.c): started under a traced launcher, it must still
 * be traced.  Runs N training_train_one_step regions once attached and
 * prints "steps=N", or "never attached" after 20 s.
 */
#include <stdlib.h>

#include "fvbpf/fvbpf.h"
#include "workload.h"

int slow_init_linked(void);

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 3, i;
	uint64_t t0 = wl_now_ns();

	wl_start();
	if (!slow_init_linked())
		return 1;
	while (!fvbpf_attached()) {
		if (wl_now_ns() - t0 > 20000000000ull) {
			printf("never attached\n");
			return 2;
		}
		wl_sleep_us(1000);
	}
	for (i = 0; i < steps; i++) {
		fvbpf_region_begin("training_train_one_step");
		wl_sleep_us(5000);
		fvbpf_region_end("training_train_one_step");
	}
	printf("steps=%d\n", steps);
	return 0;
}
