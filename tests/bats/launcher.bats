#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# A job's launcher: it never takes a rank's name (no RANK in its
# environment), a launcher PID given alone gets the --children hint with
# the PIDs that fvbpf can trace, and the README's torchrun recipe
# (-p $(pgrep -o -f ...) --children) works where pgrep -f finds both the
# shell that started the job and the launcher.

load helpers

LAUNCHER=$ROOT/tests/workloads/job_launcher.py
JOB_CHECK=$ROOT/tests/lib/job_check.py

setup() {
	common_setup
	JOB=$BATS_TEST_TMPDIR/job
	mkdir -p "$JOB"
	export BUILD FVBPF_LIB=$BUILD/libfvbpf.so
}
teardown() {
	pkill -KILL -f "$BATS_TEST_TMPDIR" 2>/dev/null || true
	common_teardown
}

# The PID a worker's log names.
log_pid() { sed -n 's/^pid=//p' "$1" | head -n1; }

@test "launcher: a launcher without RANK, traced with --children, is named by PID, never rank 0" {
	# The launcher maps the markers itself (as torchrun maps libtorch_cpu)
	# and enters two steps of its own: segments of a process without a rank.
	start_workload "$JOB/launcher.log" python3 "$LAUNCHER" "$JOB" --no-late --no-restart \
		--steps 3 --markers 2
	local lp=$WL_PID
	"$FVBPF" attach -p "$lp" --children -r training_train_one_step -o "$OUT" -d 60 \
		>"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	wait_long grep -q '^statuses=' "$JOB/launcher.log"
	wait_fvbpf 30
	cat "$FV_ERR" >&2
	[ "$FV_STATUS" -eq 0 ]
	assert_file_contains "$JOB/launcher.log" '^launcher steps=2$'
	assert_file_contains "$FV_ERR" "attached to PID $lp (python3, no rank: named by PID)"
	run python3 "$JOB_CHECK" "$OUT" rank0="$(wl_count train_one_step "$JOB/rank0.log")" \
		rank1="$(wl_count train_one_step "$JOB/rank1.log")" "pid$lp=2"
	echo "$output"
	assert_success
	assert_line "ranks 0,1 restarts 0,0"
	# Read independently: no file of the launcher says rank 0, by name,
	# metadata or HTA's distributedInfo; the manifest says it has none.
	run python3 -c '
import glob, json, os, sys
out, lp = sys.argv[1], int(sys.argv[2])
m = json.load(open(os.path.join(out, "manifest.json")))
p = [x for x in m["processes"] if x["pid"] == lp][0]
print("launcher", p["rank"], p["rank_source"], p["rank_from_env"], p["files_named_by_pid"])
print("launcher files", sorted(f["rank"] for f in m["files"] if f["pid"] == lp))
for f in sorted(glob.glob(os.path.join(out, "trace_*.json"))):
    t = json.load(open(f))
    name = os.path.basename(f)
    if t["otherData"]["pid"] == lp:
        print("launcher trace", name.split("_segment")[0], t["otherData"]["rank"], "distributedInfo" in t)
    elif name.startswith("trace_rank0_"):
        assert t["distributedInfo"]["rank"] == 0, name
' "$OUT" "$lp"
	echo "$output"
	assert_success
	assert_line "launcher -1 default False True"
	assert_line "launcher files [-1, -1]"
	assert_line "launcher trace trace_pid$lp -1 False"
	[ "$(grep -c '^launcher trace' <<<"$output")" -eq 2 ]
	# report and merge label it by PID; export leaves it out of HTA's folder
	run "$FVBPF" report "$OUT"
	assert_success
	assert_output --partial "no rank pid $lp"
	run "$FVBPF" export "$OUT" -o "$BATS_TEST_TMPDIR/hta"
	assert_success
	assert_output --partial "2 traces of processes without a rank (launchers) left out"
	run find "$BATS_TEST_TMPDIR/hta" -name "*pid$lp*"
	assert_output ""
}

@test "launcher: -p LAUNCHER that maps nothing names its children that map the markers, and --children" {
	local wrapper lp p0 p1
	bash -c "python3 $LAUNCHER $JOB --no-late --no-restart --steps 1 >$JOB/launcher.log 2>&1; true" &
	wrapper=$!
	WL_PIDS+=("$wrapper")
	disown
	wait_for grep -q '^pid=' "$JOB/launcher.log"
	lp=$(log_pid "$JOB/launcher.log")
	wait_long grep -q '^pid=' "$JOB/rank0.log"
	wait_long grep -q '^lib=/' "$JOB/rank1.log" # the Python worker has imported fvbpf
	p0=$(printf '%s\n' "$(log_pid "$JOB/rank0.log")" "$(log_pid "$JOB/rank1.log")" | sort -n | head -n1)
	p1=$(printf '%s\n' "$(log_pid "$JOB/rank0.log")" "$(log_pid "$JOB/rank1.log")" | sort -n | tail -n1)
	run "$FVBPF" attach -p "$lp" -r training_train_one_step -o "$OUT"
	assert_failure
	assert_output "fvbpf: error: PID $lp (python3) has no fvbpf markers mapped and no libtorch_cpu; its children $p0, $p1 map the fvbpf markers: attach with --children (or -p $p0,$p1)"
	# one level up, the shell that started it: its descendants
	run "$FVBPF" attach -p "$wrapper" -r training_train_one_step -o "$OUT"
	assert_failure
	assert_output "fvbpf: error: PID $wrapper (bash) has no fvbpf markers mapped and no libtorch_cpu; its descendants $p0, $p1 map the fvbpf markers: attach with --children (or -p $p0,$p1)"
	# no descendant maps anything: the plain advice, no hint
	sleep 600 &
	WL_PIDS+=($!)
	run "$FVBPF" attach -p "${WL_PIDS[-1]}" -r training_train_one_step -o "$OUT"
	assert_failure
	assert_output --partial "link it with -lfvbpf"
	refute_output --partial "--children"
}

@test "launcher: the README's torchrun recipe, pgrep -o -f with --children, on a shell-wrapped launcher" {
	local tag=fvbpf_launcher_$$_$RANDOM pids
	# A wrapper shell whose command line holds the launcher's, as the shell
	# (or python wrapper) above torchrun does: pgrep -f finds two processes.
	bash -c "python3 $LAUNCHER $JOB --no-late --no-restart --steps 3 --tag $tag \
		>$JOB/launcher.log 2>&1; true" &
	WL_PIDS+=($!)
	disown
	wait_for grep -q '^pid=' "$JOB/launcher.log"
	pids=$(pgrep -f "job_launcher.py .*$tag")
	[ "$(wc -w <<<"$pids")" -eq 2 ]
	# the recipe without -o: told what to do in one line
	run "$FVBPF" attach -p $(pgrep -f "job_launcher.py .*$tag") --children \
		-r training_train_one_step -o "$OUT"
	[ "$status" -eq 2 ]
	assert_output --partial "several PIDs go in one -p"
	assert_output --partial "pgrep -o -f"
	# quoted, both PIDs go to -p (whitespace apart): parsed, then the hint
	run "$FVBPF" attach -p "$(pgrep -f "job_launcher.py .*$tag")" -r training_train_one_step -o "$OUT"
	assert_failure
	# (one worker or both may have mapped the markers by now)
	assert_output --regexp "maps? the fvbpf markers: attach with --children"
	# an empty pgrep: said so
	run "$FVBPF" attach -p "$(pgrep -f "no_such_job_$tag")" -r training_train_one_step -o "$OUT"
	[ "$status" -eq 2 ]
	assert_output --partial "-p got no PID"
	# the README's recipe
	"$FVBPF" attach -p $(pgrep -o -f "job_launcher.py .*$tag") --children \
		-r training_train_one_step -o "$OUT" -d 60 >"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	wait_long grep -q '^statuses=' "$JOB/launcher.log"
	wait_fvbpf 30
	cat "$FV_ERR" >&2
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$JOB_CHECK" "$OUT" rank0="$(wl_count train_one_step "$JOB/rank0.log")" \
		rank1="$(wl_count train_one_step "$JOB/rank1.log")"
	echo "$output"
	assert_success
	assert_line "ranks 0,1 restarts 0,0"
	assert_line "launcher listed: True"
}

@test "launcher: the hint names a child that maps libtorch_cpu (no markers)" {
	local py214=${FVBPF_TORCH_PY_214:-$BUILD/venv-torch214/bin/python3} lp p0 p1 p2
	[ -x "$py214" ] || { echo "no torch venv at $py214: run make venv" >&2; return 1; }
	start_workload "$JOB/launcher.log" python3 "$LAUNCHER" "$JOB" --no-late --no-restart \
		--steps 1 --torch "$py214"
	lp=$WL_PID
	wait_long grep -q '^pid=' "$JOB/rank2.log" # torch imported: libtorch_cpu mapped
	wait_long grep -q '^lib=/' "$JOB/rank1.log"
	p2=$(log_pid "$JOB/rank2.log")
	grep -q libtorch_cpu "/proc/$p2/maps"
	! grep -q libfvbpf "/proc/$p2/maps"
	read -r p0 p1 p2 <<<"$(printf '%s\n' "$(log_pid "$JOB/rank0.log")" "$(log_pid "$JOB/rank1.log")" \
		"$p2" | sort -n | tr '\n' ' ')"
	run "$FVBPF" attach -p "$lp" -r training_train_one_step -o "$OUT"
	assert_failure
	assert_output "fvbpf: error: PID $lp (python3) has no fvbpf markers mapped and no libtorch_cpu; its children $p0, $p1, $p2 map the fvbpf markers or libtorch_cpu: attach with --children (or -p $p0,$p1,$p2)"
	# torch operators off (--no-torch-ops): a torch child is nothing to trace
	run "$FVBPF" attach -p "$lp" --no-torch-ops -r training_train_one_step -o "$OUT"
	assert_failure
	assert_output --partial "map the fvbpf markers: attach with --children"
	refute_output --regexp "[^0-9]$p2([^0-9]|$)"
}

@test "launcher: -p LAUNCHER,WORKER: the launcher without RANK is named by PID, the worker keeps rank 0" {
	start_workload "$JOB/launcher.log" python3 "$LAUNCHER" "$JOB" --no-late --no-restart \
		--steps 3 --markers 2
	local lp=$WL_PID p0
	wait_long grep -q '^pid=' "$JOB/rank0.log"
	p0=$(log_pid "$JOB/rank0.log")
	start_fvbpf -p "$lp,$p0" -r training_train_one_step -o "$OUT"
	wait_long grep -q '^launcher steps=2$' "$JOB/launcher.log"
	wait_long grep -q '^counts' "$JOB/rank0.log"
	kill -INT "$FV_PID"
	wait_fvbpf 30
	cat "$FV_ERR" >&2
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$JOB_CHECK" "$OUT" rank0="$(wl_count train_one_step "$JOB/rank0.log")" "pid$lp=2"
	echo "$output"
	assert_success
	assert_line "ranks 0 restarts 0"
	run python3 -c '
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
print(sorted((p["pid"] == int(sys.argv[2]), p["rank"], p["rank_source"]) for p in m["processes"]))
' "$OUT" "$lp"
	assert_output "[(False, 0, 'RANK'), (True, -1, 'default')]"
}

@test "launcher: a launcher that maps the markers or torch, given alone without --children, is told of its ranks" {
	start_workload "$JOB/launcher.log" python3 "$LAUNCHER" "$JOB" --no-late --no-restart \
		--steps 1 --markers 1
	local lp=$WL_PID p0 p1
	wait_long grep -q '^pid=' "$JOB/rank0.log"
	wait_long grep -q '^lib=/' "$JOB/rank1.log"
	p0=$(printf '%s\n' "$(log_pid "$JOB/rank0.log")" "$(log_pid "$JOB/rank1.log")" | sort -n | head -n1)
	p1=$(printf '%s\n' "$(log_pid "$JOB/rank0.log")" "$(log_pid "$JOB/rank1.log")" | sort -n | tail -n1)
	start_fvbpf -p "$lp" -r training_train_one_step -o "$OUT"
	kill -INT "$FV_PID"
	wait_fvbpf 30
	[ "$FV_STATUS" -eq 0 ]
	assert_file_contains "$FV_ERR" "^fvbpf: warning: PID $lp (python3) has no rank in its environment and is traced alone as rank 0; its children $p0, $p1 map the fvbpf markers: attach with --children (or -p $p0,$p1)$"
}
