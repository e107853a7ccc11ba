#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# `make bench` section 13: what --profile-memory costs, against
# torch.profiler(profile_memory=True) (docs/memory-profile.md).  Two
# measures, each in one process per set (SETS sets), after an untimed
# warm-up round, rounds in this order:
#   A  not attached
#   Q  torch.profiler (CPU activity), in process
#   P  torch.profiler (CPU activity, profile_memory=True), in process
#   B  fvbpf attached, inside a segment (-r torch:mem_step)
#   C  the same with --profile-memory
# B and C alternate PAIRS times (times drift on this kind of VM); medians
# over all rounds of a kind in all sets.
#   a. Per allocation: N torch.empty(1024) a round (tests/workloads/
#      torch_mem.py alloc): one aten::empty, one CPU allocation and its free
#      (ProfiledCPUMemoryReporter::New and ::Delete, two allocator probe
#      hits) per call.  C-B is what --profile-memory adds per call, P-Q
#      what profile_memory adds to torch.profiler.
#   b. Per step: the training step of torch_mem.py (torch_mem.py time),
#      STEPS steps a round, the median step; allocator events per step as
#      fvbpf counted them (memory_events of a segment).  The step is short
#      and its time swings; (a) is the figure to compare.
# A benchmark, not a test: it exits 0 unless a run failed.
# Usage: tests/bench/mem_bench.sh BUILD_DIR
# Environment: BENCH_SETS (3), BENCH_MEM_ALLOCS (20000), BENCH_MEM_STEPS (200),
#   BENCH_MEM_PAIRS (2), FVBPF_TORCH_PY_214.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
FVBPF=$BUILD/fvbpf
PY=${FVBPF_TORCH_PY_214:-$BUILD/venv-torch214/bin/python3}
SETS=${BENCH_SETS:-3}
ALLOCS=${BENCH_MEM_ALLOCS:-20000}
STEPS=${BENCH_MEM_STEPS:-200}
PAIRS=${BENCH_MEM_PAIRS:-2}
WL=$ROOT/tests/workloads/torch_mem.py

echo
echo "14. --profile-memory against torch.profiler(profile_memory=True) ($SETS sets, $PAIRS fvbpf pairs each)"
if [ ! -x "$PY" ]; then
	echo "   SKIP: no torch venv at $PY (make venv)"
	exit 0
fi
# shellcheck source=tests/bench/bench_lib.sh
. "$ROOT/tests/bench/bench_lib.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fvbpf-mem-bench.XXXXXX")
on_exit bench_cleanup

# round DIR K: not bench_lib's; torch_mem.py writes no done file, the
# round's figure in its log says it is over
round() { # DIR K
	touch "$1/go.$2"
	wait_file "$1/wl.log" "^round $2 " 60 "$WPID" || { tail "$1/wl.log" >&2; die "round $2"; }
}

fv_run() { # DIR K OUT ARGS...: fvbpf attached during round K (OUT new: a
	# stale "tracing" line in its log would start the round unattached)
	local d=$1 k=$2 o=$3
	shift 3
	[ ! -e "$o.err" ] || die "$o.err exists"
	"$FVBPF" attach -p "$WPID" -r torch:mem_step -o "$o" "$@" >"$o.out" 2>"$o.err" &
	local fpid=$!
	PIDS+=("$fpid")
	wait_file "$o.err" 'fvbpf: tracing' 60 "$fpid" || { tail "$o.err" >&2; die "fvbpf did not attach"; }
	round "$d" "$k"
	stop "$fpid"
	[ "$RC" -eq 0 ] || die "fvbpf exited with status $RC"
}

val() { sed -n "s/^round $2 [a-z_]* //p" "$1"; }

# measure MODE N: one process per set; sets A Q P B C (arrays of values)
measure() {
	local mode=$1 n=$2 s d k
	A=() Q=() P=() B=() C=() EV=()
	for ((s = 1; s <= SETS; s++)); do
		d=$TMP/$mode.$s
		mkdir -p "$d"
		start_py "$d" "$WL" "$mode" "$d" $((4 + 2 * PAIRS)) "$n" 2:cpu,3:mem
		for k in 0 1 2 3; do
			round "$d" $k # 0: warm-up
		done
		A+=("$(val "$d/wl.log" 1)") Q+=("$(val "$d/wl.log" 2)") P+=("$(val "$d/wl.log" 3)")
		for ((k = 4; k < 4 + 2 * PAIRS; k += 2)); do
			fv_run "$d" $k "$d/b$k"
			fv_run "$d" $((k + 1)) "$d/c$((k + 1))" --profile-memory
			B+=("$(val "$d/wl.log" $k)") C+=("$(val "$d/wl.log" $((k + 1)))")
		done
		EV+=("$(python3 -c '
import glob, json, sys
m = [json.load(open(f))["metadata"]["memory_events"] for f in sorted(glob.glob(sys.argv[1] + "/c*/summary_*.json"))]
print(max(m) if m else 0)' "$d")")
		kill "$WPID" 2>/dev/null || true
	done
}

report() { # UNIT PER
	python3 - "$1" "$2" "$(median "${A[@]}")" "$(median "${Q[@]}")" "$(median "${P[@]}")" \
		"$(median "${B[@]}")" "$(median "${C[@]}")" <<'PYEOF'
import sys
unit, per = sys.argv[1], sys.argv[2]
a, q, p, b, c = map(float, sys.argv[3:8])
rows = (("not attached", a), ("torch.profiler (CPU)", q),
        ("torch.profiler (CPU, profile_memory=True)", p),
        ("fvbpf, inside a segment", b), ("fvbpf --profile-memory, the same", c))
for name, v in rows:
    print("     %-42s %9.3f %s (%.2fx)" % (name, v, unit, v / a))
print("     added by memory profiling per %s: fvbpf %+.3f %s (C-B), torch.profiler %+.3f %s (P-Q)"
      % (per, c - b, unit, p - q, unit))
if per == "call":
    print("     per allocator event (2 a call): fvbpf %+.0f ns, torch.profiler %+.0f ns"
          % ((c - b) / 2, (p - q) / 2))
PYEOF
}

echo "   a. per torch.empty(1024) (one allocation and its free), $ALLOCS a round"
measure alloc "$ALLOCS"
[ "${EV[0]}" -ge $((2 * ALLOCS)) ] || die "fvbpf recorded ${EV[0]} allocator events, at least $((2 * ALLOCS)) expected"
report ns call
echo "   b. per training step of torch_mem.py, median of $STEPS steps a round"
measure time "$STEPS"
[ "$(median "${EV[@]}")" -gt 0 ] || die "fvbpf recorded no allocator events with --profile-memory"
echo "     allocator events per step (fvbpf's count): $(median "${EV[@]}")"
report ms step
