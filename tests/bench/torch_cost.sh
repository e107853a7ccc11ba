#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# Per torch operator cost, one process, rounds in turn (root; bpftrace
# optional): tests/bench/torch_op_cost.py times N torch.add calls on tiny
# tensors (one at::_ops::add_Tensor::call each) per round:
#   0 not attached
#   1 fvbpf attached with every torch probe, outside segments
#     (-r torch:no_such_scope: no scope opens the gate)
#   2 fvbpf attached, inside a segment (-r torch:bench_round)
#   3 bpftrace uprobe + uretprobe count on add_Tensor::call alone
# Cost per op = round - round 0.  A benchmark, not a test: it prints figures.
# Usage: tests/bench/torch_cost.sh [BUILD_DIR]; PY=python with torch, N=calls.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$ROOT/build}
PY=${PY:-/work/venv-torch214/bin/python3}
N=${N:-100000}
D=$(mktemp -d)
trap 'kill $WL 2>/dev/null || true; rm -rf "$D"' EXIT
"$PY" "$ROOT/tests/bench/torch_op_cost.py" "$D" "$N" 4 >"$D/wl.log" 2>&1 &
WL=$!
for _ in $(seq 600); do grep -q pid= "$D/wl.log" && break; sleep 0.1; done
P=$(sed -n 's/^pid=//p' "$D/wl.log")
round() { touch "$D/go.$1"; while [ ! -e "$D/done.$1" ]; do sleep 0.05; done; }
fv() { # ROUND ARGS...
	local r=$1
	shift
	"$BUILD/fvbpf" attach -p "$P" "$@" -o "$D/o$r" 2>"$D/f$r.err" &
	local f=$!
	until grep -q "fvbpf: tracing" "$D/f$r.err"; do sleep 0.1; done
	round "$r"
	kill -INT $f
	wait $f
}
round 0
fv 1 -r 'torch:no_such_scope'
fv 2 -r 'torch:bench_round'
LIB=$(grep -m1 -o '/[^ ]*libtorch_cpu.so' "$D/f1.err")
FN=_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE
if command -v bpftrace >/dev/null; then
	bpftrace -p "$P" -e "uprobe:$LIB:$FN { @e = count(); } uretprobe:$LIB:$FN { @r = count(); }" \
		>"$D/bt.log" 2>&1 &
	B=$!
	for _ in $(seq 1200); do grep -q Attaching "$D/bt.log" && break; sleep 0.1; done
	sleep 1
	round 3
	kill -INT $B
	wait $B || true
else
	touch "$D/go.3"
fi
wait $WL || true
awk '/^round/ { ns[$2] = $4 } END {
	printf "torch.add: not attached %.0f ns/op\n", ns[0]
	printf "fvbpf, all torch probes, outside segments: %.0f ns/op (+%.0f)\n", ns[1], ns[1] - ns[0]
	printf "fvbpf, inside a segment: %.0f ns/op (+%.0f)\n", ns[2], ns[2] - ns[0]
	if (3 in ns && ns[3] > 0) printf "bpftrace entry+return on add_Tensor::call: %.0f ns/op (+%.0f); fvbpf inside / bpftrace = %.2fx\n", ns[3], ns[3] - ns[0], (ns[2] - ns[0]) / (ns[3] - ns[0])
}' "$D/wl.log"
grep -h "torch operators" "$D/f1.err" | sed 's/^fvbpf: //'
