#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# CUDA runtime calls inside segments, against the real libcudart of the
# toolkit: without a GPU every call returns 35, yet each one is entered.

load helpers
# shellcheck source=tests/lib/bpftrace_int.sh
. "$ROOT/tests/lib/bpftrace_int.sh"

CUDA=${CUDA:-/usr/local/cuda}
REGIONS=training_train_one_step,training_forward

setup() {
	common_setup
	[ -e "$CUDA/lib64/libcudart.so.13" ] || skip "no CUDA toolkit at $CUDA"
	BT_OUT=$BATS_TEST_TMPDIR/bpftrace.out
	BT_PID=
}
teardown() {
	local rc=0
	[ -n "${BT_PID:-}" ] && kill -INT "$BT_PID" 2>/dev/null
	common_teardown || rc=$?
	[ -n "${MNT:-}" ] && umount "$MNT" 2>/dev/null
	return $rc
}

# The workload's count of NAME on its LINE ("counts", "outside", ...).
wl_line_count() { # line name
	sed -n 's/^'"$1"' .*\b'"$2"'=\([0-9]*\).*/\1/p' "$WL_LOG"
}

# A run of WORKLOAD ARGS... with fvbpf attached for STEPS segments.
run_attached() { # steps workload args...
	local steps=$1
	shift
	start_workload "$WL_LOG" "$@" --steps "$steps" --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n "$steps" -r "$REGIONS"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	wait_for grep -q '^counts' "$WL_LOG"
	run python3 "$CHECK" "$OUT"
	assert_success
	CHECK_OUT=$output
}

@test "C trainer: every call inside segments, with its arguments; none from outside" {
	run_attached 3 "$BUILD/tests/cuda_trainer"
	local api n
	for api in cudaMalloc cudaFree cudaMemcpy cudaMemcpyAsync cudaMemcpy2D cudaMemset \
		cudaMemsetAsync cudaLaunchKernel cudaDeviceSynchronize cudaStreamSynchronize \
		cudaEventRecord cudaStreamWaitEvent cudaMallocHost cudaFreeHost; do
		n=$(chk_count "api $api" "$CHECK_OUT")
		echo "$api: fvbpf ${n:-none}, workload $(wl_line_count counts $api)"
		[ "${n:-0}" = "$(wl_line_count counts $api)" ]
		[ "$(wl_line_count outside $api)" -gt 0 ] # the workload did call it outside too
	done
	output=$CHECK_OUT
	assert_line 'arg cudaMalloc.bytes=1048576'
	assert_line 'arg cudaMemcpy.bytes=4096'
	assert_line 'arg cudaMemcpy.kind="HostToDevice"'
	assert_line 'arg cudaMemcpyAsync.bytes=8192'
	assert_line 'arg cudaMemcpyAsync.kind="DeviceToHost"'
	assert_line 'arg cudaMemcpyAsync.stream="0x1234"'
	assert_line 'arg cudaMemset.bytes=2048'
	assert_line 'arg cudaMemcpy2D.bytes=1024'
	assert_line 'arg cudaLaunchKernel.grid=[4,2,1]'
	assert_line 'arg cudaLaunchKernel.block=[128,1,1]'
	assert_line 'arg cudaLaunchKernel.shared_memory=256'
	assert_line 'arg cudaLaunchKernel.kernel="scale_stub"'
	assert_line 'arg cudaMalloc.return="cudaErrorInsufficientDriver"'
	# the summary has one row per API and per kernel
	run grep -cE '^(cudaMalloc|scale_stub) ' "$OUT/summary_rank0_segment0000_training_train_one_step.txt"
	assert_output "2"
}

# Issue 35: a region row's self CPU time is its time less what it holds
# directly on its thread (regions, torch calls, outermost CUDA calls), as
# torch counts a user_annotation row's; computed again here from the trace's
# events by a sweep of their own.
@test "C trainer: region rows' self CPU time less the regions and CUDA calls they hold, as the trace's events say" {
	run_attached 3 "$BUILD/tests/cuda_trainer"
	run python3 - "$OUT" <<'PY'
import glob, json, os, sys
from decimal import Decimal
out = sys.argv[1]
ns = lambda v: int(Decimal(str(v)) * 1000)
checked = 0
for sj in sorted(glob.glob(os.path.join(out, "summary_*.json"))):
    summ = json.load(open(sj), parse_float=Decimal)
    trace = json.load(open(sj.replace("summary_", "trace_", 1)), parse_float=Decimal)
    ev = []
    for e in trace["traceEvents"]:
        if e.get("ph") != "X" or e.get("pid") == 0 or "dur" not in e:
            continue
        cat, name = e.get("cat"), e.get("name", "")
        if cat == "user_annotation" and name.startswith("fvbpf.region::"):
            kind = 1
        elif cat == "cpu_op":
            kind = 0
        elif cat in ("cuda_runtime", "cuda_driver"):
            kind = 2
        else:
            continue
        s = ns(e["ts"])
        ev.append((e["tid"], s, -(s + ns(e["dur"])), kind, name))
    ev.sort()
    rows, stack = {}, []
    for tid, s, negend, kind, name in ev:
        end = -negend
        while stack and (stack[-1][0] != tid or (stack[-1][2] <= s and stack[-1][2] < end)):
            stack.pop()
        holder = next((x for x in reversed(stack) if x[2] >= end), None)
        if holder and holder[3] == 1:
            holder[4]["kids"] += end - s
        if kind == 2 and holder and holder[3] == 2:
            continue  # a driver call inside a runtime call: not its own child
        me = {"kids": 0}
        if kind == 1:
            parent = next((x for x in reversed(stack) if x[3] == 1 and x[2] >= end), None)
            key = (name.split("::", 1)[1], parent[5] if parent else "")
            me.update(key=key, dur=end - s)
            rows.setdefault(key, []).append(me)
        stack.append((tid, s, end, kind, me, name.split("::", 1)[1] if kind == 1 else None))
    # per region name first (self times), then per region and its parent
    by_name = {}
    for (name, _), slices in rows.items():
        by_name.setdefault(name, []).extend(slices)
    for name, slices in by_name.items():
        mine = [r for r in summ["rows"] if r["kind"] == "region" and r["name"] == name]
        self_ = sum(max(x["dur"] - x["kids"], 0) for x in slices)
        assert sum(ns(r["self_cpu_us"]) for r in mine) == self_, (sj, name, mine, self_)
    got = {(r["name"], r.get("parent")): r for r in summ["rows"] if r["kind"] == "region"}
    assert set(got) == set(rows), (sj, set(got), set(rows))
    for key, slices in rows.items():
        total = sum(x["dur"] for x in slices)
        self_ = sum(max(x["dur"] - x["kids"], 0) for x in slices)
        assert ns(got[key]["cpu_us"]) == total and ns(got[key]["self_cpu_us"]) == self_, (sj, key, got[key], total, self_)
        checked += 1
    fwd = got[("training_forward", "training_train_one_step")]
    assert fwd["self_cpu_us"] < fwd["cpu_us"], fwd  # it holds CUDA calls and nothing else
print("ok", checked)
PY
	echo "$output"
	assert_success
	assert_output "ok 6"
}

# The C trainer's 3 steps under bpftrace -e PROG and fvbpf (its extra
# ARGS...), both attached before the steps; then the trace checked
# ($output: the checker's lines).
trainer_beside_bpftrace() { # prog fvbpf-args...
	local prog=$1
	shift
	start_workload "$WL_LOG" "$BUILD/tests/cuda_trainer" --steps 3 --wait-signal --idle
	# BEGIN's line reaches the file once bpftrace polls its buffer, which it
	# does once every probe is attached ("Attaching" comes before: a fixed
	# second after it missed launches beside other test files)
	bpftrace -p "$WL_PID" -e "BEGIN { printf(\"bpftrace ready\\n\"); } $prog" >"$BT_OUT" 2>&1 &
	BT_PID=$!
	wait_for grep -q '^bpftrace ready$' "$BT_OUT"
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 3 -r "$REGIONS" "$@"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	wait_for grep -q '^counts' "$WL_LOG"
	bpftrace_int "$BT_PID" 60 ||
		{ kill -KILL "$BT_PID"; echo "bpftrace still ran 60 s after SIGINT" >&2; return 1; }
	wait "$BT_PID" || true
	BT_PID=
	cat "$BT_OUT"
	run python3 "$CHECK" "$OUT"
	assert_success
}

@test "C trainer: fvbpf's counts agree with bpftrace on the same run" {
	plain_pass_only "the first test's fvbpf code, compared with bpftrace"
	command -v bpftrace >/dev/null || skip "bpftrace missing"
	local lib=$CUDA/lib64/libcudart.so.13
	trainer_beside_bpftrace "
		uprobe:$lib:cudaMalloc, uprobe:$lib:cudaMemcpy, uprobe:$lib:cudaLaunchKernel,
		uprobe:$lib:cudaMemsetAsync { @enter[probe] = count(); }
		uretprobe:$lib:cudaMalloc, uretprobe:$lib:cudaMemcpy, uretprobe:$lib:cudaLaunchKernel,
		uretprobe:$lib:cudaMemsetAsync { @ret[probe] = count(); }"
	# The launches fvbpf recorded through libfvbpf.so's hook entered
	# cudaLaunchKernel past its uprobes, bpftrace's too: bpftrace saw
	# every other call, both ways; fvbpf every call inside segments.
	local api total inside hooked skipped
	hooked=$(python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["processes"][0]["cuda"]["launch_hook"]
assert h["records"] % 2 == 0, h
print(h["records"] // 2)' "$OUT/manifest.json")
	echo "launches through the hook: $hooked"
	for api in cudaMalloc cudaMemcpy cudaLaunchKernel cudaMemsetAsync; do
		total=$(sed -n 's/^@enter\[uprobe:.*:'"$api"'\]: \([0-9]*\)$/\1/p' "$BT_OUT")
		[ "$total" = "$(sed -n 's/^@ret\[uretprobe:.*:'"$api"'\]: \([0-9]*\)$/\1/p' "$BT_OUT")" ]
		inside=$(chk_count "api $api" "$output")
		echo "$api: bpftrace $total, fvbpf $inside, workload inside $(wl_line_count counts $api)" \
			"validation $(wl_line_count validation $api) outside $(wl_line_count outside $api)"
		[ "$inside" = "$(wl_line_count counts $api)" ]
		skipped=0
		[ "$api" != cudaLaunchKernel ] || skipped=$hooked
		[ "$((total + skipped))" -eq $((inside + $(wl_line_count validation $api) + $(wl_line_count outside $api))) ]
	done
}

@test "C trainer: --launch-source uprobes leaves every launch to the uprobes, bpftrace's too" {
	plain_pass_only "the first test's fvbpf code, compared with bpftrace"
	command -v bpftrace >/dev/null || skip "bpftrace missing"
	trainer_beside_bpftrace "uprobe:$CUDA/lib64/libcudart.so.13:cudaLaunchKernel { @enter = count(); }" \
		--launch-source uprobes
	[ "$(chk_count 'api cudaLaunchKernel' "$output")" = "$(wl_line_count counts cudaLaunchKernel)" ]
	run python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["processes"][0]["cuda"]["launch_hook"]
print(h["used"], h["records"], h["why_not"])' "$OUT/manifest.json"
	assert_output "False 0 --launch-source uprobes"
	local total
	total=$(sed -n 's/^@enter: \([0-9]*\)$/\1/p' "$BT_OUT")
	[ "$total" -eq $(($(wl_line_count counts cudaLaunchKernel) + $(wl_line_count validation cudaLaunchKernel) + $(wl_line_count outside cudaLaunchKernel))) ]
}

# The hook goes live on fvbpf's first tick after the library's first marker
# of the attach; the 300 ms gaps between rounds give it that many ticks.
@test "--launch-source: a value other than auto or uprobes is refused in one line" {
	run "$FVBPF" attach -p $$ -o "$OUT" -r training_train_one_step --launch-source hook
	assert_failure
	assert_output --partial "invalid --launch-source 'hook': give auto or uprobes"
	[ "${#lines[@]}" -le 2 ]
}

@test "launches through libfvbpf.so's hook: exact counts, the uprobe's arguments, no trap" {
	start_workload "$WL_LOG" "$BUILD/tests/cuda_bench_launch" --calls 3000 --rounds 4 \
		--gap-ms 300 --inside --wait-signal
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 4 -r training_train_one_step
	kill -USR1 "$WL_PID"
	wait_fvbpf 30
	[ "$FV_STATUS" -eq 0 ]
	wait_for grep -q '^ns_per_call' "$WL_LOG"
	grep "through libfvbpf.so's hook (1 call site), no trap per launch" "$FV_ERR"
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "api cudaLaunchKernel=12000"
	assert_line 'arg cudaLaunchKernel.grid=[1,1,1]'
	assert_line 'arg cudaLaunchKernel.block=[1,1,1]'
	assert_line 'arg cudaLaunchKernel.shared_memory=0'
	assert_line 'arg cudaLaunchKernel.kernel="bench_stub"'
	assert_line 'arg cudaLaunchKernel.return="cudaErrorInsufficientDriver"'
	# every segment whole, and at least its last round through the hook
	run python3 -c 'import glob, json, sys
d = sys.argv[1]
h = json.load(open(d + "/manifest.json"))["processes"][0]["cuda"]
segs = sorted(glob.glob(d + "/summary_*_segment*.json"))
counts = [sum(r["count"] for r in json.load(open(f))["rows"] if r["name"] == "cudaLaunchKernel")
          for f in segs]
hook = h["launch_hook"]
print(counts, h["calls_in_segments"], h["entries_without_return"], h["returns_without_entry"])
print(hook["used"], hook["call_sites"], hook["records"] % 2, hook["records"] >= 2 * 3000,
      hook["records"] <= 2 * 12000)' "$OUT"
	assert_line "[3000, 3000, 3000, 3000] 12000 0 0"
	assert_line "True 1 0 True True"
}

@test "the hook lets go: the PLT slot gets its old value once fvbpf is gone" {
	start_workload "$WL_LOG" "$BUILD/tests/cuda_bench_launch" --calls 1000 --rounds 30 \
		--gap-ms 100 --inside --wait-signal
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step
	kill -USR1 "$WL_PID"
	wait_for grep -q "through libfvbpf.so's hook" "$FV_ERR"
	# the executable's PLT slot holds the library's wrapper now
	run python3 "$ROOT/tests/lib/plt_slot.py" "$WL_PID" "$BUILD/tests/cuda_bench_launch" cudaLaunchKernel
	assert_success
	assert_output --partial "libfvbpf.so"
	kill -INT "$FV_PID"
	wait_fvbpf 30
	[ "$FV_STATUS" -eq 0 ]
	# gone once a call finds fvbpf gone (the next round's)
	wait_for sh -c "python3 '$ROOT/tests/lib/plt_slot.py' $WL_PID '$BUILD/tests/cuda_bench_launch' cudaLaunchKernel | grep -q libcudart"
	wait_for grep -q '^ns_per_call' "$WL_LOG"
}

@test "the hook in a forked child: its PLT slot back in libcudart, its call made, the parent's still hooked" {
	start_workload "$WL_LOG" "$BUILD/tests/cuda_bench_launch" --calls 1000 --rounds 3 \
		--gap-ms 100 --inside --wait-signal --fork
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step
	kill -USR1 "$WL_PID"
	wait_for grep -q '^child=' "$WL_LOG"
	local child
	child=$(sed -n 's/^child=\([0-9]*\) .*/\1/p' "$WL_LOG")
	grep "^child=$child attached=0 ret=35$" "$WL_LOG"
	grep -q "through libfvbpf.so's hook" "$FV_ERR"
	run python3 "$ROOT/tests/lib/plt_slot.py" "$child" "$BUILD/tests/cuda_bench_launch" cudaLaunchKernel
	assert_success
	assert_output --partial "libcudart"
	run python3 "$ROOT/tests/lib/plt_slot.py" "$WL_PID" "$BUILD/tests/cuda_bench_launch" cudaLaunchKernel
	assert_success
	assert_output --partial "libfvbpf.so"
	kill "$child"
	wait_for grep -q '^ns_per_call' "$WL_LOG"
	wait_fvbpf 30
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "api cudaLaunchKernel=3000"
}

@test "nvcc, shared cudart: <<<>>> launches named by their demangled kernels" {
	[ -x "$BUILD/tests/kernels_shared" ] || skip "nvcc missing"
	run_attached 3 "$BUILD/tests/kernels_shared"
	output=$CHECK_OUT
	assert_line "kernel scale(float*, float, int)=$(wl_count scale)"
	assert_line "kernel void fv::tmpl<7>(int*)=$(wl_count tmpl)"
	assert_line "api cudaLaunchKernel=$(wl_count cudaLaunchKernel)"
	assert_line 'arg cudaLaunchKernel.grid=[2,1,1]|[3,1,1]|[8,1,1]'
}

@test "nvcc, static cudart: local symbols in the executable are probed" {
	[ -x "$BUILD/tests/kernels_static" ] || skip "nvcc missing"
	# no libcudart.so anywhere in this process
	run_attached 2 "$BUILD/tests/kernels_static"
	! grep -q libcudart "/proc/$WL_PID/maps" || false # a bare '!' never fails a test
	grep -q "CUDA/NCCL functions probed in $BUILD/tests/kernels_static" "$FV_ERR"
	output=$CHECK_OUT
	assert_line "kernel scale(float*, float, int)=$(wl_count scale)"
	assert_line "kernel void fv::tmpl<7>(int*)=$(wl_count tmpl)"
	assert_line "api cudaLaunchKernel=$(wl_count cudaLaunchKernel)"
	assert_line "api cudaDeviceSynchronize=$(wl_count cudaDeviceSynchronize)"
}

@test "python ctypes on libcudart" {
	plain_pass_only "the C trainer's fvbpf code; the target differs"
	run_attached 3 python3 "$ROOT/tests/workloads/py_cuda.py"
	local api
	for api in cudaMalloc cudaMemcpy cudaMemset cudaDeviceSynchronize cudaFree; do
		[ "$(chk_count "api $api" "$CHECK_OUT")" = "$(wl_line_count counts $api)" ]
	done
	output=$CHECK_OUT
	assert_line 'arg cudaMalloc.bytes=1048576'
}

@test "a libcudart loaded after attach is picked up" {
	start_workload "$WL_LOG" "$BUILD/tests/late_cuda" --steps 3 --wait-signal --after-load-ms 1500 --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 3 -r "$REGIONS"
	grep -q "PID $WL_PID (late_cuda) has no CUDA library mapped" "$FV_ERR"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	grep -q "CUDA/NCCL functions probed in .*libcudart.so.13" "$FV_ERR"
	run python3 "$CHECK" "$OUT"
	assert_success
	local api
	for api in cudaMalloc cudaMemcpy cudaMemset cudaDeviceSynchronize cudaFree; do
		[ "$(chk_count "api $api" "$output")" = "$(wl_line_count counts $api)" ]
	done
}

@test "a library reached through another mount namespace is found" {
	MNT=$BATS_TEST_TMPDIR/nslib
	mkdir -p "$MNT"
	# the workload sees libcudart at $MNT/, which is empty for everyone else
	start_workload "$WL_LOG" unshare -m --propagation private bash -c \
		"mount --bind '$CUDA/lib64' '$MNT' && exec '$BUILD/tests/late_cuda' --cudart '$MNT/libcudart.so.13' --steps 2 --wait-signal --after-load-ms 1500 --idle"
	wait_for grep -q '^mapped=0' "$WL_LOG"
	[ ! -e "$MNT/libcudart.so.13" ]
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 2 -r "$REGIONS"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	grep -q "CUDA/NCCL functions probed in $MNT/libcudart.so.13" "$FV_ERR"
	run python3 "$CHECK" "$OUT"
	assert_success
	[ "$(chk_count 'api cudaMalloc' "$output")" = "$(wl_line_count counts cudaMalloc)" ]
	MNT=
}

@test "a process without CUDA: warned once, regions still traced" {
	start_workload "$WL_LOG" "$TRAINER" --steps 2 --step-ms 6 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 2 -r "$REGIONS"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run grep -c "has no CUDA library mapped: regions are traced" "$FV_ERR"
	assert_output "1"
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=2 incomplete=0"
	refute_line --partial "api "
}
