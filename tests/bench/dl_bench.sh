#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# `make bench` section 18: what fvbpf costs a DataLoader worker (issue
# 38).  A CPU trainer with 2 persistent workers (tests/workloads/dl_cost.py:
# batches of 8 cheap samples) loads COUNT batches a phase; per phase the
# workers' CPU time per batch (their threads' schedstat, ns) and the
# trainer's wall time per batch.  Phases interleaved ROUNDS times: not
# attached, attached (`fvbpf attach -p TRAINER --step-by train_step`: the
# workers' batches recorded, checked in the summaries), not attached.  A
# cost is an attached phase's figure less the mean of the phases not
# attached around it, per batch and per sample.  With the kernel's BPF
# stats on, the pickle probe's runs per batch (trainer and workers) and
# its ns per run: the part of the cost that is fvbpf's own program.
set -u
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FVBPF=${FVBPF:-$BUILD/fvbpf}
PY=${BENCH_PY:-$BUILD/venv-torch214/bin/python}
COUNT=${BENCH_DL_COUNT:-2000}
ROUNDS=${BENCH_DL_ROUNDS:-3}
SAMPLES=8 # dl_cost.py's batch size
TMP=$(mktemp -d "${TMPDIR:-/tmp}"/fvbpf-dl-bench.XXXXXX)
BENCH_TAG=dl_bench

# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
JOB=
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
cleanup() {
	touch "$TMP/stop"
	[ -n "$JOB" ] && wait_gone "$JOB" 10
	sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS" 2>/dev/null
	bench_cleanup
}
on_exit cleanup

echo
needs_torch "18. DataLoader workers"
echo "18. DataLoader workers: 2 persistent workers, batches of $SAMPLES samples, $COUNT batches a phase, $ROUNDS rounds"

OMP_NUM_THREADS=1 "$PY" "$ROOT/tests/workloads/dl_cost.py" "$TMP" "$COUNT" >"$TMP/job.log" 2>&1 &
JOB=$!
wait_file "$TMP/job.log" '^pid=' 120 "$JOB" || die "the job did not start ($TMP/job.log)"
N=0
sysctl -qw kernel.bpf_stats_enabled=1 2>/dev/null || true

# phase on|off: one phase's "WORKER_US TRAINER_US" per batch into RES
phase() {
	local fv= batches
	N=$((N + 1))
	if [ "$1" = on ]; then
		"$FVBPF" attach -p "$JOB" --step-by train_step -o "$TMP/out.$N" >"$TMP/fv.$N" 2>&1 &
		fv=$!
		wait_file "$TMP/fv.$N" 'fvbpf: tracing' 120 "$fv" ||
			die "fvbpf did not start: $(tail -n 3 "$TMP/fv.$N")"
	fi
	bpftool prog show name dl_pickle --json >"$TMP/bpf.$N.a" 2>/dev/null
	touch "$TMP/go.$N"
	wait_file "$TMP/res.$N" . 300 "$JOB" || die "phase $N did not end ($TMP/job.log)"
	bpftool prog show name dl_pickle --json >"$TMP/bpf.$N.b" 2>/dev/null
	BPF=$(bpf_prog_delta "$TMP/bpf.$N.a" "$TMP/bpf.$N.b" |
		awk -v n="$COUNT" '{ printf "%.2f %.0f\n", $1 / n, $1 ? $2 / $1 : 0 }')
	if [ -n "$fv" ]; then
		stop "$fv"
		[ "$RC" = 0 ] || die "fvbpf exited $RC: $(tail -n 3 "$TMP/fv.$N")"
		batches=$(python3 - "$TMP/out.$N" <<-'PY'
			import glob, json, sys
			n = 0
			for f in glob.glob(sys.argv[1] + "/summary_*.json"):
			    dl = json.load(open(f)).get("dataloader") or {}
			    n += dl.get("batches", 0)
			print(n)
		PY
		)
		# the steps cut while fvbpf started and stopped are not whole
		[ "$batches" -ge $((COUNT * 8 / 10)) ] ||
			die "fvbpf recorded $batches batches of $COUNT ($TMP/out.$N)"
	fi
	RES=$(cat "$TMP/res.$N")
}

wk() { echo "${1% *}"; }
tr_() { echo "${1#* }"; }
off=() dw=() dt=() rel=() bruns=() bns=()
for r in $(seq "$ROUNDS"); do
	phase off; o1=$RES
	phase on; a=$RES; bruns+=("${BPF% *}"); bns+=("${BPF#* }")
	phase off; o2=$RES
	base=$(awk "BEGIN{print ($(wk "$o1") + $(wk "$o2")) / 2}")
	off+=("$base")
	dw+=("$(awk "BEGIN{print $(wk "$a") - $base}")")
	rel+=("$(awk "BEGIN{print 100 * ($(wk "$a") - $base) / $base}")")
	dt+=("$(awk "BEGIN{print $(tr_ "$a") - ($(tr_ "$o1") + $(tr_ "$o2")) / 2}")")
	note "round $r: off $o1, attached $a, off $o2 (worker CPU us, trainer wall us, per batch)"
done
cw=$(median "${dw[@]}")
printf '   workers'"'"' CPU per batch not attached: %.1f us (%.2f us a sample)\n' \
	"$(median "${off[@]}")" "$(awk "BEGIN{print $(median "${off[@]}") / $SAMPLES}")"
printf '   cost attached: %.1f us a batch, %.2f us a sample, %+.1f %% of the workers'"'"' CPU (rounds: %s)\n' \
	"$cw" "$(awk "BEGIN{print $cw / $SAMPLES}")" "$(median "${rel[@]}")" "${dw[*]}"
printf '   the pickle probe: %.1f runs a batch (trainer and workers), %.0f ns of BPF program a run\n' \
	"$(median "${bruns[@]}")" "$(median "${bns[@]}")"
printf '   the trainer'"'"'s wall time per batch, attached less not: %.1f us (rounds: %s)\n' \
	"$(median "${dt[@]}")" "${dt[*]}"
[ -n "${BENCH_RESULTS:-}" ] && {
	echo "dl_cost_us_batch=$cw"
	echo "dl_cost_pct=$(median "${rel[@]}")"
} >>"$BENCH_RESULTS"
exit 0
