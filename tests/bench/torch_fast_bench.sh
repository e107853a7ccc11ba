#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# make bench, section 6c: the step time of a CPU training loop
# (tests/workloads/torch_train.py) with libfvbpf.so in the process, its
# operators through PyTorch's callbacks (the fast path) and through
# uprobes, inside and outside segments, against torch.profiler (CPU
# activity) on the same loop in the same process.  One process per set,
# rounds in turn:
#   0 warm-up (not counted), then not attached before and after each of:
#   callbacks outside segments (-r torch:no_such_scope), callbacks inside
#   (--step-by), uprobes outside, uprobes inside, torch.profiler; each is
#   compared with the mean of the two not-attached rounds around it (the VM's
#   speed drifts by tens of % between rounds: pairs cancel the drift)
# on the test loop (D=64) and a wider one (D=512: fewer operators per ms);
# medians of SETS sets, each round the median of STEPS steps.  The goals
# (issue 23): callbacks inside at most torch.profiler's overhead, outside
# at most 2 %.
#
# Usage: tests/bench/torch_fast_bench.sh [BUILD_DIR]   (root)
#   BENCH_SETS (3), BENCH_FAST_STEPS (200)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
FVBPF=$BUILD/fvbpf
LIB=$BUILD/libfvbpf.so
PY=${FVBPF_TORCH_PY_214:-$BUILD/venv-torch214/bin/python3}
SETS=${BENCH_SETS:-3}
STEPS=${BENCH_FAST_STEPS:-200}   # on D=64; a quarter on D=512

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

run_loop() { # WIDTH STEPS
	local width=$1 steps=$2 s d k v base
	R1=() R2=() R3=() R4=() R5=() A0=() A1=() A2=() A3=() A4=() A5=() EVS=() OUTSIDE=() NOISE=()
	for ((s = 1; s <= SETS; s++)); do
		d=$TMP/w$width.$s
		mkdir -p "$d"
		TORCH_TRAIN_D=$width LD_PRELOAD=$LIB "$PY" "$ROOT/tests/workloads/torch_train.py" \
			time "$d" 12 "$steps" 10 >"$d/wl.log" 2>&1 &
		WPID=$!
		PIDS+=("$WPID")
		wait_file "$d/wl.log" '^pid=' 120 "$WPID" || die "the workload did not start"
		round "$d" 0                                              # warm-up, not counted
		round "$d" 1
		fv_round "$d" 2 'through its own callbacks' -r 'torch:no_such_scope'
		round "$d" 3
		fv_round "$d" 4 'through its own callbacks' --step-by 'Optimizer.step*'
		round "$d" 5
		fv_round "$d" 6 'torch operators, ' --op-source uprobes -r 'torch:no_such_scope'
		round "$d" 7
		fv_round "$d" 8 'torch operators, ' --op-source uprobes --step-by 'Optimizer.step*'
		round "$d" 9
		round "$d" 10                                             # torch.profiler
		round "$d" 11
		wait "$WPID" || true
		EVS+=("$(python3 -c 'import json,glob,sys
f=sorted(glob.glob(sys.argv[1]+"/summary_*_step.json"))
print(sum(r["count"] for r in json.load(open(f[1]))["rows"] if r["kind"] in ("cpu_op","user_annotation")) if len(f) > 2 else 0)' "$d/o4")")
		[ "${EVS[-1]}" -gt 0 ] || die "too few step segments through callbacks (set $s)"
		OUTSIDE+=("$(python3 -c 'import json,sys
t=json.load(open(sys.argv[1]))["processes"][0]["torch"]
print(t["callback_calls_outside_segments"])' "$d/o2/manifest.json")")
		declare -A ms=()
		for k in 1 2 3 4 5 6 7 8 9 10 11; do
			v=$(sed -n "s/^round $k ms_per_step \([0-9.]*\)/\1/p" "$d/wl.log")
			[ -n "$v" ] || die "round $k printed no figure"
			ms[$k]=$v
		done
		# each run against the not-attached rounds just before and after it
		pair() { awk "BEGIN{print ${ms[$1]}*2/(${ms[$(($1 - 1))]}+${ms[$(($1 + 1))]})}"; }
		base=$(median "${ms[1]}" "${ms[3]}" "${ms[5]}" "${ms[7]}" "${ms[9]}" "${ms[11]}")
		NOISE+=("$(printf '%s\n' "${ms[1]}" "${ms[3]}" "${ms[5]}" "${ms[7]}" "${ms[9]}" "${ms[11]}" |
			sort -g | awk -v b="$base" '{v[NR]=$1} END {printf "%.0f", (v[NR]-v[1])*100/b}')")
		A0+=("$base") A1+=("${ms[2]}") A2+=("${ms[4]}") A3+=("${ms[6]}") A4+=("${ms[8]}") A5+=("${ms[10]}")
		R1+=("$(pair 2)") R2+=("$(pair 4)") R3+=("$(pair 6)") R4+=("$(pair 8)") R5+=("$(pair 10)")
		note "callbacks bench D=$width set $s/$SETS: ms $(for k in 1 2 3 4 5 6 7 8 9 10 11; do printf '%s ' "${ms[$k]}"; done)"
		unset ms
	done
	EV=$(median "${EVS[@]}")
	M0=$(median "${A0[@]}")
	echo
	echo "   D=$width: $EV torch events a step; each round the median of $steps steps; $SETS sets, one process"
	echo "   each (library preloaded, a warm-up round first); each run's ratio to the mean of the"
	echo "   not-attached rounds just before and after it, then the median over sets"
	printf '   %-34s %9s  %-22s %8s  %s\n' "run" "median ms" "ratio per set" "ratio" "us/event"
	srow() { # LABEL MS-ARRAY-NAME RATIO-ARRAY-NAME
		local -n a=$2 r=$3
		local med rat
		med=$(median "${a[@]}")
		rat=$(median "${r[@]}")
		printf '   %-34s %9.3f  %-22s %8.3f  %6.2f\n' "$1" "$med" "$(printf '%.3f ' "${r[@]}")" "$rat" \
			"$(awk "BEGIN{print ($rat-1)*$M0*1000/$EV}")"
	}
	ONE=() && for ((s = 0; s < SETS; s++)); do ONE+=(1); done
	srow "not attached" A0 ONE
	srow "callbacks, outside segments" A1 R1
	srow "callbacks, inside segments" A2 R2
	srow "uprobes, outside segments" A3 R3
	srow "uprobes, inside segments" A4 R4
	srow "torch.profiler (CPU) in process" A5 R5
	MR2=$(median "${R2[@]}") MR5=$(median "${R5[@]}") MR1=$(median "${R1[@]}")
	if awk "BEGIN{exit !($MR5 - 1 > 0.02)}"; then
		verdict "callbacks inside: overhead / torch.profiler's" \
			"$(awk "BEGIN{printf \"%.2f\", ($MR2-1)/($MR5-1)}")" "x <= 1" "at most 1"
	else
		printf '   %-52s %8s   %s\n' "callbacks inside: overhead / torch.profiler's" "n/a" \
			"(torch.profiler's own overhead is within 2 % here: the loop is compute-bound)"
	fi
	verdict "callbacks outside: step / not attached" "$MR1" "x <= 1.02" "at most 1.02"
	echo "   callbacks of fvbpf's run outside segments, per set (the exact cost outside): ${OUTSIDE[*]}"
	echo "   noise floor: the 6 not-attached rounds of a set spread by ${NOISE[*]} % of their median"
}

verdict() { # LABEL VALUE CHECK GOAL
	local v=met
	awk -v x="$2" "BEGIN{exit !($3)}" || v="NOT MET"
	printf '   %-52s %8s   (goal: %s)   %s\n' "$1" "$2" "$4" "$v"
}

echo "6c. PyTorch operators through PyTorch's callbacks (libfvbpf.so in the process) and through"
echo "    uprobes, against torch.profiler: training step time, torch $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
run_loop 64 "$STEPS"
run_loop 512 $((STEPS / 4))
exit 0
