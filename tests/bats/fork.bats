#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Forked children of a traced process: never harmed, never traced unless
# fvbpf is pointed at them.  On kernel 6.18 a child forked while a nop5
# uprobe is optimised inherits a call into a trampoline it does not have;
# each of these crashed (SIGSEGV) before the control page.

load helpers

FORK=$BUILD/tests/fork_matrix
PY_FORK=$ROOT/tests/workloads/py_fork.py
TORCH_PY=${FVBPF_TORCH_PY:-$BUILD/venv-torch214/bin/python3}

setup() {
	common_setup
	export FVBPF_LIB=$BUILD/libfvbpf.so
}
teardown() { common_teardown; }

# Every CPU slice of every trace belongs to PID $2: children are not traced.
only_pid() { # dir pid
	python3 - "$1" "$2" <<'PY'
import glob, json, sys
pids = set()
for f in glob.glob(sys.argv[1] + "/trace_*.json"):
    for e in json.load(open(f))["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation":
            pids.add(e["pid"])
print("pids", sorted(pids) == [int(sys.argv[2])], len(pids))
PY
}

# fork_workload MODE...: start fork_matrix, attach until it says "done".
fork_run() {
	start_workload "$WL_LOG" "$FORK" "$@"
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step,training_forward
	wait_for grep -q '^done' "$WL_LOG"
	kill -INT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
}

@test "fork: children that call the markers while the parent is traced live, untraced" {
	plain_pass_only "the target's side (libfvbpf's fork handlers, not sanitized here)"
	fork_run fork --children 4
	assert_file_contains "$WL_LOG" '^children=4 bad=0$'
	run python3 "$CHECK" "$OUT"
	assert_success
	run only_pid "$OUT" "$WL_PID"
	assert_output "pids True 1"
}

@test "fork: children that call nothing of fvbpf live" {
	plain_pass_only "the target's side (libfvbpf's fork handlers, not sanitized here)"
	fork_run idle --children 4
	assert_file_contains "$WL_LOG" '^children=4 bad=0$'
}

@test "fork: raw clone() children, without fork handlers, live untraced" {
	plain_pass_only "the target's side (libfvbpf, not sanitized here)"
	fork_run clone --children 4
	assert_file_contains "$WL_LOG" '^children=4 bad=0$'
	run only_pid "$OUT" "$WL_PID"
	assert_output "pids True 1"
}

@test "fork: children forked while attached call the markers after fvbpf left" {
	plain_pass_only "the target's side (libfvbpf's fork handlers, not sanitized here)"
	start_workload "$WL_LOG" "$FORK" late --children 4
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step -d 0.5
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	wait_for grep -q '^done' "$WL_LOG"
	assert_file_contains "$WL_LOG" '^parent saw detach$'
	assert_file_contains "$WL_LOG" '^children=4 bad=0$'
}

@test "fork: a child every 2 ms through three attaches and detaches" {
	start_workload "$WL_LOG" "$FORK" storm
	local i
	for i in 1 2 3; do
		start_fvbpf -p "$WL_PID" -o "$OUT/$i" -r training_train_one_step -d 0.4
		wait_fvbpf
		[ "$FV_STATUS" -eq 0 ]
	done
	kill -TERM "$WL_PID"
	wait_for grep -q '^done' "$WL_LOG"
	assert_file_contains "$WL_LOG" '^children=[0-9]* bad=0$'
	# the storm really forked throughout
	[ "$(sed -n 's/^children=\([0-9]*\).*/\1/p' "$WL_LOG")" -gt 50 ]
	for i in 1 2 3; do
		run python3 "$CHECK" "$OUT/$i"
		assert_success
	done
}

@test "fork: a child forked while its parent is traced can be traced itself" {
	start_workload "$WL_LOG" "$FORK" serve
	start_fvbpf -p "$WL_PID" -o "$OUT/parent" -r training_train_one_step
	local parent_fv=$FV_PID child
	wait_for grep -q '^child=' "$WL_LOG"
	child=$(sed -n 's/^child=//p' "$WL_LOG")
	# its probe functions carry the parent's patch: fvbpf restores them
	run "$FVBPF" attach -p "$child" -o "$OUT/child" -r training_train_one_step -d 0.5
	assert_success
	assert_output --partial "PID $child was forked from a process with fvbpf markers; its stale probe patches were undone"
	run python3 "$CHECK" "$OUT/child"
	assert_success
	refute_line "segments=0 incomplete=0"
	run only_pid "$OUT/child" "$child"
	assert_output "pids True 1"
	kill -0 "$child"
	FV_PID=$parent_fv
	kill -INT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	kill -TERM "$WL_PID"
	wait_for grep -q '^done' "$WL_LOG"
	assert_file_contains "$WL_LOG" '^children=1 bad=0$'
	run python3 "$CHECK" "$OUT/parent"
	assert_success
	run only_pid "$OUT/parent" "$WL_PID"
	assert_output "pids True 1"
}

py_fork_run() { # python mode
	start_workload "$WL_LOG" "$1" "$PY_FORK" "$2"
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step,training_forward
	wait_for grep -q '^done' "$WL_LOG" || wait_for grep -q '^done' "$WL_LOG" ||
		{ cat "$WL_LOG" >&2; return 1; }
	kill -INT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	run only_pid "$OUT" "$WL_PID"
	assert_output "pids True 1"
}

@test "fork: python os.fork() children live, untraced" {
	plain_pass_only "the target's side (libfvbpf's fork handlers, not sanitized here)"
	py_fork_run python3 os_fork
	assert_file_contains "$WL_LOG" '^children=4 bad=0$'
}

@test "fork: python multiprocessing (fork) workers live, untraced" {
	plain_pass_only "the target's side (libfvbpf's fork handlers, not sanitized here)"
	py_fork_run python3 multiprocessing
	assert_file_contains "$WL_LOG" '^children=8 bad=0$'
}

@test "fork: a torch DataLoader with two fork workers, two epochs" {
	plain_pass_only "the target's side (libfvbpf's fork handlers, not sanitized here)"
	[ -x "$TORCH_PY" ] || fail "no PyTorch venv at $TORCH_PY: run 'make venv'"
	py_fork_run "$TORCH_PY" dataloader
	# two workers per epoch, two epochs
	assert_file_contains "$WL_LOG" '^children=4 bad=0$'
}
