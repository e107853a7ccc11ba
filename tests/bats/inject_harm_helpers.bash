# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# What inject_harm.bats (serial: the tests with a deadline or a stall) and
# inject_blocked.bats (beside other files: the tests that wait only on
# conditions) share: their targets, setup and teardown, the victim
# starter and the waits on its state.

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

# The ASan pass leaves the abandoned-worker tests to the plain pass
# (plain_pass_only): the code that returns by itself runs in the target,
# and fvbpf's side is the registers test's.
ABANDONED="the abandoned code runs in the target; fvbpf's side is the registers test's"
