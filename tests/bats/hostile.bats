#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# A target that sends hostile bytes and numbers (tests/workloads/c/hostile_target.c):
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
	assert_line "over_limits [0, 0, 0, 0, 0, 0, 0]"
}

# "NAME HEX" for each "nonexec NAME ADDR" line of the workload but those
# named in $1 (a regex): the 4 bytes at ADDR in its memory, as the process
# itself sees them.
nonexec_bytes() {
	python3 - "$WL_PID" "$WL_LOG" "${1:-^$}" <<'PY'
import re, sys
pid, log, skip = sys.argv[1:4]
with open("/proc/%s/mem" % pid, "rb", buffering=0) as mem:
    for line in open(log):
        w = line.split()
        if len(w) == 3 and w[0] == "nonexec" and not re.search(skip, w[1]):
            mem.seek(int(w[2], 16))
            print(w[1], mem.read(4).hex())
PY
}

# start_nonexec [DIR]: hostile_elf --nonexec with the fake torch whose
# aten::mul is in .rodata; with DIR, the libfvbpf.so found first is DIR's.
start_nonexec() {
	local dir=${1:-$BATS_TEST_TMPDIR}
	LD_LIBRARY_PATH=${1:-} start_workload "$WL_LOG" "$BUILD/tests/hostile_elf" --nonexec \
		--dir "$dir" --torch "$BUILD/tests/faketorch-nonexec/libtorch_cpu.so"
	wait_for grep -q '^ready' "$WL_LOG"
	grep -q '^cuda 4889e5c3$' <<<"$(nonexec_bytes)"
	grep -q '^torch 4889e5c3$' <<<"$(nonexec_bytes)"
}

# Issue 17: a symbol typed a function whose address lies in a segment
# without PF_X got an int3 written into the process's read-only data: a
# CUDA function (cudaLaunchKernel in a read-only segment of a file the
# workload crafted) and a torch operator (at::_ops::mul::call in the
# .rodata of a fake libtorch_cpu.so), in a process with real markers.
@test "a CUDA function or torch op outside executable code is never probed" {
	[ "$(uname -m)" = x86_64 ] || skip "the crafted code is x86-64"
	local before
	start_nonexec
	grep -q "^markers=$BUILD/tests/../libfvbpf.so$" "$WL_LOG"
	before=$(nonexec_bytes marker)
	start_fvbpf -v -p "$WL_PID" -o "$OUT" -d 60 -r "$REGIONS"
	grep -q "attached to PID $WL_PID (.*): markers in " "$FV_ERR"
	# While attached, the bytes are the file's: no int3 in read-only data.
	run nonexec_bytes marker
	assert_output "$before"
	kill -INT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	# What is code is still probed: the crafted file's __cudaGetKernel,
	# fake torch's aten::linear and aten::addmm.
	grep -q "pid $WL_PID: 1 CUDA/NCCL functions probed in $BATS_TEST_TMPDIR/fvbpf-hostile-" "$FV_ERR"
	grep -q "pid $WL_PID: 2 torch operators" "$FV_ERR"
	# Each symbol left out is named with its file (-v).
	grep -q "cudaLaunchKernel in $BATS_TEST_TMPDIR/fvbpf-hostile-[^ ]*: not in executable code, not probed" "$FV_ERR"
	grep -q "_ZN2at4_ops3mul4callERKNS_6TensorES4_ in $BUILD/tests/faketorch-nonexec/libtorch_cpu.so: not in executable code, not probed" "$FV_ERR"
	kill -0 "$WL_PID"
}

# The markers: a copy of libfvbpf.so whose fvbpf_probe_region_begin is
# moved into .rodata (first on LD_LIBRARY_PATH) is no marker library; the
# process is traced through its torch, nothing of it is probed.
@test "a marker library whose probe function is not code is no marker library" {
	[ "$(uname -m)" = x86_64 ] || skip "the crafted code is x86-64"
	local dir=$BATS_TEST_TMPDIR/lib before
	mkdir -p "$dir"
	python3 "$ROOT/tests/lib/elf_move_symbol.py" "$BUILD/libfvbpf.so" "$dir/libfvbpf.so" \
		fvbpf_probe_region_begin
	start_nonexec "$dir"
	grep -q "^markers=$dir/libfvbpf.so$" "$WL_LOG"
	before=$(nonexec_bytes)
	grep -q '^marker ' <<<"$before"
	start_fvbpf -v -p "$WL_PID" -o "$OUT" -d 60 -r "$REGIONS"
	run nonexec_bytes
	assert_output "$before"
	kill -INT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	grep -q "fvbpf_probe_region_begin in $dir/libfvbpf.so: not in executable code, not probed" "$FV_ERR"
	grep -q "attached to PID $WL_PID (.*): torch in " "$FV_ERR"
	kill -0 "$WL_PID"
}

# Scope names and Python frames are the job's text too: an escape sequence,
# a newline that forges an "fvbpf:" line, a C1 control, bidi overrides and
# isolates, a line separator and a tag character in a record_function
# scope's name, a code object's file name and its qualified name
# (tests/workloads/torch_hostile_names.py).  --with-stack's lines table,
# folded stacks and flame graph, the summaries, the memory picture and
# `fvbpf report` all show them escaped the one way (util/text_sanitize.c).
@test "hostile scope names and Python frames: --with-stack's files and fvbpf report escape them" {
	need_torch "$PY214"
	start_workload "$WL_LOG" "$PY214" "$ROOT/tests/workloads/torch_hostile_names.py" run \
		"$BATS_TEST_TMPDIR" 4
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:step -n 2 --with-stack --profile-memory
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	"$FVBPF" report "$OUT" >"$BATS_TEST_TMPDIR/report.txt" 2>&1
	# the hostile text reached each output, escaped
	local esc='\x1b[31mred\x0afvbpf: forged\x0d\u202etxt.exe\u202c\u2066iso\u2069\u2028sep\x85\U000e0041'
	grep -qF "[scope '$esc', outside its torch calls]" "$OUT/pylines_rank0_segment0001_step.txt"
	grep -qF "$esc" "$OUT/stacks_rank0_segment0001_step.folded"
	grep -qF "$esc" "$OUT/summary_rank0_segment0001_step.txt"
	grep -qF "$esc" "$BATS_TEST_TMPDIR/report.txt"
	grep -qF 'Q\u2067?]0:t?.f (/tmp/?[2J\u202eevil?fvbpf: forged.py:2)' \
		"$OUT/pylines_rank0_segment0001_step.txt"
	run python3 "$STRICT" "$OUT" "$FV_OUT" "$FV_ERR" "$BATS_TEST_TMPDIR/report.txt"
	echo "$output"
	assert_success
	assert_line "ok pylines_rank0_segment0001_step.txt"
	assert_line "ok flame_rank0_segment0001_step.svg"
	assert_line "ok report.txt"
}
