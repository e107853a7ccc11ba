#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# A first attach as a new user makes it (issue 24): a PyTorch job without
# markers and no -r, a --step-by glob that matches nothing, a CPU-only job
# of the CUDA wheel.  Real PyTorch (tests/workloads/torch_train.py).

load helpers

TRAIN=$ROOT/tests/workloads/torch_train.py

setup() {
	common_setup
	if [ ! -x "$PY214" ]; then
		echo "no torch venv at $PY214: run \`make venv\`" >&2
		return 1
	fi
}
teardown() {
	touch "$BATS_TEST_TMPDIR/exit"
	common_teardown
}

# start_torch STEPS: the loop, waiting for $BATS_TEST_TMPDIR/go.
start_torch() {
	start_workload "$WL_LOG" "$PY214" "$TRAIN" run "$BATS_TEST_TMPDIR" "$1"
}

# go_until_done: let the loop go and wait for it to be done.
go_until_done() {
	local i
	touch "$BATS_TEST_TMPDIR/go"
	for i in $(seq 600); do
		[ -e "$BATS_TEST_TMPDIR/done" ] && break
		sleep 0.1
	done
	[ -e "$BATS_TEST_TMPDIR/done" ]
}

@test "no -r on a PyTorch job: one segment per training step, and fvbpf says so" {
	start_torch 6
	FASTVIDEO_TORCH_PROFILE_REGIONS= start_fvbpf -p "$WL_PID" -o "$OUT" -n 3
	grep -q "no -r, --step-by or --window given: one segment per training step, from the end of one 'Optimizer.step\*' scope" "$FV_ERR"
	go_until_done
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=3 incomplete=0"
	assert_file_exists "$OUT/trace_rank0_segment0002_step.json"
	# stderr is no terminal here: no progress line
	! grep -q 'events/s' "$FV_ERR"
	! grep -q $'\r' "$FV_ERR"
}

@test "--step-by that matches no scope: the scope names seen, and that matching is case-sensitive" {
	start_torch 4
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by 'optimizer.step*'
	go_until_done
	kill -INT "$FV_PID"
	wait_fvbpf 30
	[ "$FV_STATUS" -eq 0 ]
	grep -q "^fvbpf: warning: --step-by 'optimizer.step\*' matched none of [0-9]* torch scopes (matching is case-sensitive, fnmatch globs); names seen: .*'Optimizer.step#AdamW.step'" "$FV_ERR"
	! grep -q "region 'step' was never entered" "$FV_ERR"
}

@test "a CPU-only job of the CUDA wheel: no --inject advice, no complaint about the agent" {
	plain_pass_only "the first test's fvbpf code; checks that two messages are absent"
	start_torch 4
	grep -q 'libcudart' "/proc/$WL_PID/maps" # the CUDA wheel maps the runtime
	! grep -q 'libcuda\.so' "/proc/$WL_PID/maps"
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by 'Optimizer.step*' -n 1
	go_until_done
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	! grep -q 'add --inject' "$FV_ERR"
	! grep -q 'no word from the in-process agent' "$FV_ERR"
	python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["processes"][0]; a = p["gpu"]["activity"]; assert a.startswith("none: the process has not initialised CUDA"), a' "$OUT/manifest.json"
}

@test "--schedule wait=1,warmup=1,active=2,repeat=2: torch.profiler's steps 2, 3, 6 and 7 written, then done" {
	plain_pass_only "the schedule is ASan test_schedule's; the segments are the first test's"
	start_torch 14
	start_fvbpf -p "$WL_PID" -o "$OUT" --schedule wait=1,warmup=1,active=2,repeat=2
	go_until_done
	wait_fvbpf 60 # stops by itself after the 8th segment
	[ "$FV_STATUS" -eq 0 ]
	run bash -c "ls '$OUT' | grep '^trace_' | tr '\n' ' '"
	assert_output "trace_rank0_segment0002_step.json trace_rank0_segment0003_step.json trace_rank0_segment0006_step.json trace_rank0_segment0007_step.json "
	grep -q -- '--schedule: 4 segments not written' "$FV_OUT"
	python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["processes"][0]; assert (p["segments"], p["segments_skipped_by_schedule"]) == (4, 4), p' "$OUT/manifest.json"
}

@test "--schedule: malformed specs and -n together are usage errors" {
	local spec
	for spec in active=0 wait=1 foo=1 wait=x,active=1 active=1, ''; do
		run "$FVBPF" attach -p $$ --schedule "$spec" -o "$OUT"
		assert_failure 2
		assert_output --partial "invalid --schedule"
	done
	run "$FVBPF" attach -p $$ --schedule active=1 -n 3 -o "$OUT"
	assert_failure 2
	assert_output --partial "--schedule and -n both say when to stop"
}

@test "a progress line on a terminal: segments written, events/s, drops" {
	start_torch 8
	# a pseudo-terminal, as a person's shell has (util-linux script)
	script -qefc "'$FVBPF' attach -p $WL_PID -o '$OUT' -n 4 2>&1" "$BATS_TEST_TMPDIR/tty.log" \
		>/dev/null 2>&1 &
	FV_PID=$!
	wait_long grep -q 'tracing 1 region' "$BATS_TEST_TMPDIR/tty.log"
	# the line comes once a second: the first before the steps, which
	# may all be over (and fvbpf gone) within that second
	wait_long grep -q $'\r\e\\[Kfvbpf: [0-9]* segments\\? written, [0-9]* events/s, 0 dropped, 1 process (Ctrl-C to stop)' \
		"$BATS_TEST_TMPDIR/tty.log"
	go_until_done
	wait_fvbpf 60
	grep -q 'wrote 4 segments' "$BATS_TEST_TMPDIR/tty.log"
}
