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

# Step time of the test training loop (tests/workloads/torch_train.py),
# median over STEPS steps per round, one process: 0 not attached, 1 fvbpf
# attached outside segments, 2 fvbpf inside (--step-by on the exact scope
# name: every step is in a segment), 3 torch.profiler (CPU) in process.
STEPS=${STEPS:-60}
D2=$(mktemp -d)
"$PY" "$ROOT/tests/workloads/torch_train.py" time "$D2" 4 "$STEPS" 3 >"$D2/wl.log" 2>&1 &
WL=$!
for _ in $(seq 600); do grep -q pid= "$D2/wl.log" && break; sleep 0.1; done
P=$(sed -n 's/^pid=//p' "$D2/wl.log")
D=$D2
round 0
fv 1 -r 'torch:no_such_scope'
fv 2 --step-by 'Optimizer.step#AdamW.step'
round 3
wait $WL || true
EV=$(python3 -c 'import json,glob,sys; f=sorted(glob.glob(sys.argv[1]+"/o2/summary_*_step.json"))[1]; print(sum(r["count"] for r in json.load(open(f))["rows"] if r["kind"] in ("cpu_op","user_annotation")))' "$D2")
awk -v ev="$EV" '/^round/ { ms[$2] = $4 } END {
	printf "training step (%d torch events): not attached %.3f ms\n", ev, ms[0]
	printf "  fvbpf outside segments %.3f ms (%.2fx)\n", ms[1], ms[1] / ms[0]
	printf "  fvbpf inside segments  %.3f ms (%.2fx, %.2f us per event)\n", ms[2], ms[2] / ms[0], (ms[2] - ms[0]) * 1000 / ev
	printf "  torch.profiler (CPU)   %.3f ms (%.2fx)\n", ms[3], ms[3] / ms[0]
}' "$D2/wl.log"
rm -rf "$D2"
