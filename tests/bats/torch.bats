#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Real PyTorch, no fvbpf code in the job: operators, nodes and scopes per
# step against torch.profiler's own counts for the same step (an oracle run).

load helpers

TRAIN=$ROOT/tests/workloads/torch_train.py
COUNTS=$ROOT/tests/lib/torch_counts.py

setup() { common_setup; }
teardown() { common_teardown; }

# start_torch PY STEPS [OPTION...]: the loop, waiting for $BATS_TEST_TMPDIR/go.
start_torch() {
	need_torch "$1" || return 1
	start_workload "$WL_LOG" "$1" "$TRAIN" "${@:3}" run "$BATS_TEST_TMPDIR" "$2"
}

step_by_matches_profiler() { # PY
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$1" "$TRAIN" oracle
	start_torch "$1" 8
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by 'Optimizer.step*' -n 3
	grep -q 'torch operators' "$FV_ERR"
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=3 incomplete=0"
	assert_file_exists "$OUT/summary_rank0_segment0000_step.json"
	assert_file_exists "$OUT/summary_rank0_segment0002_step.json"
	run python3 "$COUNTS" "$BATS_TEST_TMPDIR/oracle.json" "$OUT"/summary_rank0_segment000*_step.json
	echo "$output"
	assert_success
	# The user scope inside forward, and ops nested inside it on its track.
	run python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
sc = [e for e in ev if e.get("name") == "user_attention" and e.get("cat") == "user_annotation"]
assert len(sc) == 1, sc
s = sc[0]
inner = [e for e in ev if e.get("cat") == "cpu_op" and e["tid"] == s["tid"]
         and e["ts"] >= s["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"]]
names = {e["name"] for e in inner}
assert {"aten::linear", "aten::softmax", "aten::layer_norm"} <= names, names
assert any(e.get("args", {}).get("overload") == "Tensor" for e in ev if e.get("cat") == "cpu_op")
print("ok", len(inner))' "$OUT/trace_rank0_segment0001_step.json"
	assert_success
}

@test "torch 2.14.1: --step-by segments hold torch.profiler's counts" {
	plain_pass_only "first_attach.bats' first test runs this loop (torch 2.14.1) with fvbpf's torch probes in this pass; the oracle comparison is the plain pass's"
	step_by_matches_profiler "$PY214"
	# the CUDA build maps its wheel-layout CUDA libraries: probed, listed
	grep -q 'nvidia/cu13/lib/libcudart.so.13' "$FV_ERR"
	run python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]["torch"]
libs = p["libraries"]
for want in ("torch/lib/libtorch_cpu.so", "nvidia/cu13/lib/libcudart.so.13",
             "nvidia/cu13/lib/libcupti.so.13", "nvidia/nccl/lib/libnccl.so.2"):
    print(want, any(l.endswith(want) for l in libs))
print("ops", p["operators_probed"] > 3000, "nodes", p["nodes_probed"] > 700, "scopes", p["scopes_probed"],
      "evaluate_function", p["evaluate_function_classes"] > 700)
' "$OUT/manifest.json"
	assert_success
	refute_line --partial " False"
	assert_line "ops True nodes True scopes True evaluate_function True"
}

@test "torch 2.13.0: --step-by segments hold torch.profiler's counts" {
	plain_pass_only "the same fvbpf code on torch 2.13.0; ASan test_torch_ops reads its libtorch_cpu.so"
	step_by_matches_profiler "$PY213"
}

@test "torch: --step-by while DataLoader workers fork every epoch: workers live, untraced, counts hold" {
	plain_pass_only "fvbpf's side is the --step-by test's; the forked workers are the target's side"
	# 4 batches an epoch, 2 fork workers each: 7 steps fork new workers twice
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$PY214" "$TRAIN" --workers 2 oracle
	start_torch "$PY214" 8 --workers 2
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by 'Optimizer.step*' -n 6
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	# the workers of each finished epoch exited with 0 (a crash makes the
	# DataLoader raise, and the loop would not print this)
	assert_file_contains "$WL_LOG" '^workers=4 bad=0$'
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=6 incomplete=0"
	# Segment J holds run step J+2 (step 0's scope teaches fvbpf the
	# glob, step 1's end opens the first segment).  The steps that began
	# no epoch hold the oracle's counts exactly; the others, with the end
	# of an epoch and a fork inside, are only valid.
	local starts seg steady=()
	starts=$(sed -n 's/^epoch_starts=//p' "$WL_LOG")
	[ "$starts" = "2,6" ]
	for seg in 1 2 3 5; do
		steady+=("$OUT/summary_rank0_segment000${seg}_step.json")
	done
	run python3 "$COUNTS" "$BATS_TEST_TMPDIR/oracle.json" "${steady[@]}"
	echo "$output"
	assert_success
	# every torch slice is the main process's: workers are not traced
	run python3 -c '
import glob, json, sys
pids = {e["pid"] for f in glob.glob(sys.argv[1] + "/trace_*.json")
        for e in json.load(open(f))["traceEvents"] if e.get("cat") in ("cpu_op", "user_annotation")}
print("pids", pids == {int(sys.argv[2])})' "$OUT" "$WL_PID"
	assert_output "pids True"
	# the epoch steps did fork: their DataLoader scope holds the new workers
	for seg in 0 4; do
		run grep -o '"name":"enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"' \
			"$OUT/trace_rank0_segment000${seg}_step.json"
		[ "${#lines[@]}" -eq 2 ]
	done
}

@test "torch: step ends lost to a full ring are counted, the open step cut where its records stop (--inject --record-shapes --with-stack)" {
	# The issue's command on the uprobe path with the library in the job.
	# fvbpf is stopped while the job runs 40 steps: the 1 MiB ring fills
	# within a few steps and every later record, step scopes included, is
	# lost.  BPF must still number those step ends (their scope's begin
	# record was lost too) and the loader, told by BPF at the end, must cut
	# the open step as lost_end instead of writing one long "complete"
	# step that silently holds the rest.
	start_torch "$PY214" 40
	start_fvbpf -p "$WL_PID" -o "$OUT" --inject --record-shapes --with-stack \
		--step-by 'Optimizer.step#AdamW.step' --ringbuf-size 1
	# segments wait for the build's first shapes measurement: it must be
	# in and the cut open before fvbpf stops, or no step would be cut at
	# all (the shapes line comes a tick before the cut: the ASan build
	# stopped between the two beside other test files)
	wait_long grep -q 'shapes of [0-9]* of [0-9]* torch operators' "$FV_ERR"
	wait_long grep -q 'the layout measurement is in: segments begin' "$FV_ERR"
	kill -STOP "$FV_PID"
	touch "$BATS_TEST_TMPDIR/go"
	wait_long test -e "$BATS_TEST_TMPDIR/done"
	kill -CONT "$FV_PID"
	kill -INT "$FV_PID"
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	cat "$FV_OUT" # shown when the test fails
	grep -Eq 'drops: [1-9][0-9]* ring-buffer drops, .*; 1 segment lost its end' "$FV_OUT"
	run python3 "$CHECK" "$OUT"
	assert_success
	run python3 -c '
import glob, json, sys
segs = sorted((json.load(open(f))["metadata"] for f in glob.glob(sys.argv[1] + "/summary_*_step.json")),
              key=lambda m: m["segment"])
p = json.load(open(sys.argv[1] + "/manifest.json"))["processes"][0]
last = segs[-1]
print("segments", 0 < len(segs) < 40)
print("last", last["incomplete"], last["lost_end"], last["ringbuf_drops"] > 0)
print("lost", p["segments_lost_end"], sum(m["lost_end"] for m in segs))' "$OUT"
	echo "$output"
	assert_line "segments True"
	assert_line "last True True True"
	assert_line "lost 1 1"
}

@test "torch: -r torch:GLOB makes each matching scope a segment, name sanitised (canonical, lower case)" {
	start_torch "$PY214" 6
	start_fvbpf -p "$WL_PID" -o "$OUT" -r 'torch:Optimizer.zero_grad*' -n 2
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=2 incomplete=0"
	assert_file_exists "$OUT/trace_rank0_segment0000_optimizer.zero_grad_adamw.zero_grad.json"
	assert_file_exists "$OUT/trace_rank0_segment0001_optimizer.zero_grad_adamw.zero_grad.json"
	# zero_grad of AdamW with set_to_none: no aten op, only the scope itself
	run grep -c '"cat":"cpu_op"' "$OUT/trace_rank0_segment0001_optimizer.zero_grad_adamw.zero_grad.json"
	[ "$output" = 0 ]
}

# Issue 35: a torch scope that is a region (same bounds) gives the region
# row the scope's own self time, as torch's key_averages counts it for the
# user_annotation row: its time less the operators inside it (before, the
# region row's self time was its total).
@test "torch: -r torch:user_attention: the region row's self CPU time is its scope's, less the operators inside" {
	start_torch "$PY214" 6
	start_fvbpf -p "$WL_PID" -o "$OUT" -r 'torch:user_attention' -n 2
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	run python3 - "$OUT"/summary_rank0_segment000[01]_user_attention.json <<'PY'
import json, sys
from decimal import Decimal
for p in sys.argv[1:]:
    rows = json.load(open(p), parse_float=Decimal)["rows"]
    reg = [r for r in rows if r["kind"] == "region" and r["name"] == "user_attention"]
    ann = [r for r in rows if r["kind"] == "user_annotation" and r["name"] == "user_attention"]
    assert len(reg) == 1 and len(ann) == 1, (reg, ann)
    r, a = reg[0], ann[0]
    assert r["cpu_us"] == a["cpu_us"], (r, a)
    assert r["self_cpu_us"] == a["self_cpu_us"] < r["cpu_us"], (r, a)
    assert r["parent"] == "", r
print("ok")
PY
	echo "$output"
	assert_success
	assert_output "ok"
}

# Only libfvbpf.so's agent sends GPU records: a job without the library
# has none to wait for, so even the longest --gpu-wait holds nothing (it
# held every segment for the whole wait, and -n for as long).
@test "torch: a job without libfvbpf.so: closed segments wait for no GPU records, even --gpu-wait 600" {
	start_torch "$PY214" 6
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 2 --gpu-wait 600
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=2 incomplete=0"
}

@test "torch: -r torch:GLOB that matches no scope is said at exit, with the names seen" {
	start_torch "$PY214" 6
	start_fvbpf -p "$WL_PID" -o "$OUT" -r 'torch:no_such_scope*' -d 60
	touch "$BATS_TEST_TMPDIR/go"
	wait_long test -e "$BATS_TEST_TMPDIR/done"
	kill -INT "$FV_PID"
	wait_fvbpf 30
	[ "$FV_STATUS" -eq 0 ]
	grep -q "warning: -r torch:no_such_scope\* matched no torch scope (matching is case-sensitive, fnmatch globs); names seen: .*'user_attention'" "$FV_ERR"
}

# One naming rule for -p and --match: a process without a rank in its
# environment traced alone is rank 0 by default (--match named it by PID).
@test "torch: --match on one process without RANK names its files rank 0, as -p does" {
	start_torch "$PY214" 6
	start_fvbpf --match "torch_train\.py run $BATS_TEST_TMPDIR" -o "$OUT" -n 2
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	assert_file_exists "$OUT/trace_rank0_segment0000_step.json"
	assert_file_exists "$OUT/trace_rank0_segment0001_step.json"
	run compgen -G "$OUT/trace_pid*"
	assert_failure
}

@test "torch: --no-torch-ops refuses a process with neither markers nor torch probes" {
	plain_pass_only "errors.bats' refusal of a PID without markers, with one option"
	start_torch "$PY213" 1
	run "$FVBPF" attach -p "$WL_PID" -o "$OUT" --no-torch-ops --step-by 'Optimizer.step*'
	assert_failure
	assert_output --partial "no fvbpf markers mapped"
}

@test "--window: a CUDA job with neither markers nor torch gets consecutive time windows" {
	[ -e /usr/local/cuda/lib64/libcudart.so.13 ] || skip "no libcudart in /usr/local/cuda"
	start_workload "$WL_LOG" python3 "$ROOT/tests/workloads/py_cuda_plain.py"
	start_fvbpf -p "$WL_PID" -o "$OUT" --window 0.3 -n 3
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=3 incomplete=0"
	run python3 -c '
import json, sys
segs = [json.load(open(sys.argv[1] + "/trace_rank0_segment%04d_window.json" % i)) for i in range(3)]
d = [s["otherData"]["duration_us"] for s in segs]
calls = [sum(1 for e in s["traceEvents"] if e.get("name") == "cudaMalloc") for s in segs]
print("durations", all(abs(x - 300000) < 1 for x in d))
print("consecutive", all(abs(segs[i]["otherData"]["end_us"] - segs[i + 1]["otherData"]["start_us"]) < 0.002 for i in range(2)))
print("calls", all(c >= 5 for c in calls), calls)' "$OUT"
	assert_line "durations True"
	assert_line "consecutive True"
	assert_line --partial "calls True"
}

@test "torch: detach leaves libtorch_cpu's code as it was" {
	plain_pass_only "checks the target's code bytes; fvbpf's detach runs in every test of this pass"
	start_torch "$PY213" 3
	local lib off
	lib=$(grep -m1 -o '/[^ ]*libtorch_cpu.so' /proc/$WL_PID/maps)
	# the first bytes of at::_ops::addmm::call in the process, before and after
	off=$(python3 - "$WL_PID" "$lib" <<'PY'
import subprocess, sys
pid, lib = sys.argv[1:]
sym = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True).stdout
addr = next(int(l.split()[0], 16) for l in sym.splitlines() if l.endswith(" _ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_RKN3c106ScalarES8_"))
for l in open("/proc/%s/maps" % pid):
    f = l.split()
    if len(f) >= 6 and f[5] == lib and "x" in f[1]:
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        off = int(f[2], 16)
        print(lo + addr - off)
        break
PY
)
	[ -n "$off" ]
	dd if=/proc/$WL_PID/mem bs=1 skip="$off" count=16 2>/dev/null | od -An -tx1 >"$BATS_TEST_TMPDIR/before"
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by 'Optimizer.step*'
	# attached, the entry holds the breakpoint: the check below can fail
	run bash -c "dd if=/proc/$WL_PID/mem bs=1 skip=$off count=1 2>/dev/null | od -An -tx1"
	[ "${output// /}" = cc ]
	touch "$BATS_TEST_TMPDIR/go"
	wait_for test -e "$BATS_TEST_TMPDIR/done"
	kill -INT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	dd if=/proc/$WL_PID/mem bs=1 skip="$off" count=16 2>/dev/null | od -An -tx1 >"$BATS_TEST_TMPDIR/after" || true
	[ -s "$BATS_TEST_TMPDIR/before" ]
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}
