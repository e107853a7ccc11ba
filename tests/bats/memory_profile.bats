#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# --profile-memory: per-op memory of real PyTorch (CPU) against
# torch.profiler(profile_memory=True) on the same step, and the CUDA path
# without a GPU through the wheel's real exported libc10 functions.
# (tests/bats/memory.bats is about fvbpf's own --max-memory.)

load helpers

MEM_WL=$ROOT/tests/workloads/torch_mem.py
REPORT_WL=$ROOT/tests/workloads/mem_report.py
MEM_CHECK=$ROOT/tests/lib/mem_check.py
SNAP_CHECK=$ROOT/tests/lib/mem_snapshot_check.py

setup() { common_setup; }
teardown() {
	[ -n "${BATS_TEST_TMPDIR:-}" ] && touch "$BATS_TEST_TMPDIR/exit"
	common_teardown
}

per_op_memory_matches_profiler() { # PY
	oracle -n 2 "$BATS_TEST_TMPDIR/oracle.txt" "$1" "$MEM_WL" oracle
	start_workload "$WL_LOG" "$1" "$MEM_WL" run "$BATS_TEST_TMPDIR" 6
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:mem_step -n 3 --profile-memory
	grep -q -- '--profile-memory: 3 allocator functions probed in .*libc10.so' "$FV_ERR"
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	local seg
	for seg in 0000 0001 0002; do
		run python3 "$MEM_CHECK" oracle "$BATS_TEST_TMPDIR/oracle.txt" \
			"$OUT/summary_rank0_segment${seg}_mem_step.json" \
			"$OUT/trace_rank0_segment${seg}_mem_step.json" \
			"$OUT/memory_rank0_segment${seg}_mem_step.svg"
		echo "$output"
		assert_success
	done
	# the torch.cuda.memory._snapshot() export, read by torch's own tools
	run "$1" "$SNAP_CHECK" "$OUT/memory_snapshot_rank0_segment0001_mem_step.json" \
		"$OUT/trace_rank0_segment0001_mem_step.json"
	echo "$output"
	assert_success
	# the text summary's memory table
	grep -q '^Memory (bytes, frees negative)' "$OUT/summary_rank0_segment0001_mem_step.txt"
	grep -q '^memory_peaks: cpu allocated=[0-9]* op=aten::' "$OUT/summary_rank0_segment0001_mem_step.txt"
	# the manifest says what was probed
	run python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]["profile_memory"]
print(p["libc10"].endswith("torch/lib/libc10.so"), p["functions_probed"], p["records"] > 0)' \
		"$OUT/manifest.json"
	assert_output "True 3 True"
}

@test "memory 2.14.1: per-op CPU memory, [memory] events and the peak equal torch.profiler's" {
	plain_pass_only "the allocator probes and [memory] events run in the --with-stack test of this pass; the oracle comparison is the plain pass's"
	per_op_memory_matches_profiler "$PY214"
}

@test "memory 2.13.0: per-op CPU memory, [memory] events and the peak equal torch.profiler's" {
	plain_pass_only "the same fvbpf code on torch 2.13.0"
	per_op_memory_matches_profiler "$PY213"
}

@test "memory: the CUDA path through the real exported reportMemoryUsageToProfiler, hostile values bounded" {
	need_torch "$PY214"
	local lib
	lib=$(dirname "$PY214")/../lib/python3.11/site-packages/torch/lib/libc10.so
	[ -r "$lib" ]
	start_workload "$WL_LOG" env FVBPF_LIB="$BUILD/libfvbpf.so" python3 "$REPORT_WL" "$lib" \
		"$BATS_TEST_TMPDIR"
	# the FastVideo variable turns it on, as --profile-memory does
	FASTVIDEO_TORCH_PROFILER_WITH_PROFILE_MEMORY=1 start_fvbpf -p "$WL_PID" -o "$OUT" \
		-r training_train_one_step -n 1
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$MEM_CHECK" cuda "$WL_LOG" \
		"$OUT/summary_rank0_segment0000_training_train_one_step.json" \
		"$OUT/trace_rank0_segment0000_training_train_one_step.json" \
		"$OUT/memory_rank0_segment0000_training_train_one_step.svg"
	echo "$output"
	assert_success
	# the picture is in the manifest's record of its segment
	run python3 -c '
import json, sys
print([f.get("memory_svg") for f in json.load(open(sys.argv[1]))["files"]])' "$OUT/manifest.json"
	assert_output "['memory_rank0_segment0000_training_train_one_step.svg']"
	# the snapshot export: CUDA devices 0 and 1, then the CPU
	run "$PY214" "$SNAP_CHECK" \
		"$OUT/memory_snapshot_rank0_segment0000_training_train_one_step.json" \
		"$OUT/trace_rank0_segment0000_training_train_one_step.json"
	echo "$output"
	assert_success
	assert_line --partial "device lists [4, 1, 4]"
	# the job is unharmed: its own process went on to the end
	grep -q '^expect ' "$WL_LOG"
	kill -0 "$WL_PID"
}

@test "memory: off by default: no allocator probes, no [memory] events, no memory columns" {
	plain_pass_only "no memory-profile code runs"
	need_torch "$PY214"
	start_workload "$WL_LOG" "$PY214" "$MEM_WL" run "$BATS_TEST_TMPDIR" 3
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:mem_step -n 1
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	run grep -c 'allocator functions probed' "$FV_ERR"
	assert_output 0
	run python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))["traceEvents"]
print(s["metadata"]["memory_events"], sum(1 for e in t if e.get("name") == "[memory]"),
      any("cpu_memory_usage" in r for r in s["rows"]))' \
		"$OUT/summary_rank0_segment0000_mem_step.json" "$OUT/trace_rank0_segment0000_mem_step.json"
	assert_output "0 0 False"
	run ls "$OUT"
	refute_output --partial ".svg"
}

@test "memory: DataLoader workers fork every epoch with the allocator probes in: workers live, steps recorded" {
	plain_pass_only "fvbpf's side is the --with-stack test's; the forked workers are the target's side"
	need_torch "$PY214"
	# 4 batches an epoch, 2 fork workers each: new workers fork twice in 8 steps
	start_workload "$WL_LOG" "$PY214" "$ROOT/tests/workloads/torch_train.py" --workers 2 run \
		"$BATS_TEST_TMPDIR" 8
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by 'Optimizer.step*' -n 6 --profile-memory
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	# every worker exited 0 (a crash makes the DataLoader raise, and the
	# loop would not print this)
	grep -q '^workers=4 bad=0$' "$WL_LOG"
	run python3 -c '
import glob, json, sys
segs = sorted(glob.glob(sys.argv[1] + "/summary_*_step.json"))
m = [json.load(open(f))["metadata"] for f in segs]
print(len(segs), all(x["memory_events"] > 0 and x["memory_events_lost"] == 0 for x in m))' "$OUT"
	assert_output "6 True"
}

@test "memory with --with-stack: the Python line of the operator at each peak" {
	need_torch "$PY214"
	start_workload "$WL_LOG" "$PY214" "$MEM_WL" run "$BATS_TEST_TMPDIR" 4
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:mem_step -n 2 --profile-memory --with-stack \
		--group-by-stack 1
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	# the peak's operator and the Python frame that called it (file:line)
	grep -Eq '^memory_peaks: cpu allocated=[0-9]+ op=aten::[^ ]+ line=[^;]*\([^;:]*\.py:[0-9]+\)' \
		"$OUT/summary_rank0_segment0001_mem_step.txt"
	# the same in every output's metadata (the summary JSON's)
	python3 -c '
import json, re, sys
m = json.load(open(sys.argv[1]))["metadata"]["memory_peaks"]
assert re.search(r"op=aten::\S+ line=.*\.py:\d+\)", m), m
' "$OUT/summary_rank0_segment0001_mem_step.json"
	# rows per (operator, frame): each call's memory on its own row, no
	# memory-only rows beside them
	python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["kind"] == "cpu_op"]
mem = [r for r in rows if r["cpu_memory_usage"] or r["self_cpu_memory_usage"]]
assert mem and all(r["count"] > 0 for r in mem), [r for r in mem if not r["count"]]
assert sum(1 for r in mem if r["stack"] and ".py(" in r["stack"][0]) > 5, mem
' "$OUT/summary_rank0_segment0001_mem_step.json"
}

# A side thread (a data or helper thread) whose record_function scope is
# open across step ends runs operators in every segment: their caller began
# before the segment, so they are roots.  fvbpf runs with a perturbed heap
# (glibc's MALLOC_PERTURB_, ASan's malloc_fill_byte): a parent index read
# from never-written memory is then a huge index, a crash or a report, not
# a silent -1.
@test "memory: a side thread's scope open across step ends, perturbed heap: its ops are roots" {
	need_torch "$PY214"
	start_workload "$WL_LOG" "$PY214" "$ROOT/tests/workloads/torch_side_thread.py" run \
		"$BATS_TEST_TMPDIR" 8
	[ -n "${FVBPF_SANITIZED:-}" ] &&
		export ASAN_OPTIONS="$ASAN_OPTIONS:malloc_fill_byte=1:max_malloc_fill_size=1048576"
	MALLOC_PERTURB_=254 start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:mem_step -n 4 \
		--profile-memory --with-stack
	run_steps
	cat "$FV_ERR"
	[ "$FV_STATUS" -eq 0 ]
	local seg
	for seg in 0000 0001 0002 0003; do
		run python3 "$ROOT/tests/lib/side_thread_check.py" \
			"$OUT/summary_rank0_segment${seg}_mem_step.json" \
			"$OUT/trace_rank0_segment${seg}_mem_step.json" \
			"$OUT/stacks_rank0_segment${seg}_mem_step.folded"
		echo "$output"
		assert_success
	done
}
