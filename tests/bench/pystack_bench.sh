#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# `make bench`, section 13: --with-stack (tests/bench/bench.sh runs it).
# A benchmark, not a test: it prints figures and exits 0 unless a run failed.
#
# Method (root; torch venv of `make venv`, else SKIP): the CPU training loop
# tests/workloads/torch_train.py in its ab mode (short blocks in turn, A
# then B or B then A, the median of B/A over pairs: see
# tests/bench/torch_fast_bench.sh for why), one process per set, rounds:
#   0 warm-up; 1, 3, 6, 8 not attached, B blocks under
#   torch.profiler(activities=[CPU], with_stack=True) (what
#   FASTVIDEO_TORCH_PROFILER_WITH_STACK=1 turns on): D
#   2 fvbpf --with-stack, 7 fvbpf without, both gated on record_function
#   "bench_in" around each B step (a segment each), A steps outside: C and B
#   as inside/outside (B/A) times outside/not attached, derived as section
#   6c does from rounds 4 (attached on a scope that never comes) and 5
#   (what an empty record_function scope costs, attached) against 3 and 6
# Twice: operators through uprobes (no fvbpf code in the job), then through
# PyTorch's callbacks (libfvbpf.so preloaded: the operator fast path, whose
# --with-stack walks at each outermost operator through the library's probe).
# SETS sets, medians, by the step's thread CPU time and by the clock.  Goal:
# C below D.  Each C run must give its steps' operators stacks (the stack
# counts fvbpf prints at exit) and write the folded files.
#
# Usage: tests/bench/pystack_bench.sh BUILD_DIR
# Environment: BENCH_SETS (3), BENCH_STACK_PAIRS (16), FVBPF_TORCH_PY_214.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
FVBPF=$BUILD/fvbpf
PY=${FVBPF_TORCH_PY_214:-$BUILD/venv-torch214/bin/python3}
SETS=${BENCH_SETS:-3}
PAIRS=${BENCH_STACK_PAIRS:-16}

if [ -z "${PYSTACK_MODE:-}" ] && [ -x "$PY" ]; then
	PYSTACK_MODE=uprobes "$0" "$@" && PYSTACK_MODE=callbacks "$0" "$@"
	exit
fi
PRE=()
[ "${PYSTACK_MODE:-}" = callbacks ] && PRE=(env "LD_PRELOAD=$BUILD/libfvbpf.so")
echo
if [ ! -x "$PY" ]; then
	echo "13. --with-stack: SKIP (no torch venv at $PY: run \`make venv\`)"
	exit 0
fi

# shellcheck source=tests/bench/bench_lib.sh
. "$ROOT/tests/bench/bench_lib.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fvbpf-pystack-bench.XXXXXX")
on_exit bench_cleanup
bpf_stats_on

WANT='torch operators, ' OHOW=measured
[ "$PYSTACK_MODE" = callbacks ] && WANT='through its own callbacks' OHOW='derived, as in 6c'
declare -A D=() C=() B=() NA=() O=()
EVS=() STK=()
for ((s = 1; s <= SETS; s++)); do
	d=$TMP/step.$s
	mkdir -p "$d"
	"${PRE[@]}" "$PY" "$ROOT/tests/workloads/torch_train.py" ab "$d" 9 "$PAIRS" 10 >"$d/wl.log" 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
	wait_file "$d/wl.log" '^pid=' 120 "$WPID" || die "torch workload did not start: $(tail -n 5 "$d/wl.log")"
	round "$d" 0 profstack # warm-up, not counted
	round "$d" 1 profstack
	fv_round "$d" 2 scope "$WANT" -r torch:bench_in --with-stack
	grep -q -- '--with-stack: CPython' "$d/f2.err" || die "no --with-stack: $(tail -n 5 "$d/f2.err")"
	round "$d" 3 profstack
	BPF_STATS=1 FV_THEN="5 scopecost" fv_round "$d" 4 scope "$WANT" -r torch:no_such_scope --with-stack
	round "$d" 6 profstack
	fv_round "$d" 7 scope "$WANT" -r torch:bench_in
	round "$d" 8 profstack
	stop "$WPID"
	ls "$d"/o2/stacks_*_bench_in.folded >/dev/null 2>&1 || die "--with-stack wrote no folded file (set $s)"
	STK+=("$(sed -n 's/.*--with-stack: \([0-9]*\) stack records, \([0-9]*\) given.*/\2/p' "$d/f2.err")")
	[ "${STK[-1]:-0}" -gt 0 ] || die "--with-stack gave no operator a stack (set $s)"
	EVS+=("$(step_events "$d/o2" 'summary_*_bench_in.json')")
	[ "${EVS[-1]}" -gt 0 ] || die "fvbpf wrote too few segments (set $s)"
	for w in cpu wall; do
		NA[$w]+=" $(fig "$d" 1 $w 1)"
		D[$w]+=" $(median "$(fig "$d" 1 $w 2)" "$(fig "$d" 3 $w 2)" "$(fig "$d" 6 $w 2)" "$(fig "$d" 8 $w 2)")"
		# inside against outside (B/A of one round) times outside against
		# not attached, derived as in section 6c (the same probes run outside
		# with stacks or without)
		if [ "$PYSTACK_MODE" = callbacks ]; then
			o=$(derived_outside "$d" 4 5 3 6 $((20 * PAIRS)) $w)
		else # every operator's probe runs outside too: measured, round 4's A
			o=$(awk "BEGIN{print $(fig "$d" 4 $w 1)*2/($(fig "$d" 3 $w 1)+$(fig "$d" 6 $w 1))}")
		fi
		C[$w]+=" $(awk "BEGIN{print $(fig "$d" 2 $w 2)*$o}")"
		B[$w]+=" $(awk "BEGIN{print $(fig "$d" 7 $w 2)*$o}")"
		O[$w]+=" $o"
	done
	note "with-stack ($PYSTACK_MODE) set $s/$SETS: $(grep '^round' "$d/wl.log" | tr '\n' ';')"
done
EV=$(median "${EVS[@]}")
echo "13. --with-stack, operators through $PYSTACK_MODE: training step of tests/workloads/torch_train.py ($EV torch events a step), torch $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
echo "   $SETS sets (a process each), $PAIRS pairs of 10-step blocks a round; operators given a stack per C run: ${STK[*]}"
echo "   each figure: step time against not attached, median over sets ('cpu': the step's thread CPU time)"
for w in cpu wall; do
	# shellcheck disable=SC2086
	m0=$(median ${NA[$w]})
	srow() { # LABEL VALUES...
		local m
		m=$(median "${@:2}")
		printf '   %-46s %-5s %-20s %6.3fx  %6.2f us/event\n' "$1" "$w" "$(printf '%.3f ' "${@:2}")" "$m" \
			"$(awk "BEGIN{print ($m-1)*$m0*1000/$EV}")"
		LAST=$m
	}
	# shellcheck disable=SC2086
	srow "fvbpf outside segments ($OHOW)" ${O[$w]}
	# shellcheck disable=SC2086
	srow "B fvbpf inside segments" ${B[$w]}
	MB=$LAST
	# shellcheck disable=SC2086
	srow "C fvbpf inside segments, --with-stack" ${C[$w]}
	MC=$LAST
	# shellcheck disable=SC2086
	srow "D torch.profiler (CPU), with_stack=True" ${D[$w]}
	MD=$LAST
	echo "   goal C < D ($w): $(awk "BEGIN{print ($MC < $MD) ? \"met\" : \"NOT met\"}") (C-B, the stacks alone: $(awk "BEGIN{printf \"%.2f\", ($MC-$MB)*$m0*1000/$EV}") us/event; not attached $m0 ms a step)"
done
