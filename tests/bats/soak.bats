#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# The soak test: attach and detach again and again on one live,
# multi-threaded PyTorch job (tests/workloads/torch_soak.py: a training
# loop, a side thread whose record_function scope spans many steps, no
# fvbpf code), alternating --inject with all four knobs, the callbacks
# path, -r torch: and -r py: regions.  Every attach must end by itself
# with its segments, fvbpf must never crash (the ASan/UBSan pass runs it
# too), the job must never crash, and after the cycles the job is as the
# library's documented residue says (docs/limitations.md, "What stays in a
# job after fvbpf"): its step time, RSS, threads and descriptors.

load helpers

SOAK_CYCLES=${FVBPF_SOAK_CYCLES:-30}
# What the residue allows (docs/limitations.md), calibrated on this machine.
SOAK_THREADS_MAX=2
SOAK_FDS_MAX=1
SOAK_RSS_KB_MAX=32768

setup() {
	common_setup
	need_torch "$PY214"
	JOB=$BATS_TEST_TMPDIR/job
	mkdir -p "$JOB" "$OUT"
}

teardown() {
	[ -n "${JOB:-}" ] && touch "$JOB/stop"
	common_teardown
}

# status_of KEY: a field of the job's /proc status (kB for VmRSS).
status_of() {
	awk -v k="$1:" '$1 == k { print $2 }' "/proc/$WL_PID/status"
}

fd_count() {
	find "/proc/$WL_PID/fd" -mindepth 1 -maxdepth 1 | wc -l
}

# measure K: the job's own figures (CPU time per step, its checks) in
# $JOB/measured.K, and ours from /proc, as "key=value" lines in $JOB/m.K.
measure() {
	touch "$JOB/measure.$1"
	wait_long test -e "$JOB/measured.$1"
	{
		cat "$JOB/measured.$1"
		echo "rss_kb=$(status_of VmRSS)"
		echo "threads=$(status_of Threads)"
		echo "fds=$(fd_count)"
	} >"$JOB/m.$1"
}

m_get() { # K KEY
	sed -n "s/^$2=//p" "$JOB/m.$1"
}

# The options of cycle I: four kinds of attach, in turn.
cycle_args() {
	case $(($1 % 4)) in
	0) echo "--inject --record-shapes --with-flops --with-stack --profile-memory" ;;
	1) echo "--op-source callbacks -r torch:soak_block" ;;
	2) echo "--inject -r py:__main__:train_step --with-stack" ;;
	3) echo "-r torch:soak_side_scope,torch:soak_block --profile-memory --op-source uprobes" ;;
	esac
}

@test "soak: $SOAK_CYCLES attach/detach cycles on a live multi-threaded torch job: no crash, the job as the residue says" {
	sanitized_pass_only "30 attaches take minutes; the sanitized fvbpf is where a crash shows"
	start_workload "$JOB/job.log" "$PY214" "$ROOT/tests/workloads/torch_soak.py" "$JOB"
	measure 0
	local i args rc err
	for i in $(seq 0 $((SOAK_CYCLES - 1))); do
		args=$(cycle_args "$i")
		err=$OUT/c$i.err
		rc=0
		# shellcheck disable=SC2086
		timeout 180 "$FVBPF" attach -p "$WL_PID" -n 2 -o "$OUT/c$i" $args \
			>"$OUT/c$i.out" 2>"$err" || rc=$?
		if [ "$rc" -ne 0 ] || grep -Eq "$SAN_REPORT_RE" "$err"; then
			echo "cycle $i ($args): fvbpf exited $rc" >&2
			tail -n 30 "$err" >&2
			return 1
		fi
		kill -0 "$WL_PID" || { echo "cycle $i ($args): the job died" >&2; tail "$JOB/job.log" >&2; return 1; }
		run "$ROOT/tests/lib/soak_check.py" "$OUT/c$i" 2
		if [ "$status" -ne 0 ]; then
			echo "cycle $i ($args): $output" >&2
			tail -n 30 "$err" >&2
			return 1
		fi
	done
	measure 1
	echo "# before: $(tr '\n' ' ' <"$JOB/m.0")" >&3
	echo "# after:  $(tr '\n' ' ' <"$JOB/m.1")" >&3
	# The job's own checks: the same function object, pickled by
	# reference, a plain function, its side thread alive and unharmed.
	for k in same_object pickles plain_function side_alive; do
		[ "$(m_get 1 "$k")" = 1 ] || { echo "after the cycles: $k=$(m_get 1 "$k")" >&2; return 1; }
	done
	[ "$(m_get 1 side_errors)" = 0 ]
	# The residue (docs/limitations.md): the library's one thread, its
	# control page and mappings; no descriptor; the step's CPU time as
	# before within the machine's spread.
	[ "$(m_get 1 threads)" -le $(($(m_get 0 threads) + SOAK_THREADS_MAX)) ]
	[ "$(m_get 1 fds)" -le $(($(m_get 0 fds) + SOAK_FDS_MAX)) ]
	[ "$(m_get 1 rss_kb)" -le $(($(m_get 0 rss_kb) + SOAK_RSS_KB_MAX)) ]
	python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if b <= a * 1.5 else 1)' \
		"$(m_get 0 cpu_us_per_step)" "$(m_get 1 cpu_us_per_step)"
	touch "$JOB/stop"
	wait_long grep -q '^soak:' "$JOB/job.log"
	grep -q '^soak: same_object=1 pickles=1 plain_function=1' "$JOB/job.log"
}
