#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# What fvbpf_attached() promises, and one fvbpf per process.
# Serial (tests/run-bats.sh runs it alone): every fvbpf that starts sweeps
# the locks of dead ones from /run/fvbpf, and the lock test must find its
# killed fvbpf's lock still there.
# bats file_tags=serial

load helpers

PY_TRAINER=$ROOT/tests/workloads/py_trainer.py

setup() {
	common_setup
	export FVBPF_LIB=$BUILD/libfvbpf.so
}
teardown() { common_teardown; }

traces_in() { find "$1" -maxdepth 1 -name 'trace_*' | wc -l; }
traces_more_than() { [ "$(traces_in "$1")" -gt "$2" ]; }

# No trace of the run is marked as started before the attach.
none_before_attach() {
	! grep -l '"started_before_attach":true' "$1"/trace_*.json
}

# fvbpf must stop on its own right after the N-th segment while the
# workload idles on (it would otherwise only stop when the workload exits).
n_segments_after_attached() { # N workload...
	local n=$1
	shift
	start_workload "$WL_LOG" "$@"
	start_fvbpf -p "$WL_PID" -o "$OUT" -n "$n" -r training_train_one_step
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	kill -0 "$WL_PID" # still idling: fvbpf did not wait for its exit
	assert_file_contains "$WL_LOG" '^saw attached$'
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=$n incomplete=0"
	run none_before_attach "$OUT"
	assert_success
	[ "$(ls "$OUT"/trace_*.json | wc -l)" -eq "$n" ]
}

@test "attached() turns 1 only once probes are live: -n N gets exactly the N steps that follow" {
	n_segments_after_attached 5 "$TRAINER" --steps 5 --step-ms 4 --wait-attached --idle
}

@test "python: attached() turns True only once probes are live: -n N gets the N steps" {
	plain_pass_only "the C test's fvbpf code; the binding is the target's side"
	n_segments_after_attached 4 python3 "$PY_TRAINER" --steps 4 --step-ms 8 --wait-attached --idle
}

@test "attached() is 0 again as soon as fvbpf detaches" {
	start_workload "$WL_LOG" "$TRAINER" --steps 1 --step-ms 4 --wait-attached --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step -d 0.3
	wait_fvbpf
	local lines
	lines=$(wc -l <"$WL_LOG")
	wait_for bash -c "[ \$(wc -l <'$WL_LOG') -gt $((lines + 1)) ]"
	[ "$(tail -n 1 "$WL_LOG")" = "attached=0" ]
}

@test "a second fvbpf on a traced PID is refused, naming the first; the first is unharmed" {
	start_workload "$WL_LOG" "$TRAINER" --steps 0 --step-ms 4 --wait-attached
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step
	local first=$FV_PID
	run "$FVBPF" attach -p "$WL_PID" -o "$OUT/second" -r training_train_one_step -d 1
	assert_failure 1
	assert_output --partial "PID $WL_PID is already traced by another fvbpf (PID $first): stop that one first"
	[ "$(grep -c 'fvbpf: error' <<<"$output")" -eq 1 ]
	assert_file_not_exists "$OUT/second/manifest.json"
	# the first goes on tracing, every step a whole segment
	local before
	wait_for traces_more_than "$OUT" 0
	before=$(traces_in "$OUT")
	wait_for traces_more_than "$OUT" "$before"
	kill -INT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line --regexp '^segments=[0-9]+ incomplete=1$'
	# and once it is gone, a new one may attach
	start_fvbpf -p "$WL_PID" -o "$OUT/third" -r training_train_one_step -d 0.3
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	[ -z "$(ls /run/fvbpf/ | grep "^pid$WL_PID-")" ]
}

@test "a lock left by a killed fvbpf does not block the next one" {
	start_workload "$WL_LOG" "$TRAINER" --steps 0 --step-ms 4 --wait-attached
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step
	kill -KILL "$FV_PID"
	wait "$FV_PID" 2>/dev/null || true
	FV_PID=
	ls /run/fvbpf/ | grep -q "^pid$WL_PID-"
	start_fvbpf -p "$WL_PID" -o "$OUT/next" -r training_train_one_step -d 0.3
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT/next"
	assert_success
	# and the killed one's lock file was swept, not left to pile up
	[ -z "$(ls /run/fvbpf/ | grep "^pid$WL_PID-")" ]
}

@test "one fvbpf per process also without markers (--window on a plain process)" {
	start_workload "$WL_LOG" bash -c 'echo pid=$$; exec sleep 30'
	start_fvbpf -p "$WL_PID" -o "$OUT" --window 0.2
	local first=$FV_PID
	run "$FVBPF" attach -p "$WL_PID" -o "$OUT/second" --window 0.2 -d 0.5
	assert_failure 1
	assert_output --partial "PID $WL_PID is already traced by another fvbpf (PID $first)"
	kill -INT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
}
