#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# make bench, section 6c: the step time of a CPU training loop
# (tests/workloads/torch_train.py) with libfvbpf.so in the process, its
# operators through PyTorch's callbacks (the fast path) and through
# uprobes, inside and outside segments, against torch.profiler (CPU
# activity) on the same loop in the same process.  One process per set,
# rounds in turn:
#   0 not attached          1 callbacks, outside segments (-r torch:no_such_scope)
#   2 callbacks, inside (--step-by)   3 uprobes, outside   4 uprobes, inside
#   5 torch.profiler
# on the test loop (D=64) and a wider one (D=512: fewer operators per ms);
# medians of SETS sets, each round the median of STEPS steps.  The goals
# (issue 23): callbacks inside at most torch.profiler's overhead, outside
# at most 2 %.
#
# Usage: tests/bench/torch_fast_bench.sh [BUILD_DIR]   (root)
#   BENCH_SETS (3), BENCH_TORCH_STEPS (60)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
FVBPF=$BUILD/fvbpf
LIB=$BUILD/libfvbpf.so
PY=${FVBPF_TORCH_PY_214:-$BUILD/venv-torch214/bin/python3}
SETS=${BENCH_SETS:-3}
STEPS=${BENCH_TORCH_STEPS:-60}

echo
if [ ! -x "$PY" ]; then
	echo "6c. PyTorch operators through callbacks: SKIP (no torch venv at $PY: run \`make venv\`)"
	exit 0
fi

die() { echo "bench: FAILED: $*" >&2; exit 1; }
note() { echo "bench: $*" >&2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fvbpf-fast-bench.XXXXXX")
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]:-}"; do
		[ -n "$p" ] && kill -KILL "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_file() { # FILE PATTERN SECONDS PID
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		kill -0 "$4" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

round() { # DIR K
	local i
	touch "$1/go.$2"
	for ((i = 0; i < 6000; i++)); do
		[ -e "$1/done.$2" ] && return 0
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.05
	done
	die "round $2 did not finish: $(tail -n 5 "$1/wl.log")"
}

fv_round() { # DIR K WANT ARGS...: attach, run round K, detach
	local d=$1 k=$2 want=$3 i
	shift 3
	"$FVBPF" attach -p "$WPID" -o "$d/o$k" "$@" >"$d/f$k.out" 2>"$d/f$k.err" &
	FPID=$!
	PIDS+=("$FPID")
	wait_file "$d/f$k.err" 'fvbpf: tracing' 120 "$FPID" || die "fvbpf did not attach: $(tail -n 5 "$d/f$k.err")"
	grep -q -- "$want" "$d/f$k.err" || die "round $k: fvbpf did not say '$want'"
	round "$d" "$k"
	kill -INT "$FPID"
	for ((i = 0; i < 1200; i++)); do
		kill -0 "$FPID" 2>/dev/null || break
		sleep 0.05
	done
	wait "$FPID" || die "fvbpf exited with status $? (round $k)"
}

run_loop() { # WIDTH
	local width=$1 s d k v
	S0=() S1=() S2=() S3=() S4=() S5=() EVS=()
	for ((s = 1; s <= SETS; s++)); do
		d=$TMP/w$width.$s
		mkdir -p "$d"
		TORCH_TRAIN_D=$width LD_PRELOAD=$LIB "$PY" "$ROOT/tests/workloads/torch_train.py" \
			time "$d" 6 "$STEPS" 5 >"$d/wl.log" 2>&1 &
		WPID=$!
		PIDS+=("$WPID")
		wait_file "$d/wl.log" '^pid=' 120 "$WPID" || die "the workload did not start"
		round "$d" 0
		fv_round "$d" 1 'through its own callbacks' -r 'torch:no_such_scope'
		fv_round "$d" 2 'through its own callbacks' --step-by 'Optimizer.step*'
		fv_round "$d" 3 'torch operators, ' --op-source uprobes -r 'torch:no_such_scope'
		fv_round "$d" 4 'torch operators, ' --op-source uprobes --step-by 'Optimizer.step*'
		round "$d" 5
		wait "$WPID" || true
		EVS+=("$(python3 -c 'import json,glob,sys
f=sorted(glob.glob(sys.argv[1]+"/summary_*_step.json"))
print(sum(r["count"] for r in json.load(open(f[1]))["rows"] if r["kind"] in ("cpu_op","user_annotation")) if len(f) > 2 else 0)' "$d/o2")")
		[ "${EVS[-1]}" -gt 0 ] || die "too few step segments through callbacks (set $s)"
		for k in 0 1 2 3 4 5; do
			v=$(sed -n "s/^round $k ms_per_step \([0-9.]*\)/\1/p" "$d/wl.log")
			[ -n "$v" ] || die "round $k printed no figure"
			eval "S$k+=(\"$v\")"
		done
		note "callbacks bench D=$width set $s/$SETS: ms ${S0[-1]} ${S1[-1]} ${S2[-1]} ${S3[-1]} ${S4[-1]} ${S5[-1]}"
	done
	M0=$(median "${S0[@]}") M1=$(median "${S1[@]}") M2=$(median "${S2[@]}")
	M3=$(median "${S3[@]}") M4=$(median "${S4[@]}") M5=$(median "${S5[@]}")
	EV=$(median "${EVS[@]}")
	echo
	echo "   D=$width: $EV torch events a step, median of $STEPS steps, $SETS sets (one process each, library preloaded)"
	srow() { # LABEL MEDIAN PER-SET...
		local label=$1 med=$2
		shift 2
		printf '   %-44s %-26s %8.3f ms  %5.3fx  %6.2f us/event\n' "$label" "$(printf '%.2f ' "$@")" \
			"$med" "$(awk "BEGIN{print $med/$M0}")" "$(awk "BEGIN{print ($med-$M0)*1000/$EV}")"
	}
	srow "not attached" "$M0" "${S0[@]}"
	srow "callbacks, outside segments" "$M1" "${S1[@]}"
	srow "callbacks, inside segments" "$M2" "${S2[@]}"
	srow "uprobes, outside segments" "$M3" "${S3[@]}"
	srow "uprobes, inside segments" "$M4" "${S4[@]}"
	srow "torch.profiler (CPU) in process" "$M5" "${S5[@]}"
	verdict "callbacks inside: overhead / torch.profiler's" \
		"$(awk "BEGIN{d=$M5-$M0; printf \"%.2f\", (d > 0 ? ($M2-$M0)/d : 99)}")" "x <= 1" "at most 1"
	verdict "callbacks outside: step / not attached" \
		"$(awk "BEGIN{printf \"%.3f\", $M1/$M0}")" "x <= 1.02" "at most 1.02"
}

verdict() { # LABEL VALUE CHECK GOAL
	local v=met
	awk -v x="$2" "BEGIN{exit !($3)}" || v="NOT MET"
	printf '   %-52s %8s   (goal: %s)   %s\n' "$1" "$2" "$4" "$v"
}

echo "6c. PyTorch operators through PyTorch's callbacks (libfvbpf.so in the process) and through"
echo "    uprobes, against torch.profiler: training step time, torch $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
run_loop 64
run_loop 512
exit 0
