#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# `make bench`, section 6b: what --record-shapes costs per operator, against
# torch.profiler(record_shapes=True).  A benchmark, not a test: it prints
# figures and exits 0 unless a run failed.
#
# Method (root; torch venv of `make venv`, else SKIP): tests/bench/
# torch_op_cost.py times N torch.add calls on 4-element tensors (one
# at::_ops::add_Tensor::call each, 3 arguments: two tensors and a Scalar)
# per round (its figure: the thread's CPU time per call, median of 10
# chunks), each round inside record_function("bench_round"), one process
# per set, rounds in this order:
#   A  not attached
#   C  fvbpf inside a segment (-r torch:bench_round), no shapes
#   S  fvbpf inside a segment, --record-shapes --with-flops
#   P  torch.profiler (CPU) in process, record_shapes=False
#   R  torch.profiler (CPU) in process, record_shapes=True
# SETS sets, medians.  The shapes' own cost is S-C (fvbpf) against R-P
# (torch.profiler); each fvbpf run's count of aten::add rows and their
# shapes string are checked.
#
# Usage: tests/bench/shapes_bench.sh BUILD_DIR
# Environment: BENCH_TORCH_OPS (calls per round, 100000), BENCH_SETS (3),
#   FVBPF_TORCH_PY_214 (python with torch).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
FVBPF=$BUILD/fvbpf
PY=${FVBPF_TORCH_PY_214:-$BUILD/venv-torch214/bin/python3}
N=${BENCH_TORCH_OPS:-100000}
SETS=${BENCH_SETS:-3}

echo
if [ ! -x "$PY" ]; then
	echo "6b. PyTorch operator shapes: SKIP (no torch venv at $PY: run \`make venv\`)"
	exit 0
fi

# shellcheck source=tests/bench/bench_lib.sh
. "$ROOT/tests/bench/bench_lib.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fvbpf-shapes-bench.XXXXXX")
export FVBPF_CACHE_DIR=$TMP/cache   # the first set measures, the others read it
on_exit bench_cleanup

# fv_round: not bench_lib's; it takes the output folder and always traces
# inside torch:bench_round
fv_round() { # DIR K OUT ARGS...: fvbpf inside round K's segment
	local d=$1 k=$2 o=$3
	shift 3
	"$FVBPF" attach -p "$WPID" -r torch:bench_round -n 2 "$@" -o "$o" >"$o.stdout" 2>"$o.stderr" &
	FPID=$!
	PIDS+=("$FPID")
	wait_file "$o.stderr" 'fvbpf: tracing' 300 "$FPID" ||
		{ tail -n 15 "$o.stderr" >&2; die "fvbpf did not attach"; }
	# --record-shapes: the plans are built after the attach (seconds when
	# not cached); operators before them have no shapes
	case " $* " in *" --record-shapes "*)
		wait_file "$o.stderr" 'shapes of [0-9]' 300 "$FPID" ||
			{ tail -n 15 "$o.stderr" >&2; die "fvbpf built no shape plans"; } ;;
	esac
	go_round "$d" "$k"
	stop "$FPID"
	[ "$RC" -eq 0 ] || { tail -n 15 "$o.stderr" >&2; die "fvbpf exited with status $RC"; }
}

# "COUNT SHAPES" of aten::add in the timed segment (the second) under OUT
seg_add() {
	python3 - "$1" <<-'EOF'
		import glob, json, sys
		f = sorted(glob.glob(sys.argv[1] + "/summary_*_segment0001_*.json"))
		rows = [r for r in json.load(open(f[0]))["rows"] if r["name"] == "aten::add"] if f else []
		print(sum(r["count"] for r in rows), rows[0]["shapes"].replace(" ", "") if len(rows) == 1 else "-")
	EOF
}

A=() C=() S=() P=() R=()
for ((s = 1; s <= SETS; s++)); do
	d=$TMP/op.$s
	mkdir -p "$d"
	start_py "$d" "$ROOT/tests/bench/torch_op_cost.py" "$d" "$N" 5 "3=plain,4=shapes"
	go_round "$d" 0                                                    # A
	fv_round "$d" 1 "$d/fc"                                            # C
	read -r cnt shp < <(seg_add "$d/fc")
	[ "$cnt" = "$N" ] && [ "$shp" = "" -o "$shp" = "-" ] || die "fvbpf without shapes: $cnt adds, shapes '$shp'"
	fv_round "$d" 2 "$d/fs" --record-shapes --with-flops                # S
	read -r cnt shp < <(seg_add "$d/fs")
	[ "$cnt" = "$N" ] && [ "$shp" = "[[4],[4],[]]" ] || die "fvbpf with shapes: $cnt adds, shapes '$shp'"
	go_round "$d" 3                                                    # P
	go_round "$d" 4                                                    # R
	stop "$WPID"
	for k in 0 1 2 3 4; do
		v=$(sed -n "s/^round $k ns_per_op \([0-9.]*\)/\1/p" "$WLOG")
		[ -n "$v" ] || die "round $k printed no figure"
		case $k in 0) A+=("$v") ;; 1) C+=("$v") ;; 2) S+=("$v") ;; 3) P+=("$v") ;; 4) R+=("$v") ;; esac
	done
	note "shapes set $s/$SETS: ns/op A ${A[-1]}, C ${C[-1]}, S ${S[-1]}, P ${P[-1]}, R ${R[-1]}"
	rm -rf "$d"
done
MA=$(median "${A[@]}") MC=$(median "${C[@]}") MS=$(median "${S[@]}") MP=$(median "${P[@]}") MR=$(median "${R[@]}")
over() { awk "BEGIN{printf \"%.1f\", $1-$2}"; }

echo "6b. PyTorch operator shapes: $N torch.add calls a round (3 arguments: 2 tensors, a Scalar), torch $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
echo "   thread CPU ns per op (median of 10 chunks a round), one process per set, rounds A C S P R in turn; $SETS sets, medians"
printf '   %-58s %-30s %9s %10s\n' "run" "per set" "median" "over A"
trow() { # LABEL MEDIAN PER-SET...
	local label=$1 med=$2
	shift 2
	printf '   %-58s %-30s %9.1f %10s\n' "$label" "$(printf '%.0f ' "$@")" "$med" "$(over "$med" "$MA")"
}
trow "A  not attached" "$MA" "${A[@]}"
trow "C  fvbpf inside a segment, no shapes" "$MC" "${C[@]}"
trow "S  fvbpf inside a segment, --record-shapes --with-flops" "$MS" "${S[@]}"
trow "P  torch.profiler (CPU), record_shapes=False" "$MP" "${P[@]}"
trow "R  torch.profiler (CPU), record_shapes=True" "$MR" "${R[@]}"
echo "   the shapes' own cost per op: fvbpf (S-C) $(over "$MS" "$MC") ns, torch.profiler (R-P) $(over "$MR" "$MP") ns"
echo "   whole cost per op with shapes: fvbpf (S-A) $(over "$MS" "$MA") ns, torch.profiler (R-A) $(over "$MR" "$MA") ns"
exit 0
