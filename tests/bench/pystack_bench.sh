#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# `make bench`, section 13: --with-stack (tests/bench/bench.sh runs it).
# A benchmark, not a test: it prints figures and exits 0 unless a run failed.
#
# Method (root; torch venv of `make venv`, else SKIP): the CPU training loop
# tests/workloads/torch_train.py, one process per set, STEPS steps a round
# (median step), rounds in this order:
#   (a warm-up round first, not counted)
#   A  not attached (the mean of a round before B and one after D)
#   B  fvbpf inside segments (--step-by on the step scope: every step is in one)
#   C  the same with --with-stack
#   D  torch.profiler(activities=[CPU], with_stack=True) in the process
#      (TORCH_TRAIN_WITH_STACK=1: what FASTVIDEO_TORCH_PROFILER_WITH_STACK=1 turns on)
# Twice: operators through uprobes (no fvbpf code in the job), then through
# PyTorch's callbacks (libfvbpf.so preloaded: the operator fast path, whose
# --with-stack walks at each outermost operator through the library's probe).
# SETS sets, medians.  Goal: C below D.  Each C run must give its steps'
# operators stacks (the stack counts fvbpf prints at exit) and write the
# folded files.
#
# Usage: tests/bench/pystack_bench.sh BUILD_DIR
# Environment: BENCH_SETS (3), BENCH_TORCH_STEPS (60), FVBPF_TORCH_PY_214.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
FVBPF=$BUILD/fvbpf
PY=${FVBPF_TORCH_PY_214:-$BUILD/venv-torch214/bin/python3}
SETS=${BENCH_SETS:-3}
STEPS=${BENCH_TORCH_STEPS:-60}
STEP_SCOPE='Optimizer.step#AdamW.step'

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

die() { echo "bench: FAILED: $*" >&2; exit 1; }
note() { echo "bench: $*" >&2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fvbpf-pystack-bench.XXXXXX")
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]:-}"; do
		[ -n "$p" ] && kill -0 "$p" 2>/dev/null && kill -INT "$p" 2>/dev/null || true
	done
	sleep 0.2
	for p in "${PIDS[@]:-}"; do
		[ -n "$p" ] && kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_file() { # FILE PATTERN SECONDS PID
	local file=$1 pat=$2 secs=$3 pid=$4 i
	for ((i = 0; i < secs * 20; i++)); do
		grep -q -- "$pat" "$file" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || { sleep 0.1; grep -q -- "$pat" "$file" 2>/dev/null; return; }
		sleep 0.05
	done
	return 1
}

stop() { # PID: SIGINT, wait (SIGKILL after 60 s); sets RC
	local pid=$1 i
	kill -INT "$pid" 2>/dev/null || true
	for ((i = 0; i < 1200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid" 2>/dev/null || true; }
	RC=0
	wait "$pid" || RC=$?
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
	[ -e "$1/done.$2" ] || { tail -n 15 "$WLOG" >&2; die "round $2 did not finish"; }
}

fv_start() { # OUTDIR ARGS...
	local o=$1
	shift
	"$FVBPF" attach -p "$WPID" "$@" -o "$o" >"$o.stdout" 2>"$o.stderr" &
	FPID=$!
	PIDS+=("$FPID")
	wait_file "$o.stderr" 'fvbpf: tracing' 120 "$FPID" ||
		{ tail -n 15 "$o.stderr" >&2; die "fvbpf did not attach"; }
}

fv_stop() { # OUTDIR
	stop "$FPID"
	[ "$RC" -eq 0 ] || { tail -n 15 "$1.stderr" >&2; die "fvbpf exited with status $RC"; }
}

S0=() S1=() S2=() S3=() EVS=() STK=()
for ((s = 1; s <= SETS; s++)); do
	d=$TMP/step.$s
	mkdir -p "$d"
	WLOG=$d/wl.log
	TORCH_TRAIN_WITH_STACK=1 "${PRE[@]}" "$PY" "$ROOT/tests/workloads/torch_train.py" time "$d" 6 "$STEPS" 4 \
		>"$WLOG" 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
	wait_file "$WLOG" '^pid=' 120 "$WPID" || { tail -n 15 "$WLOG" >&2; die "torch workload did not start"; }
	round "$d" 0 # warm-up, not counted
	round "$d" 1
	fv_start "$d/fi" --step-by "$STEP_SCOPE"
	round "$d" 2
	fv_stop "$d/fi"
	fv_start "$d/fs" --step-by "$STEP_SCOPE" --with-stack
	grep -q -- '--with-stack: CPython' "$d/fs.stderr" || { tail -n 15 "$d/fs.stderr" >&2; die "no --with-stack"; }
	[ "$PYSTACK_MODE" = uprobes ] || grep -q 'through its own callbacks' "$d/fs.stderr" ||
		die "the library's callbacks were not used (set $s)"
	round "$d" 3
	fv_stop "$d/fs"
	round "$d" 4
	round "$d" 5 # not attached again: A is the mean of rounds 1 and 5
	stop "$WPID"
	ls "$d"/fs/stacks_*_step.folded >/dev/null 2>&1 || die "--with-stack wrote no folded file (set $s)"
	STK+=("$(sed -n 's/.*--with-stack: \([0-9]*\) stack records, \([0-9]*\) given.*/\2/p' "$d/fs.stderr")")
	[ "${STK[-1]:-0}" -gt 0 ] || die "--with-stack gave no operator a stack (set $s)"
	EVS+=("$(python3 -c 'import json,glob,sys
f=sorted(glob.glob(sys.argv[1]+"/summary_*_step.json"))
print(sum(r["count"] for r in json.load(open(f[1]))["rows"] if r["kind"] in ("cpu_op","user_annotation")) if len(f) > 2 else 0)' "$d/fs")")
	[ "${EVS[-1]}" -gt 0 ] || die "fvbpf wrote too few step segments (set $s)"
	for k in 1 2 3 4 5; do
		v=$(sed -n "s/^round $k ms_per_step \([0-9.]*\)/\1/p" "$WLOG")
		[ -n "$v" ] || die "step round $k printed no figure"
		case $k in 1) a1=$v ;; 2) S1+=("$v") ;; 3) S2+=("$v") ;; 4) S3+=("$v") ;; 5) S0+=("$(awk "BEGIN{print ($a1+$v)/2}")") ;; esac
	done
	note "with-stack set $s/$SETS: ms ${S0[-1]} ${S1[-1]} ${S2[-1]} ${S3[-1]}"
	rm -rf "$d"
done
M0=$(median "${S0[@]}") M1=$(median "${S1[@]}") M2=$(median "${S2[@]}") M3=$(median "${S3[@]}")
EV=$(median "${EVS[@]}")
echo "13. --with-stack, operators through $PYSTACK_MODE: training step of tests/workloads/torch_train.py ($EV torch events a step), torch $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
echo "   median of $STEPS steps, $SETS sets (a process each); operators given a stack per C run: ${STK[*]}"
srow() { # LABEL MEDIAN PER-SET...
	local label=$1 med=$2
	shift 2
	printf '   %-46s %-24s %8.3f ms  %5.2fx  %6.2f us/event\n' "$label" "$(printf '%.2f ' "$@")" "$med" \
		"$(awk "BEGIN{print $med/$M0}")" "$(awk "BEGIN{print ($med-$M0)*1000/$EV}")"
}
srow "A not attached" "$M0" "${S0[@]}"
srow "B fvbpf inside segments" "$M1" "${S1[@]}"
srow "C fvbpf inside segments, --with-stack" "$M2" "${S2[@]}"
srow "D torch.profiler (CPU), with_stack=True" "$M3" "${S3[@]}"
echo "   goal C < D: $(awk "BEGIN{print ($M2 < $M3) ? \"met\" : \"NOT met\"}") (C-B, the stacks alone: $(awk "BEGIN{printf \"%.2f\", ($M2-$M1)*1000/$EV}") us/event)"
