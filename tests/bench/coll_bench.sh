#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# `make bench` section 17: the cost of fvbpf's collective records (issue
# 37).  A 2-rank gloo job under torchrun (tests/workloads/coll_cost.py)
# runs COUNT all-reduces of one float a phase, each timed on the calling
# thread (its call and its wait: the median); phases interleaved, ROUNDS
# times: not attached; attached with --no-torch-ops (`--window 1`: every
# collective inside a segment; the collective records alone: three probed
# calls a collective, the work made, queued and run, entry and return
# each); attached (operators by uprobes too); not attached; attached with
# --inject (operators by PyTorch's callbacks).  A cost is an attached
# phase's median less the median of the two phases not attached around
# it; the kernel's BPF stats give the probe program's own time a
# collective in the --no-torch-ops phase.
set -u
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FVBPF=${FVBPF:-$BUILD/fvbpf}
PY=${BENCH_PY:-$BUILD/venv-torch214/bin/python}
COUNT=${BENCH_COLL_COUNT:-2000}
ROUNDS=${BENCH_COLL_ROUNDS:-3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}"/fvbpf-coll-bench.XXXXXX)
BENCH_TAG=coll_bench

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
needs_torch "17. collectives"
echo "17. collectives: 2-rank gloo job, $COUNT all-reduces of one float a phase, $ROUNDS rounds"

mkdir -p "$TMP/job"
(cd "$TMP/job" && OMP_NUM_THREADS=1 exec setsid "$(dirname "$PY")/torchrun" --standalone \
	--nproc-per-node 2 "$ROOT/tests/workloads/coll_cost.py" "$TMP/job" "$COUNT" \
	>"$TMP/job/job.log" 2>&1) &
disown
for r in 0 1; do
	wait_file "$TMP/job/rank.$r" . 180 "$$" || die "rank $r did not start ($TMP/job/job.log)"
done
R0=$(cat "$TMP/job/rank.0")
R1=$(cat "$TMP/job/rank.1")
JOB_PGID=$(ps -o pgid= -p "$R0" | tr -d ' ')
N=0

# phase MODE: one phase's median µs into RES; MODE off (not attached), uprobes or inject
phase() {
	local fv= mode=$1
	N=$((N + 1))
	if [ "$mode" != off ]; then
		# shellcheck disable=SC2046
		"$FVBPF" attach -p "$R0,$R1" --window 1 -o "$TMP/out.$N" \
			$([ "$mode" = inject ] && echo --inject) \
			$([ "$mode" = colls ] && echo --no-torch-ops) >"$TMP/fv.$N" 2>&1 &
		fv=$!
		wait_file "$TMP/fv.$N" 'fvbpf: tracing' 120 "$fv" ||
			die "fvbpf did not start: $(tail -n 3 "$TMP/fv.$N")"
	fi
	bpftool prog show name api_call --json >"$TMP/bpf.$N.a" 2>/dev/null
	touch "$TMP/job/go.$N"
	wait_file "$TMP/job/res.$N" . 300 "$R0" || die "phase $N did not end ($TMP/job/job.log)"
	bpftool prog show name api_call --json >"$TMP/bpf.$N.b" 2>/dev/null
	BPF_NS=$(bpf_prog_delta "$TMP/bpf.$N.a" "$TMP/bpf.$N.b")
	BPF_NS=${BPF_NS#* }
	if [ -n "$fv" ]; then
		stop "$fv"
		[ "$RC" = 0 ] || die "fvbpf exited $RC: $(tail -n 3 "$TMP/fv.$N")"
		joined=$(sed -n 's/.*collectives: 3 gloo functions probed, \([0-9]*\) collectives joined.*/\1/p' \
			"$TMP/fv.$N" | awk '{s+=$1} END {print s+0}')
		[ "$joined" -ge "$COUNT" ] || die "fvbpf joined $joined collectives of $((2 * COUNT))"
	fi
	RES=$(cat "$TMP/job/res.$N")
}

bpf_stats_on
off=() dco=() dup=() dcb=() bpf=()
for r in $(seq "$ROUNDS"); do
	phase off; o1=$RES
	phase colls; co=$RES; b=$BPF_NS
	phase uprobes; u=$RES
	phase off; o2=$RES
	phase inject; c=$RES
	phase off; o3=$RES
	off+=("$o1" "$o2" "$o3")
	dco+=("$(awk "BEGIN{print $co - ($o1 + $o2) / 2}")")
	dup+=("$(awk "BEGIN{print $u - ($o1 + $o2) / 2}")")
	dcb+=("$(awk "BEGIN{print $c - ($o2 + $o3) / 2}")")
	# both ranks' runs: entry and return of 3 calls, a collective each
	bpf+=("$(awk "BEGIN{print $b / (2 * $COUNT) / 1000}")")
	note "round $r: off $o1, collectives only $co, uprobes $u, off $o2, --inject $c, off $o3 (us an all-reduce)"
done
printf '   one all-reduce not attached: %.1f us (median of %d, then of %d phases)\n' \
	"$(median "${off[@]}")" "$COUNT" "${#off[@]}"
printf '   cost a collective, --no-torch-ops (the collective records alone): %.1f us (rounds: %s); BPF programs %.2f us of it\n' \
	"$(median "${dco[@]}")" "${dco[*]}" "$(median "${bpf[@]}")"
printf '   cost a collective with the operators: uprobe path %.1f us (%s), callbacks path (--inject) %.1f us (%s)\n' \
	"$(median "${dup[@]}")" "${dup[*]}" "$(median "${dcb[@]}")" "${dcb[*]}"
[ -n "${BENCH_RESULTS:-}" ] && {
	echo "coll_cost_us=$(median "${dco[@]}")"
	echo "coll_cost_us_uprobes=$(median "${dup[@]}")"
	echo "coll_cost_us_callbacks=$(median "${dcb[@]}")"
} >>"$BENCH_RESULTS"
exit 0
