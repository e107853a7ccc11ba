#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# A target that sends hostile bytes and numbers (tests/workloads/hostile_target.c):
# its comm forges an "fvbpf:" line, a thread's name and the agent's status
# text and kernel names hold escape sequences, control characters and invalid
# UTF-8, its GPU records sit at the edges of their types.  Every JSON file
# must still parse strictly, nothing raw may reach the terminal, and no
# arithmetic may go wrong.

load helpers

HOSTILE=$BUILD/tests/hostile_target
STRICT=$ROOT/tests/lib/strict_outputs.py
REGIONS=training_train_one_step,training_forward,training_dataloader

setup() { common_setup; }
teardown() { common_teardown; }

@test "hostile target text: strict JSON everywhere, nothing raw on the terminal" {
	FVBPF_AGENT=off start_workload "$WL_LOG" "$HOSTILE" --steps 3 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 3 -r "$REGIONS"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	grep -q '^counts steps=3 launches=6' "$WL_LOG"
	# The hostile text did reach fvbpf: the status, the comm, the kernel.
	grep -q 'GPU activity on: \\x1b\[31mred' "$FV_ERR"
	grep -q 'attached to PID [0-9]* (\\x1b\[31m\\x0dfvbpf: x' "$FV_ERR"
	grep -q 'unavailable: \\x1b\[31mred' "$FV_OUT"
	ls "$OUT"/trace_rank0_segment000[012]_training_train_one_step.json
	run python3 "$STRICT" "$OUT" "$FV_OUT" "$FV_ERR"
	assert_success
	assert_line "ok manifest.json"
	assert_line "ok summary_rank0_segment0002_training_train_one_step.json"
	assert_line "ok fvbpf.err"
	# No ESC, BEL or CR byte anywhere fvbpf printed, no forged line.
	run grep -c $'[\e\a\r]' "$FV_OUT" "$FV_ERR"
	assert_output "$FV_OUT:0
$FV_ERR:0"
	run grep -c '^fvbpf: forged' "$FV_OUT" "$FV_ERR"
	assert_output "$FV_OUT:0
$FV_ERR:0"
}

@test "hostile GPU records: wide arithmetic, consistent tracks, bounded totals" {
	FVBPF_AGENT=off start_workload "$WL_LOG" "$HOSTILE" --steps 3 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 3 -r "$REGIONS"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 - "$OUT" <<'PY'
import json, sys
d = sys.argv[1]
t = json.load(open(d + "/trace_rank0_segment0000_training_train_one_step.json"))
ev = t["traceEvents"]
k = [e for e in ev if e.get("cat") == "kernel"]
smem = sorted(e["args"]["shared_memory"] for e in k)
print("kernels", len(k), "smem", smem[0], smem[-1])
# a device of 2^32-1 is one GPU process: its slices and its name agree
gpu_pids = {e["pid"] for e in k}
named = {e["pid"] for e in ev if e.get("name") == "process_name" and e["ph"] == "M"}
print("gpu pids named", gpu_pids <= named, sorted(gpu_pids))
print("durations", sorted(e["dur"] for e in k))
print("name has U+FFFD and ESC", any("\ufffd" in e["name"] and "\x1b" in e["name"] for e in k))
m = json.load(open(d + "/manifest.json"))
p = m["processes"][0]
print("cupti_dropped", p["gpu"]["cupti_dropped"])
print("over_limits", sorted(p["over_limits"].values()))
PY
	assert_success
	assert_line "kernels 2 smem -4294967296 4294967294"
	assert_line "gpu pids named True [0, 4294967295]"
	assert_line "durations [0.0, 50.0]"
	assert_line "name has U+FFFD and ESC True"
	# a negative drop count from the target counts nothing
	assert_line "cupti_dropped 0"
	assert_line "over_limits [0, 0, 0, 0, 0, 0]"
}
