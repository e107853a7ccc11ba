#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# `fvbpf attach --inject` must never harm its target, part 2 (part 1, with
# the tests that have a deadline, is inject_harm.bats): the signal mask
# and SIGSEGV's disposition, and the main thread blocked in a call while
# injected, by fvbpf or by a worker that lets go mid-call: the call returns
# its normal result once the test makes its event happen, well after
# fvbpf is done, whatever its restart code.  Every wait is on a
# condition, so it runs beside other files.

load helpers
load inject_helpers
load inject_harm_helpers

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

# ---- the worker gone mid-call: the code in the target returns by itself ----

@test "worker gone mid-call: blocked in read returns the byte (-ERESTARTSYS rerun)" { plain_pass_only "$ABANDONED"; ABANDON=1 blocked_call read; }
@test "worker gone mid-call: blocked in poll returns the event" { plain_pass_only "$ABANDONED"; ABANDON=1 blocked_call poll; }
@test "worker gone mid-call: blocked in sigwaitinfo, no EINTR" { plain_pass_only "$ABANDONED"; ABANDON=1 blocked_call sigwaitinfo; }
@test "worker gone mid-call: blocked in sigsuspend, EINTR after its handler ran once" { plain_pass_only "$ABANDONED"; ABANDON=1 blocked_call sigsuspend; }
