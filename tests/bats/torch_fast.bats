#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# The operator fast path: libfvbpf.so in a PyTorch process (LD_PRELOAD
# here; --inject and `import fvbpf` load the same library) registers
# PyTorch's RecordFunction callbacks while a segment is open.  Checked
# against torch.profiler's counts and against the uprobe path on the same
# process.

load helpers

TRAIN=$ROOT/tests/workloads/torch_train.py
STRESS=$ROOT/tests/workloads/torch_fast_stress.py
COUNTS=$ROOT/tests/lib/torch_counts.py
LIB=$BUILD/libfvbpf.so

setup() { common_setup; }
teardown() { common_teardown; }

# start_lib PY STEPS [OPTION...]: the training loop with the library in it.
start_lib() {
	need_torch "$1" || return 1
	start_workload "$WL_LOG" env LD_PRELOAD="$LIB" "$1" "$TRAIN" "${@:3}" run "$BATS_TEST_TMPDIR" "$2"
}

manifest_torch() { # KEY...: the manifest's torch values of the first process
	python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["processes"][0]["torch"]
for k in sys.argv[2:]:
    print("%s=%s" % (k, t.get(k)))' "$OUT/manifest.json" "$@"
}

callbacks_match_profiler() { # PY
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$1" "$TRAIN" oracle
	start_lib "$1" 8
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by 'Optimizer.step*' -n 3
	grep -q 'operators through its own callbacks' "$FV_ERR"
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=3 incomplete=0"
	# every name torch.profiler shows, the C++ scope detach included
	run python3 "$COUNTS" --all "$BATS_TEST_TMPDIR/oracle.json" "$OUT"/summary_rank0_segment000*_step.json
	echo "$output"
	assert_success
	run manifest_torch op_source operators_probed callback_ring_drops callback_no_ring \
		callback_bad_records scope_ends_lost
	assert_line "op_source=callbacks"
	assert_line "scope_ends_lost=0"
	assert_line "operators_probed=0"
	assert_line "callback_ring_drops=0"
	assert_line "callback_no_ring=0"
	assert_line "callback_bad_records=0"
	run grep -o '"op_source":"callbacks"' "$OUT/summary_rank0_segment0001_step.json"
	assert_success
	# ops nest in the user scope of forward, on its thread, as with uprobes
	run python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
s = [e for e in ev if e.get("name") == "user_attention" and e.get("cat") == "user_annotation"][0]
inner = {e["name"] for e in ev if e.get("cat") == "cpu_op" and e["tid"] == s["tid"]
         and e["ts"] >= s["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"]}
print({"aten::linear", "aten::softmax", "aten::layer_norm"} <= inner)' "$OUT/trace_rank0_segment0001_step.json"
	assert_output "True"
	fwdbwd_match_profiler "$1"
}

# fwdbwd_match_profiler PY: each step's forward->backward links (Kineto's
# fwdbwd flows) pair the same (forward operator, backward node) pairs as
# torch.profiler's trace of the same step.
fwdbwd_match_profiler() {
	"$1" "$TRAIN" fwdbwd 2>/dev/null | tail -n1 >"$BATS_TEST_TMPDIR/fwdbwd.json"
	run python3 - "$BATS_TEST_TMPDIR/fwdbwd.json" "$OUT"/trace_rank0_segment000[12]_step.json <<-'EOF'
		import collections, json, sys
		want = json.load(open(sys.argv[1]))
		assert sum(want.values()) > 20, want
		for path in sys.argv[2:]:
		    ev = json.load(open(path))["traceEvents"]
		    at = {(e["tid"], e["ts"]): e["name"] for e in ev if e.get("ph") == "X"}
		    ends = {}
		    for e in ev:
		        if e.get("cat") == "fwdbwd":
		            ends.setdefault(e["id"], {})[e["ph"]] = at.get((e["tid"], e["ts"]), "?")
		    got = collections.Counter("%s -> %s" % (v["s"], v["f"]) for v in ends.values())
		    assert got == want, (path, sorted((got - collections.Counter(want)).items()),
		                         sorted((collections.Counter(want) - got).items()))
		    print("fwdbwd pairs", sum(got.values()))
	EOF
	echo "$output"
	assert_success
}

@test "torch 2.14.1, callbacks: --step-by segments hold torch.profiler's counts, every name" {
	callbacks_match_profiler "$PY214"
	# the CUDA wheel maps libcudart: cudaLaunchKernel's PLT slots in
	# torch's own libraries (RELRO) go through libfvbpf.so's hook too,
	# beside the callbacks and their --step-by gates
	run python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["processes"][0]["cuda"]["launch_hook"]
print(h["used"], h["call_sites"] > 0, h["why_not"])' "$OUT/manifest.json"
	assert_output "True True "
}

@test "torch 2.13.0, callbacks: --step-by segments hold torch.profiler's counts, every name" {
	plain_pass_only "the same fvbpf code as on torch 2.14.1, which this pass runs"
	callbacks_match_profiler "$PY213"
}

@test "torch: callbacks and uprobes give the same rows for the same steps of one process" {
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$PY214" "$TRAIN" oracle
	# steps enough for both attaches however slow they are (teardown ends
	# the job; it is not waited for)
	start_lib "$PY214" 5000
	start_fvbpf -p "$WL_PID" -o "$OUT.u" --op-source uprobes --step-by 'Optimizer.step*' -n 2
	grep -q 'torch operators, ' "$FV_ERR"
	touch "$BATS_TEST_TMPDIR/go"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	start_fvbpf -p "$WL_PID" -o "$OUT.c" --step-by 'Optimizer.step*' -n 2
	grep -q 'operators through its own callbacks' "$FV_ERR"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	# the uprobe path misses only the C++ scope detach; otherwise every row
	# (name, kind, count) is the same, and both equal torch.profiler's
	run python3 - "$OUT.u" "$OUT.c" <<'PY'
import glob, json, sys
def rows(d):
    out = []
    for f in sorted(glob.glob(d + "/summary_rank0_segment*_step.json")):
        out.append({(r["name"], r["kind"]): r["count"] for r in json.load(open(f))["rows"]
                    if r["kind"] in ("cpu_op", "user_annotation")})
    return out
u, c = rows(sys.argv[1]), rows(sys.argv[2])
assert len(u) == 2 and len(c) == 2, (len(u), len(c))
m = json.load(open(sys.argv[2] + "/manifest.json"))["processes"][0]["torch"]
print("callbacks lost", m["callback_ring_drops"], m["callback_no_ring"], m["callback_bad_records"],
      "scope ends lost", m["scope_ends_lost"])
assert m["callback_ring_drops"] == m["callback_no_ring"] == m["callback_bad_records"] == 0
assert m["scope_ends_lost"] == 0
for a, b in zip(u, c):
    b = {k: v for k, v in b.items() if k[0] != "detach"}
    diff = sorted((k, a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k))
    print("names", len(a), "events", sum(a.values()), "diff", diff[:12])
    assert not diff
PY
	echo "$output"
	assert_success
	run python3 "$COUNTS" "$BATS_TEST_TMPDIR/oracle.json" "$OUT.u"/summary_rank0_segment000*_step.json
	assert_success
}

@test "torch: --inject into a job without the library: operators through its callbacks, counts hold" {
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$PY214" "$TRAIN" oracle
	start_workload "$WL_LOG" "$PY214" "$TRAIN" run "$BATS_TEST_TMPDIR" 8
	start_fvbpf -p "$WL_PID" -o "$OUT" --inject --step-by 'Optimizer.step*' -n 3
	grep -q 'libfvbpf.so injected' "$FV_ERR"
	grep -q 'operators through its own callbacks' "$FV_ERR"
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$COUNTS" --all "$BATS_TEST_TMPDIR/oracle.json" "$OUT"/summary_rank0_segment000*_step.json
	echo "$output"
	assert_success
}

@test "torch: a torch version whose callback layout fvbpf did not check: uprobes, said once, counts hold" {
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$PY214" "$TRAIN" oracle
	start_lib "$PY214" 8
	FVBPF=$(dirname "$FVBPF")/fvbpf-test FVBPF_TEST_TORCH_VERSION=2.99.0 \
		start_fvbpf -p "$WL_PID" -o "$OUT" --step-by 'Optimizer.step*' -n 3
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	run grep -c "callback layout is not one fvbpf checked" "$FV_ERR"
	assert_output 1
	grep -q 'torch operators, ' "$FV_ERR"
	run python3 "$COUNTS" "$BATS_TEST_TMPDIR/oracle.json" "$OUT"/summary_rank0_segment000*_step.json
	assert_success
	run manifest_torch op_source torch_version
	assert_line "op_source=uprobes"
	assert_line "torch_version=2.99.0"
}

@test "torch: FVBPF_FAST=off in the job: operators from uprobes, said once, counts hold" {
	plain_pass_only "the uprobe path's code is torch.bats'; the refusal's is the next test's"
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$PY214" "$TRAIN" oracle
	start_workload "$WL_LOG" env FVBPF_FAST=off LD_PRELOAD="$LIB" "$PY214" "$TRAIN" run \
		"$BATS_TEST_TMPDIR" 8
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by 'Optimizer.step*' -n 3
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	# once for the operators (and once for the launches, libcudart being
	# mapped in 2.14.1's process: docs/cuda.md)
	run grep -c "operators.*FVBPF_FAST=off" "$FV_OUT" "$FV_ERR"
	assert_output --partial ":1"
	run python3 "$COUNTS" "$BATS_TEST_TMPDIR/oracle.json" "$OUT"/summary_rank0_segment000*_step.json
	assert_success
	run manifest_torch op_source op_source_why
	assert_line "op_source=uprobes"
	assert_line "op_source_why=FVBPF_FAST=off in the job's environment"
}

@test "torch: --op-source callbacks where the library is not in the process: refused in one line" {
	need_torch "$PY213"
	start_workload "$WL_LOG" "$PY213" "$TRAIN" run "$BATS_TEST_TMPDIR" 2
	run "$FVBPF" attach -p "$WL_PID" -o "$OUT" --op-source callbacks --step-by 'Optimizer.step*'
	assert_failure
	assert_output --partial "--op-source callbacks cannot be had"
	[ "${#lines[@]}" -le 3 ]
	run "$FVBPF" attach -p "$WL_PID" -o "$OUT" --op-source sometimes
	assert_failure
	assert_output --partial "invalid --op-source 'sometimes': give auto, callbacks or uprobes"
}

# One of several processes that cannot be armed is left out, said, and
# the others are traced (it ended the whole attach).
@test "torch: -p of two where one cannot be armed: it is left out, the other traced" {
	need_torch "$PY213"
	local other
	start_workload "$WL_LOG.other" "$PY213" "$TRAIN" run "$BATS_TEST_TMPDIR/o" 2
	other=$WL_PID
	mkdir -p "$BATS_TEST_TMPDIR/o"
	start_lib "$PY213" 6
	start_fvbpf -p "$WL_PID,$other" -o "$OUT" --op-source callbacks -n 2
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	grep -q "error: PID $other (python[0-9.]*): --op-source callbacks cannot be had" "$FV_ERR"
	grep -q "warning: PID $other (python[0-9.]*) is left out: it could not be armed (the error above); the other processes are traced" "$FV_ERR"
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=2 incomplete=0"
}

@test "torch: callbacks under DataLoader workers forked every epoch: workers live, counts hold" {
	plain_pass_only "the forks are the target's side; fvbpf's is the 2.14.1 test's and the stress test's"
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$PY214" "$TRAIN" --workers 2 oracle
	start_lib "$PY214" 8 --workers 2
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by 'Optimizer.step*' -n 6
	grep -q 'operators through its own callbacks' "$FV_ERR"
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	assert_file_contains "$WL_LOG" '^workers=4 bad=0$'
	local seg steady=()
	for seg in 1 2 3 5; do
		steady+=("$OUT/summary_rank0_segment000${seg}_step.json")
	done
	run python3 "$COUNTS" --all "$BATS_TEST_TMPDIR/oracle.json" "${steady[@]}"
	echo "$output"
	assert_success
	run python3 -c '
import glob, json, sys
pids = {e["pid"] for f in glob.glob(sys.argv[1] + "/trace_*.json")
        for e in json.load(open(f))["traceEvents"] if e.get("cat") in ("cpu_op", "user_annotation")}
print("pids", pids == {int(sys.argv[2])})' "$OUT" "$WL_PID"
	assert_output "pids True"
}

@test "torch: callbacks under segments every few ms, threads coming and going, forks, detach mid-run" {
	need_torch "$PY214"
	start_workload "$WL_LOG" env LD_PRELOAD="$LIB" "$PY214" "$STRESS" "$BATS_TEST_TMPDIR" 6
	start_fvbpf -p "$WL_PID" -o "$OUT" -r 'torch:fast_seg' -d 3
	grep -q 'operators through its own callbacks' "$FV_ERR"
	touch "$BATS_TEST_TMPDIR/go"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	# the job goes on after the detach and ends well: its children too
	wait_long test -e "$BATS_TEST_TMPDIR/done"
	assert_file_contains "$WL_LOG" 'bad=0$'
	# every complete segment: exactly its 3 adds, 2 muls on another thread
	# every 2nd, nothing from outside (sub) or from a forked child (adds)
	run python3 - "$OUT" "$WL_PID" <<'PY'
import glob, json, sys
out, pid = sys.argv[1], int(sys.argv[2])
segs = sorted(glob.glob(out + "/trace_rank0_segment*_fast_seg.json"))
n = with_thread = bad = incomplete = 0
for f in segs:
    t = json.load(open(f))
    if t["otherData"].get("incomplete"):
        incomplete += 1
        continue
    ops = [e for e in t["traceEvents"] if e.get("cat") == "cpu_op"]
    adds = [e for e in ops if e["name"] == "aten::add"]
    muls = [e for e in ops if e["name"] == "aten::mul"]
    subs = [e for e in ops if e["name"] == "aten::sub"]
    ok = len(adds) == 3 and not subs and all(e["pid"] == pid for e in ops)
    ok = ok and len(muls) in (0, 2) and all(m["tid"] != adds[0]["tid"] for m in muls)
    with_thread += len(muls) == 2
    bad += not ok
    n += 1
m = json.load(open(out + "/manifest.json"))["processes"][0]["torch"]
print("segments", n, "with a thread", with_thread, "bad", bad, "incomplete", incomplete)
print("lost", m["callback_ring_drops"], m["callback_no_ring"], m["callback_bad_records"])
print("records", m["callback_records"], "calls outside segments", m["callback_calls_outside_segments"])
assert n >= 100 and with_thread >= 40 and bad == 0 and incomplete <= 1
assert m["callback_ring_drops"] == m["callback_no_ring"] == m["callback_bad_records"] == 0
# unregistered at each segment's end: outside, at most the ops in flight
# when the last one ended (the detach)
assert m["callback_calls_outside_segments"] * 20 < m["callback_records"]
PY
	echo "$output"
	assert_success
	# more threads came and went than the library has rings (64)
	run sed -n 's/.*threads=\([0-9]*\).*/\1/p' "$WL_LOG"
	[ "$output" -gt 64 ]
}

# start_running [PRELOAD]: the stress loop, already running (no wait for
# go), for 120 s or until the test ends; PRELOAD 1: the library in it.
start_running() {
	need_torch "$PY214"
	touch "$BATS_TEST_TMPDIR/go"
	start_workload "$WL_LOG" ${1:+env LD_PRELOAD=$LIB} "$PY214" "$STRESS" "$BATS_TEST_TMPDIR" 120
}

# fast_seg_adds DIR: the fast_seg segments, the complete ones, and those of
# them that do not hold exactly the loop's 3 aten::add.
fast_seg_adds() {
	python3 - "$1" <<'PY'
import glob, json, sys
n = complete = bad = 0
for f in glob.glob(sys.argv[1] + "/trace_rank0_segment*_fast_seg.json"):
    t = json.load(open(f))
    n += 1
    if t["otherData"]["incomplete"]:
        continue
    complete += 1
    bad += sum(1 for e in t["traceEvents"] if e.get("name") == "aten::add" and e.get("ph") == "X") != 3
print("segments=%d complete=%d without_3_adds=%d" % (n, complete, bad))
PY
}

@test "torch: callbacks on a loop already running: the first segments hold their operators (-n 3; -n 30 with the library left)" {
	# The scopes' probes go in before the library follows the attach's
	# segments; a loop that opens one every few ms had its first 0.1-0.7 s
	# of segments empty, complete, counted by -n.
	start_running 1
	run timeout 120 "$FVBPF" attach -p "$WL_PID" -o "$OUT" -r 'torch:fast_seg' -n 3
	assert_success
	assert_output --partial 'operators through its own callbacks'
	run fast_seg_adds "$OUT"
	assert_output "segments=3 complete=3 without_3_adds=0"
	# again on the library that attach left: its first 30 segments (-n:
	# a bound by time, -d 2, found none at all once, the answer and the
	# arming slowed by three test files beside it)
	run timeout 120 "$FVBPF" attach -p "$WL_PID" -o "$OUT.2" -r 'torch:fast_seg' -n 30
	assert_success
	run fast_seg_adds "$OUT.2"
	echo "$output"
	assert_output --regexp "^segments=[0-9]+ complete=([2-9][0-9]|[1-9][0-9]{2,}) without_3_adds=0$"
}

@test "torch: --inject --window on a running loop: every window holds operators through the callbacks, the first too" {
	# With libfvbpf.so in the process (markers) no window was cut at all.
	start_running
	run timeout 120 "$FVBPF" attach --inject -p "$WL_PID" -o "$OUT" --window 0.25 -d 1.5
	assert_success
	assert_output --partial 'libfvbpf.so injected'
	assert_output --partial 'operators through its own callbacks'
	run python3 - "$OUT" <<'PY'
import glob, json, sys
segs = sorted((json.load(open(f)) for f in glob.glob(sys.argv[1] + "/trace_rank0_segment*_window.json")),
              key=lambda t: t["otherData"]["segment"])
adds = [sum(1 for e in t["traceEvents"] if e.get("name") == "aten::add" and e.get("ph") == "X")
        for t in segs if not t["otherData"]["incomplete"]]
m = json.load(open(sys.argv[1] + "/manifest.json"))["processes"][0]
print("windows", len(adds) >= 5 and m["segments"] == len(segs))
print("adds", all(n >= 3 for n in adds), adds)
print("lost", m["torch"]["callback_ring_drops"] + m["torch"]["callback_no_ring"])
PY
	echo "$output"
	assert_line "windows True"
	assert_line --partial "adds True"
	assert_line "lost 0"
}

@test "torch: RecordFunctionCallback and RecordFunction's sequence number fields as fvbpf's library lays them out, checked against the headers and code of 2.13.0 and 2.14.1" {
	command -v g++ >/dev/null || skip "no g++"
	plain_pass_only "no fvbpf code runs here"
	local py t
	for py in "$PY214" "$PY213"; do
		need_torch "$py"
		t=$("$py" -c 'import importlib.util as u, os; print(os.path.dirname(u.find_spec("torch").origin))')
		g++ -std=c++20 -O0 -I"$t/include" -I"$ROOT/include" -o "$BATS_TEST_TMPDIR/abi" \
			"$ROOT/tests/lib/torch_abi_check.cpp" -L"$t/lib" -lc10 -ltorch_cpu -Wl,-rpath,"$t/lib"
		run "$BATS_TEST_TMPDIR/abi"
		echo "$output"
		assert_success
		assert_output --partial "layout 1 ok"
		assert_output --partial ", 0 wrong"
	done
	# the check can fail: one offset 8 bytes off
	run "$BATS_TEST_TMPDIR/abi" --wrong-offset
	echo "$output"
	assert_failure
	assert_output --partial "differs: offset of RecordFunction::sequence_nr_"
	assert_output --partial "differs: libtorch's sequence numbers"
}
