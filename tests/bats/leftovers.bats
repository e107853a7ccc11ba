#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# What a killed fvbpf leaves behind, and that nothing of a test hook is in
# the production binary.

load helpers

setup() { common_setup; }
teardown() {
	local rc=0
	[ -n "${LIVE_PID:-}" ] && kill -KILL "$LIVE_PID" 2>/dev/null
	common_teardown || rc=$?
	return $rc
}

idle_trainer() { # log
	start_workload "$1" "$TRAINER" --steps 0 --step-ms 10 --idle
}

@test "leftovers: a killed fvbpf's temporary files go, a live fvbpf's stay" {
	local wl_live wl_next dead dead_tmp live_tmp
	idle_trainer "$BATS_TEST_TMPDIR/live.log"
	wl_live=$WL_PID
	idle_trainer "$BATS_TEST_TMPDIR/next.log"
	wl_next=$WL_PID
	mkdir -p "$OUT"

	# A live fvbpf writing into the same directory.
	"$FVBPF" attach -p "$wl_live" -r training_forward -o "$OUT" \
		>/dev/null 2>"$BATS_TEST_TMPDIR/live.err" &
	LIVE_PID=$!
	wait_for grep -q 'fvbpf: tracing' "$BATS_TEST_TMPDIR/live.err"

	# An fvbpf killed with SIGKILL: its PID no longer runs.
	"$FVBPF" attach -p "$wl_next" -r training_forward -o "$BATS_TEST_TMPDIR/killed" \
		>/dev/null 2>"$BATS_TEST_TMPDIR/killed.err" &
	dead=$!
	wait_for grep -q 'fvbpf: tracing' "$BATS_TEST_TMPDIR/killed.err"
	kill -KILL "$dead"
	wait "$dead" || true
	dead_tmp=.trace_rank0_segment0003_training_forward.json.tmp.$dead
	echo partial >"$OUT/$dead_tmp"

	# (planted once the live one runs: it cleans up at its start too)
	live_tmp=.summary_rank0_segment0000_training_forward.txt.tmp.$LIVE_PID
	echo partial >"$OUT/$live_tmp"

	# (--overwrite: the live one's segment files there are an earlier attach's)
	"$FVBPF" attach -p "$wl_next" -r training_forward -o "$OUT" -d 0.3 --overwrite >"$FV_OUT" 2>"$FV_ERR"
	assert_file_not_exists "$OUT/$dead_tmp"
	assert_file_exists "$OUT/$live_tmp"
	grep -qx "fvbpf: removed 1 temporary file left in $OUT by fvbpf PID $dead, which no longer runs" "$FV_ERR"
	refute grep -qw "$LIVE_PID" "$FV_ERR"
	kill -INT "$LIVE_PID"
	wait "$LIVE_PID"
	LIVE_PID=
	rm -f "$OUT/$live_tmp"
}

@test "leftovers: no test override of the BTF path in the production binary" {
	run grep -a -c FVBPF_BTF_PATH "$FVBPF"
	assert_output 0
}
