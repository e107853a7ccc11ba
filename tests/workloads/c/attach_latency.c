// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * How long a new process of a followed tree waits to be traced: the time
 * from its first instruction in main() (its exec and the loader's mapping
 * of libfvbpf are a millisecond before) to fvbpf_attached() turning 1,
 * polled every 100 us.  Prints "latency_us=N", or "never" after 10 s.
 * Then it stays until SIGTERM with --stay (for attach-time runs).
 */
#include <string.h>

#include "fvbpf/fvbpf.h"
#include "workload.h"

int main(int argc, char **argv)
{
	uint64_t t0 = wl_now_ns(), t;
	int stay = argc > 1 && !strcmp(argv[1], "--stay");

	wl_start();
	while (!fvbpf_attached()) {
		t = wl_now_ns();
		if (t - t0 > 10000000000ull) {
			printf("never\n");
			return 1;
		}
		wl_sleep_us(100);
	}
	printf("latency_us=%llu\n", (unsigned long long)((wl_now_ns() - t0) / 1000));
	while (stay && !wl_stop)
		wl_sleep_us(100000);
	return 0;
}
