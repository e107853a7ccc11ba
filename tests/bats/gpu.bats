#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# GPU activity through the in-process CUPTI agent.  Without a GPU, CUPTI
# cannot enable activity; tests/workloads/c/gpu_sim.c stands in for what needs
# a driver (CUPTI's API callback and its completed buffers, built from the
# real cupti_activity.h structs), and everything after that is real: the
# agent's decoding with the real libcupti, its probes, BPF, the ring
# buffer, the joins, the files.

load helpers

CUDA=${CUDA:-/usr/local/cuda}
SIM=$BUILD/tests/gpu_sim
REGIONS=training_train_one_step,training_forward

setup() {
	common_setup
	[ -x "$SIM" ] || skip "no CUDA toolkit headers: gpu_sim not built"
	[ -e "$CUDA/lib64/libcupti.so.13" ] || skip "no libcupti at $CUDA/lib64"
}
teardown() { common_teardown; }

# GPU events of a trace, as "cat name dur>0 joined" lines.
gpu_events() {
	python3 - "$1" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
starts = {e["id"] for e in ev if e.get("ph") == "s"}
ends = {e["id"] for e in ev if e.get("ph") == "f"}
launch_corr = {e["args"]["correlation"] for e in ev if e.get("cat") == "cuda_runtime" and "correlation" in e["args"]}
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
for e in ev:
    if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
        c = e["args"]["correlation"]
        print(e["cat"], e["name"], "dur_positive" if e["dur"] > 0 else "dur_zero",
              "joined" if c in launch_corr and c in starts and c in ends else "unjoined",
              names.get(e["pid"], "?"))
print("otherData", t["otherData"]["gpu_activity"], t["otherData"]["gpu_clock"],
      t["otherData"]["gpu_records_missing"])
PY
}

@test "agent records: GPU tracks, exact joins, device time in summaries" {
	FVBPF_AGENT=off start_workload "$WL_LOG" "$SIM" --steps 3 --kernels 3 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 3 -r "$REGIONS"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	wait_for grep -q '^counts' "$WL_LOG"
	grep -q '^counts steps=3 kernels=9 copies=3 records=12 missing=0' "$WL_LOG"
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=3 incomplete=0"
	assert_line "api cudaLaunchKernel=9"
	local seg
	for seg in 0000 0001 0002; do
		run gpu_events "$OUT/trace_rank0_segment${seg}_training_train_one_step.json"
		assert_success
		assert_line "otherData cupti simulated 0"
		# every GPU record of the step, named, timed, joined to its launch
		[ "$(grep -c '^kernel .* dur_positive joined GPU 0$' <<<"$output")" -eq 3 ]
		[ "$(grep -c '^gpu_memcpy Memcpy HtoD dur_positive joined GPU 0$' <<<"$output")" -eq 1 ]
		refute_line --partial "unjoined"
	done
	assert_line --partial "kernel scale(float*, float, int) dur_positive joined"
	assert_line --partial "kernel void fv::tmpl<7>(int*) dur_positive joined"
	# summaries: kernel rows carry device time, the header the GPU busy time
	run python3 -c "
import json,sys
s = json.load(open(sys.argv[1]))
rows = {(r['kind'], r['name']): r for r in s['rows']}
k = rows[('kernel', 'scale(float*, float, int)')]
t = rows[('kernel', 'void fv::tmpl<7>(int*)')]
m = rows[('gpu_memcpy', 'Memcpy HtoD')]
print(k['count'] + t['count'], k['device_count'] + t['device_count'], k['device_us'] > 0,
      m['device_count'], m['device_us'] > 0, s['metadata']['gpu_busy_us'] > 0)" \
		"$OUT/summary_rank0_segment0001_training_train_one_step.json"
	assert_output "3 3 True 1 True True"
	run grep -E '^GPU busy [0-9.]+ ms of [0-9.]+ ms segment wall time' \
		"$OUT/summary_rank0_segment0001_training_train_one_step.txt"
	assert_success
	run python3 -c "import json,sys; g=json.load(open(sys.argv[1]))['processes'][0]['gpu']; print(g['activity'], g['records'], g['joined'], g['missing'], g['late'])" "$OUT/manifest.json"
	# 12 activity records and 2 name records
	assert_output "cupti 14 12 0 0"
}

@test "a GPU record that never comes: the segment waits --gpu-wait, then counts it missing" {
	FVBPF_AGENT=off start_workload "$WL_LOG" "$SIM" --steps 1 --kernels 3 --missing 1 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 1 --gpu-wait 1 -r "$REGIONS"
	kill -USR1 "$WL_PID"
	local t0=$SECONDS
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	# it waited for the missing record, boundedly
	[ $((SECONDS - t0)) -ge 1 ]
	[ $((SECONDS - t0)) -le 5 ]
	run gpu_events "$OUT/trace_rank0_segment0000_training_train_one_step.json"
	assert_line "otherData cupti simulated 1"
	[ "$(grep -c '^kernel .* joined' <<<"$output")" -eq 2 ]
	grep -q "GPU records missing 1" "$OUT/summary_rank0_segment0000_training_train_one_step.txt"
}

@test "real CUPTI without a driver: metadata says why, the job is unharmed" {
	start_workload "$WL_LOG" "$BUILD/tests/cuda_trainer" --steps 2 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 2 -r "$REGIONS"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	grep -q "PID $WL_PID: cuptiSubscribe: CUPTI_ERROR_UNKNOWN (999)" "$FV_ERR"
	run gpu_events "$OUT/trace_rank0_segment0000_training_train_one_step.json"
	assert_output "otherData unavailable: cuptiSubscribe: CUPTI_ERROR_UNKNOWN (999) none 0"
	run grep -c "device time: not collected (unavailable: cuptiSubscribe" "$OUT/summary_rank0_segment0001_training_train_one_step.txt"
	assert_output "1"
	# the job runs on and its CUDA calls were still traced
	kill -0 "$WL_PID"
	wait_for grep -q '^attached=0' "$WL_LOG"
	run python3 "$CHECK" "$OUT"
	assert_line "api cudaMalloc=2"
}

@test "no CUPTI to be found: said once, CUDA calls still traced" {
	FVBPF_CUPTI=/nonexistent/libcupti.so start_workload "$WL_LOG" "$BUILD/tests/cuda_trainer" --steps 2 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 2 -r "$REGIONS"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run grep -c "PID $WL_PID: no CUPTI found" "$FV_ERR"
	assert_output "1"
	run gpu_events "$OUT/trace_rank0_segment0001_training_train_one_step.json"
	assert_output --partial "otherData unavailable: no CUPTI found"
	kill -0 "$WL_PID"
}

@test "the agent is dormant until attach: no thread, no CUPTI loaded" {
	plain_pass_only "the agent's side (libfvbpf, not sanitized here)"
	start_workload "$WL_LOG" "$BUILD/tests/cuda_trainer" --steps 0 --step-ms 5
	sleep 0.3
	# one thread, nothing of CUPTI mapped
	[ "$(ls /proc/$WL_PID/task | wc -l)" -eq 1 ]
	run grep -q libcupti "/proc/$WL_PID/maps"
	assert_failure
	start_fvbpf -p "$WL_PID" -o "$OUT" -d 1 -r "$REGIONS"
	wait_fvbpf
	# attaching woke it: CUPTI was looked for and loaded
	grep -q libcupti "/proc/$WL_PID/maps"
	kill -0 "$WL_PID"
}

@test "fvbpf killed with SIGKILL: the semaphore falls, the job goes on" {
	plain_pass_only "the agent's side (libfvbpf, not sanitized here)"
	FVBPF_AGENT=off start_workload "$WL_LOG" "$SIM" --steps 1 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -r "$REGIONS"
	kill -USR1 "$WL_PID"
	wait_for grep -q '^counts' "$WL_LOG"
	kill -KILL "$FV_PID"
	wait "$FV_PID" || true
	FV_PID=
	wait_for bash -c "tail -n 1 '$WL_LOG' | grep -q '^attached=0'"
	kill -0 "$WL_PID"
}

@test "LD_PRELOAD=libfvbpf.so brings markers and agent into a job that does not link them" {
	plain_pass_only "the agent's side (libfvbpf, not sanitized here)"
	start_workload "$WL_LOG" env LD_PRELOAD="$BUILD/libfvbpf.so" bash -c 'echo pid=$$; exec sleep 30'
	run "$FVBPF" attach -p "$WL_PID" -o "$OUT" -d 0.5 -r "$REGIONS"
	assert_success
	assert_output --partial "markers in $BUILD/libfvbpf.so"
	assert_output --partial "region 'training_train_one_step' was never entered"
}

@test "a process without CUDA: the agent loads no CUPTI, and activates once CUDA loads" {
	plain_pass_only "the agent's side (libfvbpf, not sanitized here); fvbpf's look again is cuda.bats' late libcudart"
	start_workload "$WL_LOG" python3 "$ROOT/tests/workloads/py_cpu_then_cuda.py" "$CUDA/lib64/libcudart.so.13"
	start_fvbpf -p "$WL_PID" -o "$OUT" -r "$REGIONS"
	wait_for grep -q '^saw attached' "$WL_LOG"
	sleep 1 # markers ran: the agent is awake, and sees no CUDA
	run grep -q libcupti "/proc/$WL_PID/maps"
	assert_failure
	kill -USR1 "$WL_PID"
	wait_for grep -q '^loaded' "$WL_LOG"
	assert_file_contains "$WL_LOG" '^cupti=0$'
	# within a few of its 250 ms looks, CUPTI is loaded and tried
	wait_for grep -q libcupti "/proc/$WL_PID/maps"
	wait_for grep -q "PID $WL_PID: cuptiSubscribe: CUPTI_ERROR_UNKNOWN (999)" "$FV_ERR"
	kill -INT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	# said once, in the metadata of the segments before CUDA, not as a warning
	run gpu_events "$OUT/trace_rank0_segment0000_training_train_one_step.json"
	assert_output --partial "otherData unavailable: no CUDA in this process"
	run grep -c "no CUDA in this process" "$FV_ERR"
	assert_output "0"
	kill -0 "$WL_PID"
}

@test "torch ops: a launch is attributed to its op, device time per op (key_averages rules)" {
	FVBPF_AGENT=off start_workload "$WL_LOG" "$SIM" --steps 3 --wait-signal --idle \
		--torch "$BUILD/tests/faketorch/libtorch_cpu.so"
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 3 -r "$REGIONS"
	grep -q '2 torch operators' "$FV_ERR"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	wait_for grep -q '^counts' "$WL_LOG"
	grep -q '^counts steps=3 kernels=9 ' "$WL_LOG"
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=3 incomplete=0"
	run python3 -c '
import json, sys
out = sys.argv[1]
t = json.load(open(out + "/trace_rank0_segment0001_training_train_one_step.json"))["traceEvents"]
ops = {e["name"]: e for e in t if e.get("cat") == "cpu_op"}
lin, mm = ops["aten::linear"], ops["aten::addmm"]
inside = lambda e, o: e["tid"] == o["tid"] and o["ts"] <= e["ts"] and e["ts"] + e["dur"] <= o["ts"] + o["dur"]
launches = [e for e in t if e.get("name") == "cudaLaunchKernel" and e.get("ph") == "X"]
print("launches", len(launches), "in_linear", sum(inside(e, lin) for e in launches),
      "in_addmm", sum(inside(e, mm) for e in launches), "addmm_in_linear", inside(mm, lin))
s = {r["name"]: r for r in json.load(open(out + "/summary_rank0_segment0001_training_train_one_step.json"))["rows"]}
L, A = s["aten::linear"], s["aten::addmm"]
print("counts", L["count"], A["count"])
print("addmm_self_is_total", A["self_device_us"] == A["device_us"] > 0)
print("linear_total_is_self_plus_child", abs(L["device_us"] - L["self_device_us"] - A["device_us"]) < 0.002,
      L["self_device_us"] > 0)
print("self_cpu_below_cpu", L["self_cpu_us"] < L["cpu_us"], A["self_cpu_us"] < A["cpu_us"])
' "$OUT"
	echo "$output"
	assert_success
	assert_line "launches 3 in_linear 3 in_addmm 2 addmm_in_linear True"
	assert_line "counts 1 1"
	assert_line "addmm_self_is_total True"
	assert_line "linear_total_is_self_plus_child True True"
	assert_line "self_cpu_below_cpu True True"
}
