#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# `fvbpf attach --inject` must never harm its target: fvbpf killed midway,
# a tiny stack, seccomp, signals (held, queued, fatal), blocking calls and
# their restart, an exec during the injection, the register state.  The
# targets (tests/workloads/inject_victim.c, inject_target.c) are started
# without fvbpf and check their own behaviour as they run.

# Serial (tests/run-bats.sh runs it alone): kills at 5-70 ms into an
# injection, signals sent while fvbpf retries for 2 s, 16 blocked calls
# timed against the target's own clock.
# bats file_tags=serial

load helpers
load inject_helpers

INJ=$BUILD/tests/inject_target
VIC=$BUILD/tests/inject_victim
# The same fvbpf with the test hooks (the stall knob), plain or ASan.
FVT=$(dirname "$FVBPF")/fvbpf-test

setup() {
	common_setup
	[ -x "$VIC" ] || skip "inject_victim not built (make)"
	GO=$BATS_TEST_TMPDIR/go
}

teardown() {
	local st=0 id
	common_teardown || st=$?
	# SysV objects of a victim killed before it removed them
	if [ -f "${WL_LOG:-}" ]; then
		for id in $(sed -n 's/^ipc sem //p' "$WL_LOG"); do ipcrm -s "$id" 2>/dev/null; done
		for id in $(sed -n 's/^ipc msg //p' "$WL_LOG"); do ipcrm -q "$id" 2>/dev/null; done
	fi
	return $st
}

# start_victim LOG ARGS...: inject_victim ARGS in the background, WL_PID
# its PID; LOG ends with "exit=STATUS" once it ended (its shell's $?).
start_victim() {
	local log=$1
	shift
	start_workload "$log" sh -c '"$0" "$@"; echo "exit=$?"' "$VIC" "$@"
	WL_PIDS+=("$WL_PID")
}

# wait_long SECONDS CMD...: wait_for with a longer bound.
wait_long() {
	local i n=$(($1 * 20))
	shift
	for i in $(seq "$n"); do
		"$@" && return 0
		sleep 0.05
	done
	echo "timed out waiting for: $*" >&2
	return 1
}


# fvbpf in the background: FV_PID, its output in FV_OUT and FV_ERR.
bg_fvbpf() { # BINARY ARGS...
	"$@" >"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
}

traced() { grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$1/status"; }
# wait_traced PID: polled every 10 ms (the tracer may let go between tries).
wait_traced() {
	local i
	for i in $(seq 2000); do
		traced "$1" && return 0
		sleep 0.01
	done
	echo "PID $1 never traced" >&2
	return 1
}
# In tracing stop, still so 50 ms later: the stall, not a passing stop.
stalled() {
	grep -q "^State:.*t (tracing stop)" "/proc/$1/status" && sleep 0.05 &&
		grep -q "^State:.*t (tracing stop)" "/proc/$1/status"
}
ended() { grep -q '^exit=' "$WL_LOG"; }
fv_gone() { ! kill -0 "$FV_PID" 2>/dev/null; }

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

# ---- 6. the signal mask and SIGSEGV's disposition ----

# own_sigs PID: SigBlk and SigIgn without glibc's signals 32 and 33.
own_sigs() {
	local k v
	while read -r k v; do
		case $k in
		SigBlk: | SigIgn:) printf '%s %016x\n' "$k" $((0x$v & ~(3 << 31))) ;;
		esac
	done <"/proc/$1/status"
}

@test "all signals blocked, SIGSEGV ignored: SigBlk and SigIgn exactly as before, still receives" {
	start_victim "$WL_LOG" --mode sigmask
	wait_for grep -q '^ready' "$WL_LOG"
	local before after
	# Signals 32 and 33 are glibc's own (SIGCANCEL, SIGSETXID): a program
	# cannot block or set them, and glibc installs its SIGSETXID handler
	# and unblocks both when a process's first thread is created (the
	# injected library's watch thread): only the program's own count.
	before=$(own_sigs "$WL_PID")
	run "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 0.3 -o "$OUT"
	assert_success
	assert_output --partial "libfvbpf.so injected"
	[ "$(injected_maps "$WL_PID")" -eq 1 ]
	after=$(own_sigs "$WL_PID")
	echo "before: $before"
	echo "after:  $after"
	[ "$before" = "$after" ]
	kill -USR1 "$WL_PID"
	wait_for grep -qx "got usr1 1" "$WL_LOG"
	kill -USR2 "$WL_PID"
	wait_long 20 ended
	run cat "$WL_LOG"
	assert_line "sigmask ok"
	assert_line "done usr1=1"
	assert_line "exit=0"
	refute_output --partial ERROR
}

# ---- 7. blocking calls: no spurious EINTR, whatever the restart code ----

# in_call PID NRS: the main thread asleep in one of the syscalls NRS (a,b,c).
in_call() {
	local nr rest
	read -r nr rest <"/proc/$1/syscall" || return 1
	[[ ",$2," == *",$nr,"* ]] && grep -q "^State:.*S (sleeping)" "/proc/$1/status"
}

# blocked_call CALL [ARGS]: the main thread blocked in CALL while injected;
# it returns its normal result once the test makes the event happen (the
# file $GO), well after fvbpf is done.
# The attach of the matrix: plain fvbpf, or with ABANDON=1 the test build
# that lets go of the target right after starting our code, as a killed
# worker would: the code must then put the thread back by itself.
fv_inject() {
	if [ -n "${ABANDON:-}" ]; then
		[ -x "$FVT" ] || skip "no $FVT"
		env FVBPF_TEST_INJECT_ABANDON=1 "$FVT" "$@"
	else
		"$FVBPF" "$@"
	fi
}

blocked_call() {
	local call=$1 nrs
	shift
	start_victim "$WL_LOG" --mode "wait-$call" --go "$GO" "$@"
	wait_for grep -q "^waiting $call nr=" "$WL_LOG"
	nrs=$(sed -n "s/^waiting $call nr=//p" "$WL_LOG")
	wait_for in_call "$WL_PID" "$nrs"
	run fv_inject attach --inject -p "$WL_PID" --window 0.2 -d 0.3 -o "$OUT"
	assert_success
	assert_output --partial "libfvbpf.so injected"
	# nothing returned yet: the call is still waiting for its event
	run cat "$WL_LOG"
	refute_output --partial ERROR
	refute_line "$call ok"
	refute_line --partial "exit="
	[ "$(injected_maps "$WL_PID")" -eq 1 ]
	touch "$GO"
	wait_long 20 ended
	run cat "$WL_LOG"
	assert_line "$call ok"
	assert_line "exit=0"
	refute_output --partial ERROR
}

# sleep_call CALL: the same for a sleep of 5 s: 0 after the full 5 s
# (not less, not restarted from the start).
sleep_call() {
	local call=$1 nrs
	start_victim "$WL_LOG" --mode "wait-$call" --ms 5000
	wait_for grep -q "^waiting $call nr=" "$WL_LOG"
	nrs=$(sed -n "s/^waiting $call nr=//p" "$WL_LOG")
	wait_for in_call "$WL_PID" "$nrs"
	run fv_inject attach --inject -p "$WL_PID" --window 0.2 -d 0.3 -o "$OUT"
	assert_success
	assert_output --partial "libfvbpf.so injected"
	run cat "$WL_LOG"
	refute_output --partial ERROR
	# fvbpf was done before the sleep was over, else this proves nothing
	refute_line --partial "exit="
	wait_long 20 ended
	run cat "$WL_LOG"
	assert_line "$call ok"
	assert_line "exit=0"
	refute_output --partial ERROR
}

# The ASan pass leaves this matrix to the plain pass (plain_pass_only):
# fvbpf's side is inject.bats' blocked nanosleep, the restart codes are
# ASan test_inject's.
ONE_BLOCKED="fvbpf's side is inject.bats' nanosleep test; restart codes are ASan test_inject's"
@test "blocked in read on a pipe: returns the byte written later" { plain_pass_only "$ONE_BLOCKED"; blocked_call read; }
@test "blocked in recv: returns the byte sent later" { plain_pass_only "$ONE_BLOCKED"; blocked_call recv; }
@test "blocked in recv with SO_RCVTIMEO 30 s: returns the byte, no EINTR" { plain_pass_only "$ONE_BLOCKED"; blocked_call recv-timeout; }
@test "blocked in accept: returns the connection made later" { plain_pass_only "$ONE_BLOCKED"; blocked_call accept; }
@test "blocked in poll: returns the event" { plain_pass_only "$ONE_BLOCKED"; blocked_call poll; }
@test "blocked in select: returns the event" { plain_pass_only "$ONE_BLOCKED"; blocked_call select; }
@test "blocked in epoll_wait: returns the event" { plain_pass_only "$ONE_BLOCKED"; blocked_call epoll; }
@test "blocked in futex FUTEX_WAIT: returns 0 when woken" { plain_pass_only "$ONE_BLOCKED"; blocked_call futex; }
@test "blocked in sigwaitinfo: returns the signal sent later, no EINTR" { plain_pass_only "$ONE_BLOCKED"; blocked_call sigwaitinfo; }
@test "blocked in sigsuspend: EINTR after its handler ran, once" { plain_pass_only "$ONE_BLOCKED"; blocked_call sigsuspend; }
@test "blocked in semop (SysV): returns 0 when posted, no EINTR" { plain_pass_only "$ONE_BLOCKED"; blocked_call semop; }
@test "blocked in msgrcv (SysV): returns the message sent later" { plain_pass_only "$ONE_BLOCKED"; blocked_call msgrcv; }
@test "blocked in waitpid: returns the child's exit status" { plain_pass_only "$ONE_BLOCKED"; blocked_call waitpid; }
@test "blocked in pause: EINTR after its handler ran, once" { plain_pass_only "$ONE_BLOCKED"; blocked_call pause; }
@test "blocked in nanosleep 5 s: returns 0 after the full 5 s" { plain_pass_only "$ONE_BLOCKED"; sleep_call nanosleep; }
@test "blocked in clock_nanosleep 5 s: returns 0 after the full 5 s" { plain_pass_only "$ONE_BLOCKED"; sleep_call clock-nanosleep; }

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

# ---- the worker gone mid-call: the code in the target returns by itself ----

# The ASan pass leaves these to the plain pass (plain_pass_only): the code
# that returns by itself runs in the target, and fvbpf's side is the
# registers test's.
ABANDONED="the abandoned code runs in the target; fvbpf's side is the registers test's"
@test "worker gone mid-call: registers, xmm/ymm/zmm and MXCSR restored by the code itself" {
	plain_pass_only "$ABANDONED"
	ABANDON=1 regs_preserved
}
@test "worker gone mid-call: blocked in read returns the byte (-ERESTARTSYS rerun)" { plain_pass_only "$ABANDONED"; ABANDON=1 blocked_call read; }
@test "worker gone mid-call: blocked in poll returns the event" { plain_pass_only "$ABANDONED"; ABANDON=1 blocked_call poll; }
@test "worker gone mid-call: blocked in sigwaitinfo, no EINTR" { plain_pass_only "$ABANDONED"; ABANDON=1 blocked_call sigwaitinfo; }
@test "worker gone mid-call: blocked in sigsuspend, EINTR after its handler ran once" { plain_pass_only "$ABANDONED"; ABANDON=1 blocked_call sigsuspend; }
@test "worker gone mid-call: nanosleep 5 s returns 0 after the full 5 s (restart_syscall)" { plain_pass_only "$ABANDONED"; ABANDON=1 sleep_call nanosleep; }
