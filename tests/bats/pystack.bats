#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# --with-stack: each torch operator's Python stack, read by BPF from the
# interpreter's frames.  Real PyTorch against torch.profiler(with_stack=True)
# on the same step (tests/workloads/torch_stack.py, tests/lib/pystack_check.py),
# two threads with their own stacks, and a stand-in interpreter holding
# hostile frames (tests/workloads/c/py_hostile.c).

load helpers

STACKW=$ROOT/tests/workloads/torch_stack.py
PYCHECK=$ROOT/tests/lib/pystack_check.py
GROUPCHECK=$ROOT/tests/lib/pystack_groups_check.py
HOSTILE=$BUILD/tests/py_hostile
FAKETORCH=$BUILD/tests/faketorch/libtorch_cpu.so
FAKEPY=$BUILD/tests/fakepy/libpython3.11.so.1.0

setup() { common_setup; }
teardown() {
	[ -n "${BATS_TEST_TMPDIR:-}" ] && touch "$BATS_TEST_TMPDIR/exit"
	common_teardown
}

# start_stack PY STEPS: the two-thread loop, waiting for $BATS_TEST_TMPDIR/go
# (TIDS: its threads, from its "tids=" line).
start_stack() {
	need_torch "$1" || return 1
	# WL_PRELOAD=1: libfvbpf.so in the job, operators through its callbacks
	WL_READY='^tids=' start_workload "$WL_LOG" ${WL_PRELOAD:+env LD_PRELOAD=$BUILD/libfvbpf.so} \
		"$1" "$STACKW" threads run "$BATS_TEST_TMPDIR" "$2"
	TIDS=$(sed -n 's/^tids=//p' "$WL_LOG" | head -n1)
	[ -n "$TIDS" ]
}

stacks_match_profiler() { # PY [fvbpf option...]
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$1" "$STACKW" threads oracle
	start_stack "$1" 6
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:stack_step -n 3 "${@:2}"
	grep -q -- '--with-stack: CPython 3.11' "$FV_ERR"
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$PYCHECK" "$BATS_TEST_TMPDIR/oracle.json" "$STACKW" "$OUT" "$TIDS"
	echo "$output"
	assert_success
	assert_line "segments=3 ops=30 fails=0"
	run python3 "$CHECK" "$OUT"
	assert_success
	# every stack record reached its operator
	grep -q -- '--with-stack: [1-9][0-9]* stack records, [1-9]' "$FV_ERR"
	run grep -o -- '--with-stack: [0-9]* stack records, [0-9]* given' "$FV_ERR"
	[ "$(echo "$output" | awk '{print $2}')" = "$(echo "$output" | awk '{print $5}')" ]
}

@test "--with-stack: each operator's frames are torch.profiler's, its line the source's (torch 2.14)" {
	stacks_match_profiler "$PY214" --with-stack --group-by-stack 2
	# pylines: time by the innermost two frames, the lines the source says
	local lines=$OUT/pylines_rank0_segment0001_stack_step.txt op call
	op=$(grep -n '# @op:plain$' "$STACKW" | cut -d: -f1)
	call=$(grep -n '^        plain(x)$' "$STACKW" | cut -d: -f1)
	grep -q "grouped by the innermost 2 frame(s)" "$lines"
	grep -Eq "^ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +5 +0  plain \(.*torch_stack.py:$op\) <- step \(.*torch_stack.py:$call\)\$" "$lines"
	grep -q "\[scope 'stack_step', outside its torch calls\]" "$lines"
	grep -Eq '^ +[0-9.]+ +100.0 +[0-9.]+ +0.0  total$' "$lines"
	# the summaries: a row per (operator, innermost 2 frames), each with
	# key_averages(group_by_stack_n)'s count (3: torch counts the C call too)
	oracle "$BATS_TEST_TMPDIR/groups.json" "$PY214" "$STACKW" threads oracle_groups 3
	run python3 "$GROUPCHECK" "$BATS_TEST_TMPDIR/groups.json" 2 "$OUT"
	echo "$output"
	assert_success
	assert_line --regexp '^segments=3 groups=[0-9]+ torch_groups=[0-9]+ fails=0$'
	local summ=$OUT/summary_rank0_segment0001_stack_step.txt
	grep -q 'grouped by name and the innermost 2 Python frame(s)' "$summ"
	grep -Eq "^aten::add .*cpu_op  at .*torch_stack.py\($((op - 1))\): plain\$" "$summ"
	grep -Eq '^ +<- .*torch_stack.py\([0-9]+\): step$' "$summ"
}

@test "--with-stack through PyTorch's callbacks (libfvbpf.so in the job): the same frames (torch 2.14)" {
	WL_PRELOAD=1 stacks_match_profiler "$PY214" --with-stack
	grep -q 'operators through its own callbacks' "$FV_ERR"
	# the library walked every stack in the process: none through BPF's probe
	grep -Eq 'walked in the process by libfvbpf.so: [1-9][0-9]*; BPF \(all processes\): 0 stacks' "$FV_ERR"
	# no --group-by-stack: the summaries as without stacks
	run grep -l '"stack"' "$OUT"/summary_*.json
	assert_failure
	run grep -l 'innermost' "$OUT"/summary_*.txt
	assert_failure
}

@test "--with-stack --inject on an unmodified job: the library goes in, walks the frames itself, torch.profiler's frames (torch 2.14)" {
	stacks_match_profiler "$PY214" --with-stack --inject
	grep -q 'libfvbpf.so injected' "$FV_ERR"
	grep -q 'operators through its own callbacks' "$FV_ERR"
	grep -Eq 'walked in the process by libfvbpf.so: [1-9][0-9]*; BPF \(all processes\): 0 stacks' "$FV_ERR"
}

@test "--with-stack through the callbacks: a frame layout the library's check refuses leaves the walks to BPF, same frames" {
	plain_pass_only "the callbacks test's code with one offset changed by fvbpf-test"
	FVBPF=$(dirname "$FVBPF")/fvbpf-test FVBPF_TEST_BAD_PY_CFG=1 WL_PRELOAD=1 \
		stacks_match_profiler "$PY214" --with-stack
	grep -q 'operators through its own callbacks' "$FV_ERR"
	grep -Eq 'walked in the process by libfvbpf.so: 0; BPF \(all processes\): [1-9][0-9]* stacks' "$FV_ERR"
}

BWW=$ROOT/tests/workloads/torch_backward.py

# backward_run PY PRELOAD [fvbpf option...]: torch.profiler's oracle of one
# step of the backward loop, then 3 segments of fvbpf on 6 steps of it
# (PRELOAD 1: libfvbpf.so in the job, operators through its callbacks).
backward_run() {
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$1" "$BWW" oracle
	start_workload "$WL_LOG" env ${2:+LD_PRELOAD=$BUILD/libfvbpf.so} "$1" "$BWW" run \
		"$BATS_TEST_TMPDIR" 6
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:bwd_step -n 3 "${@:3}"
	run_steps
	[ "$FV_STATUS" -eq 0 ]
}

@test "--with-stack through PyTorch's callbacks: backward nodes get their forward op's stack, paired and placed as torch.profiler does (torch 2.14)" {
	backward_run "$PY214" 1 --with-stack
	grep -q 'operators through its own callbacks' "$FV_ERR"
	run python3 "$ROOT/tests/lib/pystack_bwd_check.py" "$BATS_TEST_TMPDIR/oracle.json" "$BWW" "$OUT"
	echo "$output"
	assert_success
	assert_line "segments=3 nodes=18 fails=0"
	run python3 "$CHECK" "$OUT"
	assert_success
	grep -q '"sequence_numbers":true' "$OUT"/trace_rank0_segment0001_bwd_step.json
	# each step's 6 nodes paired: their forward ops ran in the same segment
	grep -q -- "18 backward nodes given their forward op's stack, 0 without" "$FV_ERR"
}

@test "operators through uprobes: no sequence numbers, and the metadata says so (torch 2.14)" {
	plain_pass_only "the callbacks test's fvbpf code; here only what the uprobe path leaves out"
	backward_run "$PY214" "" --with-stack
	run grep -c '"Sequence number"' "$OUT"/trace_rank0_segment0001_bwd_step.json
	[ "$output" = 0 ]
	grep -q '"sequence_numbers":false' "$OUT"/trace_rank0_segment0001_bwd_step.json
	grep -q '"AddmmBackward0"' "$OUT"/trace_rank0_segment0001_bwd_step.json
}

@test "FASTVIDEO_TORCH_PROFILER_WITH_STACK=1 turns stacks on (torch 2.13)" {
	plain_pass_only "the 2.14 test's fvbpf code on torch 2.13.0, switched on by a variable"
	FASTVIDEO_TORCH_PROFILER_WITH_STACK=1 stacks_match_profiler "$PY213"
}

# launch_lines PYTHON: py_launch.py under PYTHON, 3 segments; each launch's
# and region begin's stack names the lines the source marks.  Functions are
# named by co_qualname, by co_name on 3.10 (it has no co_qualname).
launch_lines() {
	[ -e "${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart.so.13" ] ||
		skip "no CUDA toolkit at ${CUDA_HOME:-/usr/local/cuda}"
	local qual=1
	"$1" -c 'import sys; sys.exit(sys.version_info[:2] == (3, 10))' || qual=0
	FVBPF_LIB=$BUILD/libfvbpf.so start_workload "$BATS_TEST_TMPDIR/wl-$(basename "$1").log" "$1" \
		"$ROOT/tests/workloads/py_launch.py" \
		"${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart.so.13" 3
	rm -f "$FV_ERR" # start_fvbpf waits for its "tracing": not the last run's
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_forward -n 3 --with-stack
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 - "$ROOT/tests/workloads/py_launch.py" "$OUT" "$qual" <<'PY'
import glob, json, re, sys
src, out, qual = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
enter = "profiler_region.__enter__" if qual else "__enter__"
mark = {m.group(1): i for i, l in enumerate(open(src), 1) for m in [re.search(r"# @(\w+)$", l)] if m}
n = 0
for tr in sorted(glob.glob(out + "/trace_*.json")):
    t = json.load(open(tr))
    st = t["pythonStacks"]
    ev = [e for e in t["traceEvents"] if e.get("ph") == "X"]
    (la,) = [e for e in ev if e["name"] == "cudaLaunchKernel"]
    (rg,) = [e for e in ev if e["name"] == "fvbpf.region::training_forward"]
    f = st[str(la["args"]["Python stack"])]
    assert f[0]["function"] == "launch" and f[0]["line"] == mark["launch"], f[0]
    assert la["args"]["Python line"] == "launch (%s:%d)" % (src, mark["launch"]), la["args"]
    f = st[str(rg["args"]["Python stack"])]
    assert f[0]["function"] == enter and f[0]["file"].endswith("fvbpf/__init__.py"), f[0]
    assert f[1]["function"] == "step" and f[1]["line"] == mark["region"], f[1]
    n += 1
print("segments", n)
PY
	echo "$output"
	assert_success
	assert_output "segments 3"
}

@test "--with-stack: CUDA launches and region begins get the lines that made them" {
	launch_lines python3
	grep -q -- '--with-stack: CPython 3.11' "$FV_ERR"
}

# The interpreter of another minor version: on PATH or installed by pyenv.
other_python() { # NAME
	local p
	for p in "$1" "$(pyenv root 2>/dev/null)"/versions/*/bin/"$1"; do
		"$p" -c 1 >/dev/null 2>&1 && { echo "$p"; return 0; }
	done
	return 1
}

@test "--with-stack on CPython 3.10, 3.12 and 3.13 (where installed): the same lines" {
	local v py n=0
	for v in 3.10 3.12 3.13; do
		py=$(other_python "python$v") || continue
		rm -rf "$OUT"
		launch_lines "$py"
		grep -q -- "--with-stack: CPython $v" "$FV_ERR"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || skip "none of python3.10, 3.12, 3.13 is installed"
}

@test "--with-stack --format pftrace: each slice's Python line and the python_function slices, as the source says (torch 2.14)" {
	need_pb
	start_stack "$PY214" 6
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:stack_step -n 3 --with-stack --format pftrace
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	local f n=0 mark op name line def
	for f in "$OUT"/trace_rank0_segment000[0-2]_stack_step.pftrace; do
		run "$PB_PY" "$PFCHECK" "$f"
		assert_success
		# the outermost operator of each marked line carries that line;
		# its function a derived python_function slice from its first line
		for mark in plain:aten::add inner:aten::mul method:aten::sub decorated:aten::neg \
			thread_a:aten::sin thread_b:aten::cos; do
			op=${mark#*:}
			line=$(grep -n "# @op:${mark%%:*}\$" "$STACKW" | cut -d: -f1)
			assert_line --regexp "^python_line cpu_op $op [A-Za-z_.<>]+ \(.*torch_stack.py:$line\)\$"
		done
		def=$(grep -n '^def plain(t):$' "$STACKW" | cut -d: -f1)
		assert_line --regexp "^slice python_function .*torch_stack.py\($def\): plain\$"
		n=$((n + 1))
	done
	[ "$n" -eq 3 ]
}

@test "without --with-stack: no stacks, no stack files" {
	plain_pass_only "no stack code runs"
	start_stack "$PY214" 4
	FASTVIDEO_TORCH_PROFILER_WITH_STACK=0 start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:stack_step -n 2
	run_steps
	[ "$FV_STATUS" -eq 0 ]
	assert_file_exists "$OUT/trace_rank0_segment0001_stack_step.json"
	run ls "$OUT"
	refute_output --partial ".folded"
	refute_output --partial ".svg"
	run grep -c 'Python stack\|pythonStacks\|python_function' "$OUT/trace_rank0_segment0001_stack_step.json"
	assert_output "0"
	run grep -c -- '--with-stack' "$FV_ERR"
	assert_output "0"
}

# hostile MODE: py_hostile in MODE, 3 segments, fvbpf --with-stack.
hostile() {
	# no agent: nothing to wait for before a segment is written
	# a log of its own: a reused one could still show the last run's pid=
	FVBPF_AGENT=off start_workload "$BATS_TEST_TMPDIR/wl-$1.log" "$HOSTILE" --torch "$FAKETORCH" \
		--python "$FAKEPY" "$1"
	rm -f "$FV_ERR" # start_fvbpf waits for its "tracing": not the last run's
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_forward -n 3 --with-stack
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	FOLDED=$OUT/stacks_rank0_segment0002_training_forward.folded
	assert_file_exists "$FOLDED"
	python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' \
		"$OUT/flame_rank0_segment0002_training_forward.svg"
	run python3 "$CHECK" "$OUT"
	assert_success
}

@test "hostile interpreter: frames as the memory says, a frame chain cycle cut at 128" {
	hostile good
	run cat "$FOLDED"
	assert_line --regexp '^outer \(/fake/model.py:20\);inner \(/fake/model.py:11\);aten::linear [0-9]+$'
	rm -rf "$OUT"
	touch "$BATS_TEST_TMPDIR/exit"
	hostile cycle
	run awk -F';' '{print NF, $1}' "$FOLDED"
	# the cut marker, 128 frames, the operators
	assert_line "130 [outer frames cut]"
	assert_line "131 [outer frames cut]"
}

@test "hostile interpreter: garbage code objects and huge line tables are unknown, never guessed" {
	hostile garbage
	run cat "$FOLDED"
	assert_line --regexp '^\[unreadable code 0x[0-9a-f]+\];outer \(/fake/model.py:\?\);\[unreadable code 0x[0-9a-f]+\];\[unreadable code 0xdead000000\];aten::linear [0-9]+$'
	grep -q -- '--with-stack: .* 2 bad code objects, 0 line tables too big, 1 unreadable' "$FV_ERR"
	rm -rf "$OUT"
	hostile huge
	run cat "$FOLDED"
	assert_line --regexp '^outer \(/fake/model.py:20\);inner \(/fake/model.py:\?\);aten::linear [0-9]+$'
	grep -q -- '--with-stack: .* 1 line tables too big' "$FV_ERR"
}

@test "hostile interpreter: a freed thread state, a wrong layout, an unknown version" {
	hostile freed
	# the first step has its stack; once the thread state is gone, none
	grep -q '^outer (/fake/model.py:20);inner (/fake/model.py:11);aten::linear ' \
		"$OUT/stacks_rank0_segment0000_training_forward.folded"
	run cat "$FOLDED"
	assert_line --regexp '^\[no Python stack\];aten::linear [0-9]+$'
	rm -rf "$OUT"
	hostile badlayout
	grep -q 'does not look as fvbpf expects' "$FV_ERR"
	run grep -c '^\[no Python stack\];aten::linear ' "$FOLDED"
	assert_output "1"
	rm -rf "$OUT"
	hostile version
	grep -q -- '--with-stack: CPython 3.14 in .*libpython3.11.so.1.0 is not supported (3.10 to 3.13 are)' "$FV_ERR"
}
