#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# fvbpf dump: where every rank of a running job is, without stopping it.
# A 3-rank gloo job under torchrun (tests/workloads/dump_job.py, real
# PyTorch on the CPU, no fvbpf code) whose rank 1 stalls in a known
# function before its all_reduce; the same job healthy, dumped 10 times in
# a row; --dump-on-stall on it; threads without Python, a process without
# Python, a process that exits mid-dump, a hostile interpreter and hostile
# names, CPython 3.10 to 3.13, the command's errors.

load helpers

JOBPY=$ROOT/tests/workloads/dump_job.py
THREADS=$ROOT/tests/workloads/dump_threads.py
FVT=$(dirname "$FVBPF")/fvbpf-test

setup() {
	common_setup
	JOB=$BATS_TEST_TMPDIR/job
	mkdir -p "$JOB"
	TORCHRUN=$(dirname "$PY214")/torchrun
}

teardown() {
	if [ -n "${JOB_PGID:-}" ]; then
		touch "$JOB/go_on" "$JOB/stop"
		# the ranks leave together once rank 0 sees stop; the group otherwise
		wait_for_gone "$JOB_PGID" || kill -KILL -- "-$JOB_PGID" 2>/dev/null
	fi
	common_teardown
}

# start_job ARGS...: dump_job.py under torchrun with 3 ranks in a session of
# its own, every rank past its first step; LAUNCHER, RANK0..2 set.
start_job() {
	local r
	need_torch "$PY214"
	(cd "$JOB" && OMP_NUM_THREADS=1 exec setsid "$TORCHRUN" --standalone --nproc-per-node 3 \
		"$JOBPY" "$JOB" "$@" >"$JOB/job.log" 2>&1) &
	disown
	for r in 0 1 2; do
		wait_long test -s "$JOB/rank.$r"
		eval "RANK$r=$(cat "$JOB/rank.$r")"
	done
	LAUNCHER=$(ps -o ppid= -p "$RANK0" | tr -d ' ')
	JOB_PGID=$(ps -o pgid= -p "$LAUNCHER" | tr -d ' ')
}

# The line of the workload marked MARK.
mark_line() { # FILE MARK
	grep -n "# $2\$" "$1" | cut -d: -f1
}

# dump_until REGEX ARGS...: dump (text) until its first line matches, up to
# 60 s (the ranks reach their all_reduce after the stall began).
dump_until() {
	local re=$1 i
	shift
	for i in $(seq 240); do
		"$FVBPF" dump "$@" >"$BATS_TEST_TMPDIR/dump.txt" 2>"$BATS_TEST_TMPDIR/dump.err" &&
			head -n1 "$BATS_TEST_TMPDIR/dump.txt" | grep -Eq -- "$re" && return 0
		sleep 0.25
	done
	echo "no dump's first line matched $re; the last:" >&2
	cat "$BATS_TEST_TMPDIR/dump.txt" "$BATS_TEST_TMPDIR/dump.err" >&2
	return 1
}

@test "dump: rank 1 stalls before its all_reduce: ranks 0 and 2 wait in all_reduce, rank 1 absent at its line, in one line at the top" {
	local hang reduce
	hang=$(mark_line "$JOBPY" HANG-LINE)
	reduce=$(mark_line "$JOBPY" ALL-REDUCE-LINE)
	start_job --hang-rank 1 --hang-after 3
	wait_long test -e "$JOB/stalled"
	# rank 1 sleeps 50 ms a turn of its loop and runs for microseconds:
	# a dump may catch it running (the ASan pass did once); the next not
	dump_until '^fvbpf dump: ranks 0, 2 wait.*, blocked in ' -p "$LAUNCHER" --children
	run cat "$BATS_TEST_TMPDIR/dump.txt"
	echo "$output"
	assert_line --index 0 --regexp "^fvbpf dump: ranks 0, 2 wait in all_reduce \(group default\); rank 1 is absent: in stall_here at dump_job.py:$hang, blocked in clock_nanosleep( for [0-9.]+ (ms|s))?\$"
	assert_output --regexp "read in [0-9.]+ ms without stopping them"
	# each rank's main thread, with its frames, innermost first
	assert_output --regexp "(^|
)rank 1  pid $RANK1  python3  CPython 3\.11"
	assert_output --regexp "
    stall_here \([^)]*dump_job\.py:$hang\)
    main \([^)]*dump_job\.py:[0-9]+\)"
	assert_output --regexp "
  thread $RANK0 python3: blocked in futex [^
]*; waits in all_reduce \(group default\)
    all_reduce \([^)]*torch/distributed/distributed_c10d\.py:[0-9]+\)
    _exception_logger\.<locals>\.wrapper \([^)]*c10d_logger\.py:[0-9]+\)
    average_gradients \([^)]*dump_job\.py:$reduce\)"
	assert_output --regexp "thread [0-9]+ pt_gloo_runloop: blocked in futex[^
]*; no Python"
	# the launcher: a process without a rank, named by its PID
	assert_output --regexp "(^|
)pid $LAUNCHER  pt_elastic  CPython"
	# the JSON says the same
	run "$FVBPF" dump -p "$LAUNCHER" --children --json
	assert_success
	echo "$output" >"$BATS_TEST_TMPDIR/dump.json"
	run python3 - "$BATS_TEST_TMPDIR/dump.json" "$hang" "$reduce" "$RANK0" "$RANK1" "$RANK2" <<-'EOF'
		import json, sys
		d = json.load(open(sys.argv[1]))
		hang, reduce = int(sys.argv[2]), int(sys.argv[3])
		pids = [int(x) for x in sys.argv[4:7]]
		cw = d["collective_wait"]
		print("collective", cw["collective"], cw["group"], cw["waiting_ranks"], cw["absent_ranks"])
		a = cw["absent"][0]
		print("absent", a["rank"], a["pid"] == pids[1], a["frame"]["function"],
		      a["frame"]["file"].endswith("dump_job.py"), a["frame"]["line"] == hang,
		      a["native"]["syscall"])
		for w in cw["waiting"]:
		    print("waiting", w["rank"], w["pid"] == pids[w["rank"]], w["frame"]["function"],
		          w["frame"]["file"].endswith("torch/distributed/distributed_c10d.py"))
		procs = {p["rank"]: p for p in d["processes"] if p["rank"] is not None}
		for r in (0, 1, 2):
		    p = procs[r]
		    main = p["threads"][0]
		    fr = main["python"]
		    print("rank", r, p["pid"] == pids[r], p["rank_from_env"], p["python"]["status"],
		          main["tid"] == p["pid"], [f["function"] for f in fr][:3],
		          "collective" in main and main["collective"]["name"])
		    if r != 1:
		        print("caller line", [f["line"] for f in fr if f["function"] == "average_gradients"] == [reduce])
		print("stopped", d["stopped"])
	EOF
	echo "$output"
	assert_success
	assert_line "collective all_reduce default [0, 2] [1]"
	assert_line "absent 1 True stall_here True True clock_nanosleep"
	assert_line "waiting 0 True all_reduce True"
	assert_line "waiting 2 True all_reduce True"
	assert_line "rank 0 True True ok True ['all_reduce', '_exception_logger.<locals>.wrapper', 'average_gradients'] all_reduce"
	assert_line "rank 1 True True ok True ['stall_here', 'main', '<module>'] False"
	assert_line "rank 2 True True ok True ['all_reduce', '_exception_logger.<locals>.wrapper', 'average_gradients'] all_reduce"
	assert_line "caller line True"
	assert_line "stopped False"
	# --match finds the same processes (the launcher and each rank)
	run "$FVBPF" dump --match "dump_job\.py $JOB"
	assert_success
	assert_line --index 0 --regexp "^fvbpf dump: ranks 0, 2 wait in all_reduce \(group default\); rank 1 is absent: in stall_here at dump_job.py:$hang"
	# the job was not stopped: rank 1 leaves its stall and every rank steps on
	local before
	before=$(wc -l <"$JOB/times.0")
	touch "$JOB/go_on"
	wait_long steps_past 0 $((before + 5))
	wait_long steps_past 1 $((before + 5))
}

# has_segment RANK: a segment of rank RANK is written.
has_segment() {
	ls "$OUT" | grep -Eq "^summary_rank$1_segment[0-9]+_step\.json\$"
}

# stalled_for SECONDS: rank 1 has been in its stall that long.
stalled_for() {
	[ -e "$JOB/stalled" ] && [ $(($(date +%s) - $(stat -c %Y "$JOB/stalled"))) -ge "$1" ]
}

# steps_past RANK N: rank RANK has ended more than N steps.
steps_past() {
	[ "$(wc -l <"$JOB/times.$1")" -gt "$2" ]
}

@test "dump: 10 dumps in a row of a healthy job stall none of its steps (gaps within the job's own)" {
	start_job --sleep-ms 50
	run python3 "$ROOT/tests/lib/dump_gaps.py" "$FVBPF" "$JOB" 3 "$LAUNCHER" --dumps 10 --steps 60 --idle
	echo "$output"
	assert_success
	assert_line "ok"
	# the check sees a stall: a stand-in for fvbpf that stops the ranks
	# for 150 ms a dump (as a ptrace-based dumper would) fails it (the
	# dumps run under SCHED_IDLE, as above: a stop is a stop all the same)
	cat >"$BATS_TEST_TMPDIR/stopper" <<-'EOF'
		#!/bin/sh
		# stopper dump -p LAUNCHER --children: stop the launcher's children a while
		kids=$(pgrep -P "$3")
		kill -STOP $kids
		sleep 0.15
		kill -CONT $kids
	EOF
	chmod +x "$BATS_TEST_TMPDIR/stopper"
	run python3 "$ROOT/tests/lib/dump_gaps.py" "$BATS_TEST_TMPDIR/stopper" "$JOB" 3 "$LAUNCHER" --dumps 10 --steps 60 --idle
	echo "$output"
	assert_failure
	assert_line --regexp "^stalled: [0-9]+ step gaps during the dumps"
}

@test "dump: --dump-on-stall writes a dump of the hung job beside the traces, once, and says so in the exit report" {
	local hang
	hang=$(mark_line "$JOBPY" HANG-LINE)
	start_job --hang-rank 1
	start_fvbpf -p "$LAUNCHER" --children --dump-on-stall 2 -d 300 -o "$OUT"
	# every rank steps under fvbpf before the stall
	wait_long has_segment 0
	wait_long has_segment 1
	wait_long has_segment 2
	[ ! -e "$OUT/dump_stall0000.txt" ]
	touch "$JOB/hang"
	wait_long test -e "$OUT/dump_stall0000.json"
	# ranks 0 and 2 may still be on their way into all_reduce when the
	# dump is taken: rank 1's stall is in it either way
	run head -n1 "$OUT/dump_stall0000.txt"
	echo "$output"
	assert_output --regexp "^fvbpf dump: .*rank 1 .*in stall_here at dump_job.py:$hang"
	run python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sorted(p["rank"] for p in d["processes"] if p["rank"] is not None), d["stopped"])' "$OUT/dump_stall0000.json"
	assert_output "[0, 1, 2] False"
	grep -q -- "--dump-on-stall: PID [0-9]* ([^)]*) ended no segment for [0-9.]* s: wrote $OUT/dump_stall0000.txt and .json" "$FV_ERR"
	# one dump for one stall, however long it lasts (three times the limit)
	wait_for stalled_for 6
	[ ! -e "$OUT/dump_stall0001.txt" ]
	kill -INT "$FV_PID"
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	run cat "$FV_OUT"
	echo "$output"
	assert_line --regexp "^fvbpf: --dump-on-stall: PID [0-9]+ \(rank [0-2]\) ended no segment for [0-9.]+ s after [0-9]+: $OUT/dump_stall0000.txt and .json\$"
	assert_line --regexp "^  .*rank 1 .*in stall_here at dump_job.py:$hang"
	python3 "$ROOT/tests/lib/strict_outputs.py" "$OUT" "$FV_OUT" >/dev/null
}

@test "dump: a thread blocked in C without Python, beside Python threads" {
	local main waiter
	main=$(mark_line "$THREADS" MAIN-LINE)
	waiter=$(mark_line "$THREADS" WAITER-LINE)
	start_workload "$WL_LOG" python3 "$THREADS"
	wait_for sh -c "'$FVBPF' dump -p $WL_PID | grep -Eq 'native_sleeper: blocked in (clock_nanosleep|restart_syscall)'"
	wait_for sh -c "'$FVBPF' dump -p $WL_PID | grep -q 'py_waiter: blocked in futex'"
	wait_for sh -c "'$FVBPF' dump -p $WL_PID | grep -Eq 'thread $WL_PID python3[.0-9]*: blocked in'"
	run "$FVBPF" dump -p "$WL_PID"
	echo "$output"
	assert_success
	assert_line --index 0 "fvbpf dump: no process waits in a collective"
	# a sleep a signal interrupted goes on as restart_syscall (seen once
	# beside busy loops): the kernel's name for it, given as it is
	assert_line --regexp "^  thread [0-9]+ native_sleeper: blocked in (clock_nanosleep \(hrtimer_nanosleep\)|restart_syscall \([a-z_0-9]+\)), off CPU for [0-9.]+ (ms|s); no Python\$"
	assert_output --regexp "
  thread $WL_PID python3: blocked in clock_nanosleep [^
]*
    blocked_main \([^)]*dump_threads\.py:$main\)"
	assert_output --regexp "waiter \([^)]*dump_threads\.py:$waiter\)"
	run "$FVBPF" dump -p "$WL_PID" --json
	assert_success
	run python3 -c '
import json, sys
d = json.load(sys.stdin)
for t in d["processes"][0]["threads"]:
    print(t["name"], t["python"] is None, t["native"]["syscall"], t["native"]["off_cpu_ms"] is not None)' <<<"$output"
	assert_line "native_sleeper True clock_nanosleep True"
	assert_line "py_waiter False futex True"
}

@test "dump: the regions a thread is in through fvbpf's @profile_region decorators" {
	start_workload "$WL_LOG" python3 "$THREADS" --regions
	wait_for sh -c "'$FVBPF' dump -p $WL_PID | grep -q 'thread $WL_PID python3: blocked in clock_nanosleep'"
	run "$FVBPF" dump -p "$WL_PID"
	echo "$output"
	assert_success
	assert_output --regexp "
  thread $WL_PID python3: [^
]*
    regions: training_train_one_step > training_forward
    blocked_main \("
	run "$FVBPF" dump -p "$WL_PID" --json
	assert_success
	run python3 -c 'import json, sys; t = json.load(sys.stdin)["processes"][0]["threads"]; print(t[0]["regions"], t[1]["regions"])' <<<"$output"
	assert_output "['training_train_one_step', 'training_forward'] []"
}

@test "dump: a rank's forked and spawned workers are named after it, never an absent rank" {
	RANK=1 WORLD_SIZE=2 start_workload "$WL_LOG" python3 "$THREADS" --workers
	local fork spawn
	fork=$(sed -n 's/^workers=\([0-9]*\),.*/\1/p' "$WL_LOG")
	spawn=$(sed -n 's/^workers=[0-9]*,\([0-9]*\)$/\1/p' "$WL_LOG")
	WL_PIDS+=("$fork" "$spawn")
	wait_for sh -c "'$FVBPF' dump -p $spawn | grep -q 'worker_sleep'"
	run "$FVBPF" dump -p "$WL_PID" --children
	echo "$output"
	assert_success
	assert_line --index 0 "fvbpf dump: no rank waits in a collective"
	assert_line --regexp "^rank 1  pid $WL_PID  python3  CPython 3\.11"
	assert_line --regexp "^rank 1 worker $fork  python3  CPython 3\.11"
	assert_line --regexp "^rank 1 worker $spawn  python3  CPython 3\.11"
	run "$FVBPF" dump -p "$WL_PID" --children --json
	run python3 -c '
import json, sys
d = json.load(sys.stdin)
for p in d["processes"]:
    print(p["name"].split(" worker")[0], p["rank"], p["worker_of"] is not None)' <<<"$output"
	assert_line --index 0 "rank 1 1 False"
	assert_line "rank 1 None True"
}

@test "dump: a process without Python (the C marker trainer)" {
	start_workload "$WL_LOG" "$TRAINER" --steps 0 --threads
	run "$FVBPF" dump -p "$WL_PID"
	echo "$output"
	assert_success
	assert_line --index 0 "fvbpf dump: no process waits in a collective"
	assert_line --regexp "^rank 0  pid $WL_PID  marker_trainer  no CPython\$"
	assert_line --regexp "^  thread $WL_PID marker_trainer: (blocked in [a-z_0-9]+|running)"
	assert_line --regexp "^  thread [0-9]+ dl_worker: "
	refute_output --partial "no Python"
	run "$FVBPF" dump -p "$WL_PID" --json
	assert_success
	run python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["processes"][0]
print(p["python"]["status"], len(p["threads"]), all(t["python"] is None for t in p["threads"]), d["collective_wait"])' <<<"$output"
	assert_output "none 2 True None"
}

@test "dump: a process that exits mid-dump is said in one line, the others are dumped; all gone is an error" {
	local fvt=$FVT out
	start_workload "$WL_LOG" python3 "$THREADS"
	local keep=$WL_PID
	start_workload "$BATS_TEST_TMPDIR/gone.log" python3 "$THREADS"
	local gone=$WL_PID
	out=$BATS_TEST_TMPDIR/mid
	# fvbpf-test pauses in each process's dump, after its threads and
	# before its Python: the second one is killed in its pause
	FVBPF_TEST_DUMP_PAUSE_MS=1500 "$fvt" dump -p "$keep,$gone" >"$out.txt" 2>"$out.err" &
	local dpid=$! status=0
	wait_for grep -q "pausing 1500 ms in the dump of PID $gone" "$out.err"
	kill -KILL "$gone"
	wait "$dpid" || status=$?
	cat "$out.txt" "$out.err"
	[ "$status" -eq 0 ]
	run cat "$out.err"
	assert_line "fvbpf: warning: PID $gone exited during the dump: what was read before is in it"
	refute_output --partial "error"
	run cat "$out.txt"
	assert_line --regexp "^pid $keep  python3  CPython 3\.11"
	assert_line --regexp "^pid $gone  python3  CPython whose thread list could not be read: native state only\$"
	assert_line "  exited during the dump: what was read before is below"
	assert_output --regexp "blocked_main \([^)]*dump_threads\.py:[0-9]+\)"
	# the only process gone: one line, exit 1
	FVBPF_TEST_DUMP_PAUSE_MS=1500 "$fvt" dump -p "$keep" >"$out.txt" 2>"$out.err" &
	dpid=$!
	wait_for grep -q "pausing 1500 ms in the dump of PID $keep" "$out.err"
	kill -KILL "$keep"
	status=0
	wait "$dpid" || status=$?
	cat "$out.txt" "$out.err"
	[ "$status" -eq 1 ]
	[ ! -s "$out.txt" ]
	grep -qx "fvbpf: error: every process exited before or during the dump: nothing to show" "$out.err"
}

@test "dump: a process in its own PID namespace (a container's): its threads matched by their own ids" {
	local main
	main=$(mark_line "$THREADS" MAIN-LINE)
	unshare -p -f --mount-proc python3 "$THREADS" >"$WL_LOG" 2>&1 &
	WL_PIDS+=($!)
	disown
	wait_for grep -q '^pid=1$' "$WL_LOG"
	WL_PID=$(pgrep -P "${WL_PIDS[-1]}")
	WL_PIDS+=("$WL_PID")
	wait_for sh -c "'$FVBPF' dump -p $WL_PID | grep -q 'py_waiter: blocked in futex'"
	wait_for sh -c "'$FVBPF' dump -p $WL_PID | grep -Eq 'thread $WL_PID python3[.0-9]*: blocked in'"
	run "$FVBPF" dump -p "$WL_PID"
	echo "$output"
	assert_success
	assert_line --regexp "^rank 0  pid $WL_PID  python3  CPython 3\.11"
	assert_output --regexp "
  thread $WL_PID python3: blocked in clock_nanosleep [^
]*
    blocked_main \([^)]*dump_threads\.py:$main\)"
	assert_output --regexp "waiter \([^)]*dump_threads\.py:[0-9]+\)"
}

@test "dump: a hostile interpreter (cycles, garbage, a huge line table, a wrong layout, 3.14) and hostile names" {
	local m
	for m in good cycle garbage huge badlayout version; do
		start_workload "$BATS_TEST_TMPDIR/$m.log" "$BUILD/tests/py_hostile" \
			--torch "$BUILD/tests/faketorch/libtorch_cpu.so" \
			--python "$BUILD/tests/fakepy/libpython3.11.so.1.0" "$m"
		"$FVBPF" dump -p "$WL_PID" >"$BATS_TEST_TMPDIR/$m.txt"
		"$FVBPF" dump -p "$WL_PID" --json >"$BATS_TEST_TMPDIR/$m.json"
		kill "$WL_PID"
	done
	run cat "$BATS_TEST_TMPDIR/good.txt"
	assert_output --partial $'    inner (/fake/model.py:11)\n    outer (/fake/model.py:20)'
	run cat "$BATS_TEST_TMPDIR/cycle.txt"
	assert_line "    [outer frames cut: more than 128]"
	run grep -c '^    inner (/fake/model.py:11)$' "$BATS_TEST_TMPDIR/cycle.txt"
	assert_output 64
	run cat "$BATS_TEST_TMPDIR/garbage.txt"
	assert_line "    [unreadable code 0xdead000000]"
	assert_line "    outer (/fake/model.py:?)"
	run cat "$BATS_TEST_TMPDIR/huge.txt"
	assert_line "    inner (/fake/model.py:?)"
	run cat "$BATS_TEST_TMPDIR/badlayout.txt"
	assert_line --regexp "CPython whose layout fvbpf does not recognise: native state only\$"
	assert_line --regexp "^  thread [0-9]+ py_hostile: (blocked in |running)"
	run cat "$BATS_TEST_TMPDIR/version.txt"
	assert_line --regexp "CPython 3\.14: not walked \(3\.10 to 3\.13 are\); native state only\$"
	# a job's own names: escape sequences, a forged line, bidi, C1
	start_workload "$WL_LOG" python3 "$THREADS" --hostile
	wait_for sh -c "'$FVBPF' dump -p $WL_PID | grep -q 'native_sleeper'"
	"$FVBPF" dump -p "$WL_PID" >"$BATS_TEST_TMPDIR/names.txt"
	"$FVBPF" dump -p "$WL_PID" --json >"$BATS_TEST_TMPDIR/names.json"
	run cat "$BATS_TEST_TMPDIR/names.txt"
	echo "$output"
	assert_output --partial 'evil?[2J?fvbpf: forged\u202e\x9b (/tmp/?]0;title?bad\u202e.py:'
	python3 "$ROOT/tests/lib/strict_outputs.py" "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR"/*.txt >/dev/null
}

@test "dump: CPython 3.10, 3.12 and 3.13 (where installed): every thread's frames and lines" {
	local v py n=0 main
	main=$(mark_line "$THREADS" MAIN-LINE)
	for v in 3.10 3.12 3.13; do
		py=$(other_python "python$v") || continue
		start_workload "$BATS_TEST_TMPDIR/$v.log" "$py" "$THREADS"
		wait_for sh -c "'$FVBPF' dump -p $WL_PID | grep -q 'py_waiter: blocked in futex'"
		wait_for sh -c "'$FVBPF' dump -p $WL_PID | grep -Eq 'thread $WL_PID python3[.0-9]*: blocked in'"
		run "$FVBPF" dump -p "$WL_PID"
		echo "$output"
		assert_line --regexp "^rank 0  pid $WL_PID  python3[.0-9]*  CPython $v"
		assert_output --regexp "
    blocked_main \([^)]*dump_threads\.py:$main\)
    main \([^)]*dump_threads\.py:[0-9]+\)
    <module> \([^)]*dump_threads\.py:[0-9]+\)"
		assert_output --regexp "    (Event\.)?wait \([^)]*threading\.py:[0-9]+\)"
		assert_line --regexp "^  thread [0-9]+ native_sleeper: blocked in (clock_nanosleep|restart_syscall) .*; no Python$"
		kill "$WL_PID"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || skip "none of python3.10, 3.12, 3.13 is installed"
	# an interpreter fvbpf has no layout for is named, its native state given
	py=$(other_python python3.9) || return 0
	start_workload "$BATS_TEST_TMPDIR/3.9.log" "$py" "$THREADS"
	run "$FVBPF" dump -p "$WL_PID"
	assert_line --regexp "^rank 0  pid $WL_PID  python3[.0-9]*  CPython 3\.9: not walked \(3\.10 to 3\.13 are\); native state only\$"
	assert_line --regexp "^  thread [0-9]+ native_sleeper: blocked in (clock_nanosleep|restart_syscall)"
}

# The interpreter of another minor version: on PATH or installed by pyenv.
other_python() { # NAME
	local p
	for p in "$1" "$(pyenv root 2>/dev/null)"/versions/*/bin/"$1"; do
		"$p" -c 1 >/dev/null 2>&1 && { echo "$p"; return 0; }
	done
	return 1
}

@test "dump: errors are one line naming the fix" {
	run "$FVBPF" dump
	assert_equal "$status" 2
	assert_output --partial "fvbpf: error: no process given: use -p PID[,PID...] (with --children for a launcher's descendants) or --match REGEX"
	run "$FVBPF" dump -p 4194000
	assert_equal "$status" 1
	assert_output "fvbpf: error: no process with PID 4194000: check the PID (ps -p 4194000)"
	run "$FVBPF" dump --match 'no-such-process-[0-9]{40}'
	assert_equal "$status" 1
	assert_output "fvbpf: error: no process matches --match 'no-such-process-[0-9]{40}': check the pattern against \`ps -eo args\`"
	run "$FVBPF" dump --match '('
	assert_equal "$status" 1
	assert_output --regexp "^fvbpf: error: invalid --match '\(': .* \(a POSIX extended regular expression\)\$"
	run "$FVBPF" dump -p 1 --match x
	assert_equal "$status" 2
	assert_output --partial "fvbpf: error: give -p or --match, not both"
	run "$FVBPF" dump -p abc
	assert_equal "$status" 2
	assert_output --partial "fvbpf: error: invalid PID 'abc' for -p: give a process id from 1 to 4194304, e.g. -p 1234"
	run "$FVBPF" attach -p 1 --dump-on-stall 0
	assert_equal "$status" 2
	assert_output --partial "fvbpf: error: invalid --dump-on-stall '0': give seconds from 0.1 to 86400"
}
