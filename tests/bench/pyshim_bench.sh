#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# `make bench` section 12: what FastVideo's regions cost in a job once
# fvbpf's Python shim wraps them (docs/python-regions.md).  Per call style
# (module-level profiler_region, controller.region, a @profile_region
# method), ns per region enter+exit, median of 5 rounds of N regions
# (tests/bench/pyshim_cost.py), in three processes run one after the other:
#   A  fastvideo.profiler as released, FastVideo's profiler off, no shim;
#   B  the same with the shim (the import hook's path), fvbpf not attached:
#      the cost a job pays for being attachable;
#   C  fvbpf attached (-r training_train,training_forward), every region a
#      marker hit inside a segment (one segment per round, checked).
# B-A and C-A are what the shim and the attach add.  Needs `make venv`
# (torch 2.13 venv, the FastVideo module); SKIP otherwise.
# Usage: tests/bench/pyshim_bench.sh [BUILD_DIR]   Environment: BENCH_PY_REGIONS (20000)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PY=$BUILD/venv-torch213/bin/python3
FVPKG=$BUILD/fastvideo-0.2.1/pkg
N=${BENCH_PY_REGIONS:-20000}
COST=$ROOT/tests/bench/pyshim_cost.py

echo
echo "12. FastVideo regions through the Python shim (ns per region enter+exit, $N per round)"
if [ ! -x "$PY" ] || [ ! -f "$FVPKG/fastvideo/profiler.py" ]; then
	echo "   SKIP: no torch venv or FastVideo module (make venv)"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}"/fvbpf-pyshim-bench.XXXXXX)
FV=
cleanup() {
	[ -n "$FV" ] && kill "$FV" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
export PYTHONPATH=$FVPKG FVBPF_LIB=$BUILD/libfvbpf.so

"$PY" "$COST" plain "$N" "$TMP" 2>/dev/null | grep '^ROW' >"$TMP/A"
"$PY" "$COST" shim "$N" "$TMP" 2>/dev/null | grep '^ROW' >"$TMP/B"

"$PY" "$COST" attached "$N" "$TMP" >"$TMP/C.log" 2>/dev/null &
JOB=$!
for _ in $(seq 600); do grep -q '^pid=' "$TMP/C.log" && break; sleep 0.1; done
"$BUILD/fvbpf" attach -p "$JOB" -r training_train,training_forward -o "$TMP/out" \
	>"$TMP/fv.out" 2>"$TMP/fv.err" &
FV=$!
for _ in $(seq 600); do grep -q 'Python shim ran' "$TMP/fv.err" && break; sleep 0.1; done
grep -q 'Python shim ran' "$TMP/fv.err" || { cat "$TMP/fv.err" >&2; echo "   FAIL: fvbpf did not attach" >&2; exit 1; }
touch "$TMP/go"
wait "$JOB"
grep '^ROW' "$TMP/C.log" >"$TMP/C"
kill -INT "$FV"
wait "$FV" || true
FV=
segs=$(ls "$TMP/out" | grep -c '^trace_.*_training_train\.json$' || true)
[ "$segs" -eq 15 ] || { echo "   FAIL: $segs segments, 15 expected (3 styles x 5 rounds)" >&2; exit 1; }

printf '   %-26s %10s %10s %10s %12s %12s\n' style A B C B-A C-A
while read -r _ style a; do
	b=$(awk -v s="$style" '$2 == s {print $3}' "$TMP/B")
	c=$(awk -v s="$style" '$2 == s {print $3}' "$TMP/C")
	printf '   %-26s %10.0f %10.0f %10.0f %12.0f %12.0f\n' "${style//_/ }" "$a" "$b" "$c" \
		"$(awk "BEGIN{print $b - $a}")" "$(awk "BEGIN{print $c - $a}")"
done <"$TMP/A"
echo "   ($segs segments checked; A: FastVideo as released, B: with the shim, not attached, C: attached)"
