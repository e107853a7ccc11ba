#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# `fvbpf attach --inject` must never harm its target: fvbpf killed midway,
# a tiny stack, seccomp, signals (held, queued, fatal), blocking calls and
# their restart, an exec during the injection, the register state.  The
# targets (tests/workloads/c/inject_victim.c, inject_target.c) are started
# without fvbpf and check their own behaviour as they run.
# This file holds the tests with a deadline; the blocking calls that wait
# only on conditions are inject_blocked.bats, beside other files.

# Serial (tests/run-bats.sh runs it alone): kills at 5-70 ms into an
# injection, signals sent while fvbpf retries for 2 s or while it stalls
# 0.5-3 s, targets that tick for 2-3 s, sleeps of 5 s that fvbpf must
# be done within, timed against the target's own clock.
# bats file_tags=serial

load helpers
load inject_helpers
load inject_harm_helpers

# ---- 1. fvbpf killed during the injection ----

@test "fvbpf killed at random points of the injection (30 kills, 16 busy threads): every target survives, nothing left" {
	[ -x "$INJ" ] || skip "inject_target not built (make)"
	run timeout 170 python3 "$ROOT/tests/lib/inject_kill_loop.py" --fvbpf "$FVBPF" \
		--target "$INJ" --rounds 10 --parallel 3 --dir "$BATS_TEST_TMPDIR/kill"
	echo "$output"
	assert_success
	assert_output --partial "30 kills in"
}

# ---- 2. a small stack ----

@test "main thread on an 8 KiB stack with 3 KiB free: injected (the call on fvbpf's own stack), output intact" {
	start_victim "$WL_LOG" --mode small-stack --count 300
	wait_for grep -q '^small-stack running' "$WL_LOG"
	run "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 0.5 -o "$OUT"
	assert_success
	assert_output --partial "libfvbpf.so injected"
	# the deadline: 3 s of ticks, generous for a slow machine
	wait_long 30 ended
	run cat "$WL_LOG"
	assert_line "exit=0"
	assert_line "done ticks=300"
	assert_line "small-stack ok"
	run ticks_ok "$WL_LOG" 300
	assert_success
	[ "$(mf "p['agent_library']['how']")" = injected ]
}

# ---- 3. seccomp ----

# seccomp_refused MODE: refused in one line, the target untouched.
seccomp_refused() {
	start_victim "$WL_LOG" --mode "$1" --count 200
	wait_for grep -q '^seccomp on' "$WL_LOG"
	grep -q '^Seccomp:[[:space:]]*[12]' "/proc/$WL_PID/status"
	"$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 0.3 -o "$OUT" >"$FV_OUT" 2>"$FV_ERR" ||
		{ cat "$FV_ERR"; false; }
	cat "$FV_ERR"
	grep -q -- "--inject refused: it runs under seccomp" "$FV_ERR"
	# one line (the summary on stdout may say it again)
	[ "$(grep -c seccomp "$FV_ERR")" -eq 1 ]
	[ "$(mf "p['agent_library']['how']")" = refused ]
	[ "$(injected_maps "$WL_PID")" -eq 0 ]
	run compgen -G "/dev/shm/.fvbpf-inject-$WL_PID-*"
	assert_failure
	wait_long 30 ended
	run cat "$WL_LOG"
	assert_line "exit=0"
	assert_line "done ticks=200"
	run ticks_ok "$WL_LOG" 200
	assert_success
}

@test "seccomp strict mode (read/write/exit only): refused in one line, target untouched" {
	seccomp_refused seccomp-strict
}

@test "seccomp allow-list filter (anything else kills the process): refused in one line, target untouched" {
	plain_pass_only "the seccomp check of the strict-mode test"
	seccomp_refused seccomp-filter
}

# ---- 4. signals while fvbpf retries and gives up ----

@test "main thread always inside libc: gives up in few stops, SIGUSR1 x3 all handled while it retries" {
	start_victim "$WL_LOG" --mode libc-spin
	wait_for grep -q '^spinning' "$WL_LOG"
	bg_fvbpf "$FVBPF" attach --inject --inject-timeout 2 -p "$WL_PID" --window 0.2 -d 0.3 -o "$OUT"
	wait_traced "$WL_PID"
	# one at a time: a second SIGUSR1 pending with the first is one signal
	local n
	for n in 1 2 3; do
		kill -USR1 "$WL_PID"
		wait_for grep -qx "usr1 $n" "$WL_LOG"
	done
	# handled while fvbpf still retried (not when it let go)
	run grep -- "--inject" "$FV_ERR"
	assert_failure
	wait_fvbpf
	cat "$FV_ERR"
	[ "$FV_STATUS" -eq 0 ]
	grep -q "inside libc or the loader" "$FV_ERR"
	run grep "uninterruptible" "$FV_ERR" "$FV_OUT"
	assert_failure
	[ "$(injected_maps "$WL_PID")" -eq 0 ]
	# bounded stops: backs off instead of stopping it thousands of times
	run mf "p['agent_library'].get('tries', p['agent_library'].get('stops'))"
	echo "stops: $output"
	[ "$output" -ge 1 ]
	[ "$output" -le 100 ]
	kill -USR2 "$WL_PID"
	wait_long 20 ended
	run cat "$WL_LOG"
	assert_line "done sigusr1=3"
	assert_line "exit=0"
}

@test "SIGTERM while fvbpf retries: the target dies of it at once, fvbpf ends" {
	start_victim "$WL_LOG" --mode libc-spin
	wait_for grep -q '^spinning' "$WL_LOG"
	bg_fvbpf "$FVBPF" attach --inject --inject-timeout 8 -p "$WL_PID" --window 0.2 -d 0.3 -o "$OUT"
	wait_traced "$WL_PID"
	kill -TERM "$WL_PID"
	# within 3 s, while fvbpf would retry for 8
	wait_long 3 ended
	grep -qx "exit=143" "$WL_LOG"
	wait_long 30 fv_gone
	wait_fvbpf
	cat "$FV_ERR"
	[ "$FV_STATUS" -le 1 ]
}

# ---- 5. held signals keep their siginfo ----

@test "signals queued while the target is stopped: SIGUSR1 keeps value, sender, SI_QUEUE; 43 RT signals all arrive in order" {
	[ -x "$FVT" ] || skip "no $FVT"
	start_victim "$WL_LOG" --mode siginfo --count 300
	FVBPF_TEST_INJECT_STALL_MS=500 bg_fvbpf "$FVT" attach --inject -p "$WL_PID" --window 0.2 \
		-d 0.5 -o "$OUT"
	wait_for stalled "$WL_PID"
	run "$VIC" --send "$WL_PID" USR1 1234 1 RTMIN+1 0 40 RTMIN+2 100 1 RTMIN+3 200 1 RTMIN+4 300 1
	assert_success
	assert_line sent
	local sender
	sender=$(sed -n 's/^sender=//p' <<<"$output")
	# sent while it was stopped, else this proves nothing
	grep -q "^State:.*t (tracing stop)" "/proc/$WL_PID/status"
	wait_fvbpf
	cat "$FV_ERR"
	[ "$FV_STATUS" -eq 0 ]
	grep -q "libfvbpf.so injected" "$FV_ERR"
	wait_long 20 ended
	run cat "$WL_LOG"
	assert_line "exit=0"
	assert_line "usr1 count=1 value=1234 code=queue pid=$sender"
	assert_line "rt1 count=40 value=39 code=queue pid=$sender"
	assert_line "rt1 values in order"
	assert_line "rt2 count=1 value=100 code=queue pid=$sender"
	assert_line "rt3 count=1 value=200 code=queue pid=$sender"
	assert_line "rt4 count=1 value=300 code=queue pid=$sender"
	run ticks_ok "$WL_LOG" 300
	assert_success
}

# ---- 8. exec during the injection ----

@test "a thread execs while the target is stopped for the injection: one clear line, no hang, the new program unharmed" {
	[ -x "$FVT" ] || skip "no $FVT"
	start_victim "$WL_LOG" --mode exec-thread --go "$GO" --count 800
	wait_for grep -q '^exec-thread ready' "$WL_LOG"
	FVBPF_TEST_INJECT_STALL_MS=3000 bg_fvbpf "$FVT" attach --inject -p "$WL_PID" --window 0.2 \
		-d 1 -o "$OUT"
	wait_for stalled "$WL_PID"
	touch "$GO"
	wait_for grep -q "^exec'd" "$WL_LOG"
	wait_long 30 fv_gone
	wait_fvbpf
	cat "$FV_ERR"
	[ "$FV_STATUS" -le 1 ]
	grep -q "the process exec'd during the injection" "$FV_ERR"
	# the new program runs on, untouched
	wait_long 30 ended
	run cat "$WL_LOG"
	assert_line "done ticks=800"
	assert_line "exit=0"
	run ticks_ok "$WL_LOG" 800
	assert_success
}

# ---- 9. registers ----

regs_preserved() {
	start_victim "$WL_LOG" --mode regs --ms 3000
	wait_for grep -q '^regs spinning' "$WL_LOG"
	run fv_inject attach --inject -p "$WL_PID" --window 0.2 -d 0.3 -o "$OUT"
	assert_success
	assert_output --partial "libfvbpf.so injected"
	[ "$(injected_maps "$WL_PID")" -eq 1 ]
	wait_long 30 ended
	run cat "$WL_LOG"
	assert_line "regs ok"
	assert_line "exit=0"
	refute_output --partial ERROR
}

@test "registers preserved: every general register, xmm/ymm/zmm, MXCSR unchanged across the injection" {
	regs_preserved
}

# ---- 7. blocking calls, the sleeps: 0 after the full 5 s (not less, not
# restarted from the start) ----

@test "blocked in nanosleep 5 s: returns 0 after the full 5 s" { plain_pass_only "$ONE_BLOCKED"; sleep_call nanosleep; }
@test "blocked in clock_nanosleep 5 s: returns 0 after the full 5 s" { plain_pass_only "$ONE_BLOCKED"; sleep_call clock-nanosleep; }

# ---- the worker gone mid-call: the code in the target returns by itself ----

# The ASan pass leaves these to the plain pass (plain_pass_only): the code
# that returns by itself runs in the target, and fvbpf's side is the
# registers test's.
@test "worker gone mid-call: registers, xmm/ymm/zmm and MXCSR restored by the code itself" {
	plain_pass_only "$ABANDONED"
	ABANDON=1 regs_preserved
}
@test "worker gone mid-call: nanosleep 5 s returns 0 after the full 5 s (restart_syscall)" { plain_pass_only "$ABANDONED"; ABANDON=1 sleep_call nanosleep; }
