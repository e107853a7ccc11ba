#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# `make bench` section 16: fvbpf dump (issue 39).
#   a. A dump's time for 1, 3 and 8 processes: idle processes of the torch
#      build (tests/workloads/torch_train.py waiting for its go file: each
#      has imported torch, its threads and its libraries), RUNS dumps each,
#      the median, text and --json.
#   b. The target's step time while dumped every second: a 3-rank gloo job
#      under torchrun (tests/workloads/dump_job.py, a step every 20 ms),
#      its step gaps (CLOCK_MONOTONIC, written by the ranks) over STEPS
#      steps undumped, then while `fvbpf dump -p LAUNCHER --children` runs
#      once a second 10 times, then undumped again (tests/lib/dump_gaps.py).
#      Goal: the median gap while dumped within 5 % of the undumped one.
set -u
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FVBPF=${FVBPF:-$BUILD/fvbpf}
PY=${BENCH_PY:-$BUILD/venv-torch214/bin/python}
TRAIN=$ROOT/tests/workloads/torch_train.py
JOBPY=$ROOT/tests/workloads/dump_job.py
RUNS=${BENCH_DUMP_RUNS:-5}
STEPS=${BENCH_DUMP_STEPS:-150}
TMP=$(mktemp -d "${TMPDIR:-/tmp}"/fvbpf-dump-bench.XXXXXX)
BENCH_TAG=dump_bench

# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
JOB_PGID=
cleanup() {
	if [ -n "$JOB_PGID" ]; then
		touch "$TMP/job/stop"
		sleep 2
		kill -KILL -- "-$JOB_PGID" 2>/dev/null
	fi
	bench_cleanup
}
on_exit cleanup

echo
needs_torch "16. fvbpf dump"
echo "16. fvbpf dump: $(basename "$(dirname "$(dirname "$PY")")") torch, medians of $RUNS dumps"

# a. idle torch processes
note "starting 8 torch processes"
pids=()
for i in $(seq 8); do
	d=$TMP/p$i
	mkdir -p "$d"
	OMP_NUM_THREADS=1 "$PY" "$TRAIN" run "$d" 1 >"$d/log" 2>&1 &
	PIDS+=($!)
	disown
done
for i in $(seq 8); do
	d=$TMP/p$i
	wait_file "$d/log" '^pid=' 180 "${PIDS[$((i - 1))]}" || die "a torch process did not start ($d/log)"
	pids+=("$(sed -n 's/^pid=//p' "$d/log")")
done

# dump_ms PIDS [--json] -> one dump's milliseconds (its output checked)
dump_ms() {
	local t0 t1
	t0=$(now)
	"$FVBPF" dump -p "$@" >"$TMP/out" 2>"$TMP/err" || die "fvbpf dump failed: $(tail -n 3 "$TMP/err")"
	t1=$(now)
	[ -s "$TMP/out" ] || die "fvbpf dump wrote nothing"
	ms "$t0" "$t1"
}

for n in 1 3 8; do
	set_pids=$(IFS=,; echo "${pids[*]:0:$n}")
	t=() j=()
	for r in $(seq "$RUNS"); do
		t+=("$(dump_ms "$set_pids")")
		j+=("$(dump_ms "$set_pids" --json)")
	done
	"$FVBPF" dump -p "$set_pids" >"$TMP/out"
	threads=$(grep -c '^  thread ' "$TMP/out")
	printf '   a. %d process%-2s (%3d threads): text %6.1f ms   --json %6.1f ms   (median of %d; spread %s-%s ms)\n' \
		"$n" "$([ "$n" = 1 ] || echo es)" "$threads" "$(median "${t[@]}")" "$(median "${j[@]}")" "$RUNS" \
		"$(printf '%s\n' "${t[@]}" | sort -g | head -n1)" "$(printf '%s\n' "${t[@]}" | sort -g | tail -n1)"
	[ -n "${BENCH_RESULTS:-}" ] && echo "dump_${n}_ms=$(median "${t[@]}")" >>"$BENCH_RESULTS"
done
for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
PIDS=()

# b. a stepping job, dumped every second
note "starting a 3-rank torchrun job"
mkdir -p "$TMP/job"
(cd "$TMP/job" && OMP_NUM_THREADS=1 exec setsid "$(dirname "$PY")/torchrun" --standalone \
	--nproc-per-node 3 "$JOBPY" "$TMP/job" >"$TMP/job/job.log" 2>&1) &
disown
for r in 0 1 2; do
	wait_file "$TMP/job/rank.$r" . 180 "$$" || die "rank $r did not start ($TMP/job/job.log)"
done
R0=$(cat "$TMP/job/rank.0")
LAUNCHER=$(ps -o ppid= -p "$R0" | tr -d ' ')
JOB_PGID=$(ps -o pgid= -p "$LAUNCHER" | tr -d ' ')
python3 "$ROOT/tests/lib/dump_gaps.py" "$FVBPF" "$TMP/job" 3 "$LAUNCHER" --dumps 10 --every 1 \
	--steps "$STEPS" >"$TMP/gaps" || true
# the step gaps as measured; the goal here is the medians' ratio, not the
# test's stall rule (dump.bats runs that one with the dumps under SCHED_IDLE)
grep -Ev '^(ok|stalled)' "$TMP/gaps" | sed 's/^/   b. /' 
own=$(sed -n "s/^step gaps, the job's own: [0-9]*, median \([0-9.]*\) ms.*/\1/p" "$TMP/gaps")
during=$(sed -n 's/^step gaps during the dumps: [0-9]*, median \([0-9.]*\) ms.*/\1/p' "$TMP/gaps")
[ -n "$own" ] && [ -n "$during" ] || die "no step gaps measured: $(cat "$TMP/gaps")"
ratio=$(awk "BEGIN{printf \"%.3f\", $during/$own}")
verdict "step time dumped every second / not dumped (medians)" "$ratio" "x <= 1.05" "<= 1.05"
[ -n "${BENCH_RESULTS:-}" ] && echo "dump_step_ratio=$ratio" >>"$BENCH_RESULTS"
exit 0
