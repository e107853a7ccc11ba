# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Sourced by tests/bats/cuda.bats and tests/bench/bench_lib.sh.

# bpftrace_int PID SECONDS: SIGINT to bpftrace, again every 2 s until it
# ends.  bpftrace prints its counts when SIGINT ends it, but a SIGINT that
# comes just before it blocks in epoll_wait is lost and it waits on (a CI
# run hung 14 min in cuda.bats; a second SIGINT ended it at once).  Not
# for fvbpf, for which a second SIGINT means "kill".  1 if PID still runs
# after SECONDS; the caller waits for PID or kills it.
bpftrace_int() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		((i % 40)) || kill -INT "$1" 2>/dev/null || true
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}
