#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# `make demo`: start the bundled demo trainer, attach fvbpf to it by PID,
# write three step segments into ./fvbpf-demo/, stop the trainer, show them.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=./fvbpf-demo

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: fvbpf needs root to load BPF; run 'make demo' (it uses sudo)" >&2
	exit 1
fi

log=$(mktemp)
trainer=
cleanup() {
	[ -n "$trainer" ] && kill "$trainer" 2>/dev/null || true
	rm -f "$log"
}
trap cleanup EXIT

# A simulated training loop calling the real libcudart (without a GPU each
# call fails fast, yet fvbpf sees it); without the CUDA toolkit, one with
# CPU work and a data-loader thread instead.
if [ -x "$BUILD/tests/cuda_trainer" ]; then
	REGIONS=training_train_one_step,training_forward,training_backward
	"$BUILD/tests/cuda_trainer" --steps 0 --step-ms 40 >"$log" 2>&1 &
else
	REGIONS=training_train_one_step,training_dataloader,training_forward,training_backward,training_optimizer
	"$BUILD/tests/marker_trainer" --steps 0 --step-ms 60 --work --threads >"$log" 2>&1 &
fi
trainer=$!
for _ in $(seq 100); do grep -q '^pid=' "$log" && break; sleep 0.05; done
echo "demo: trainer running as PID $trainer"
rm -rf "$OUT"
echo "demo: sudo $BUILD/fvbpf attach -p $trainer -r $REGIONS -o $OUT -n 3 (after sudo make install: sudo fvbpf ...)"
"$BUILD/fvbpf" attach -p "$trainer" -r "$REGIONS" -o "$OUT" -n 3
kill -0 "$trainer" && echo "demo: the trainer is still running after fvbpf detached; stopping it"
kill "$trainer"
wait "$trainer" 2>/dev/null || true
trainer=
echo
echo "demo: files in $OUT/ (open a trace_*.json in https://ui.perfetto.dev or chrome://tracing):"
ls -1 "$OUT"
# the first segment whose start fvbpf saw (one may have begun before attach)
first=$(grep -L 'STARTED BEFORE ATTACH' "$OUT"/summary_*.txt | head -n1)
echo
echo "demo: $first"
cat "$first"
