#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# End to end on the Python workload: the ctypes binding, the same library.

load helpers

PY_TRAINER=$ROOT/tests/workloads/py_trainer.py

setup() {
	common_setup
	export FVBPF_LIB=$BUILD/libfvbpf.so
}
teardown() { common_teardown; }

@test "python: segments and annotations equal the workload's own counts" {
	start_workload "$WL_LOG" python3 "$PY_TRAINER" --steps 4 --step-ms 12 --wait-signal --idle
	grep -q "^lib=$FVBPF_LIB" "$WL_LOG"
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 4 \
		-r training_train_one_step,training_forward,training_backward,training_dataloader,training_optimizer
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	wait_for grep -q '^counts' "$WL_LOG"
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=4 incomplete=0"
	[ "$(chk_count 'region training_train_one_step' "$output")" = "$(wl_count train_one_step)" ]
	[ "$(chk_count 'region training_forward' "$output")" = "$(wl_count forward)" ]
	[ "$(chk_count 'region training_backward' "$output")" = "$(wl_count backward)" ]
	[ "$(chk_count 'region training_dataloader' "$output")" = "$(wl_count dataloader)" ]
	[ "$(chk_count 'region training_optimizer' "$output")" = "$(wl_count optimizer)" ]
	[ "$(wl_count forward)" -eq 4 ]
	refute_line --partial "region training_callbacks"
}

@test "python: the job keeps running after detach, attached() back to False" {
	start_workload "$WL_LOG" python3 "$PY_TRAINER" --steps 2 --step-ms 6 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 2 -r training_train_one_step
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	wait_for grep -q '^attached=1' "$WL_LOG"
	local lines
	lines=$(wc -l <"$WL_LOG")
	wait_for bash -c "[ \$(wc -l <'$WL_LOG') -gt $((lines + 2)) ]"
	kill -0 "$WL_PID"
	[ "$(tail -n 1 "$WL_LOG")" = "attached=0" ]
}

@test "python: attached mid-region, the open step is a segment started before attach" {
	start_workload "$WL_LOG" python3 "$PY_TRAINER" --steps 1 --step-ms 6 --hang-in-region
	wait_for grep -q '^hanging' "$WL_LOG"
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step,training_forward
	kill -TERM "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=1 incomplete=0"
	assert_line "region training_forward=1"
	run python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['otherData']['started_before_attach'])" \
		"$OUT/trace_rank0_segment0000_training_train_one_step.json"
	assert_output "True"
	run grep -c "unbalanced" "$FV_ERR"
	assert_output "0"
}
