#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# `fvbpf attach --inject`: libfvbpf.so loaded into processes started
# without it (tests/workloads/c/inject_target.c, inject_py.py: not linked,
# no LD_PRELOAD, no import), which check their own behaviour as they run
# and must print exactly what they would have printed without fvbpf.

load helpers
load inject_helpers

INJ=$BUILD/tests/inject_target
PYW=$ROOT/tests/workloads/inject_py.py
# The same fvbpf with the test hooks (the stall knob), plain or ASan.
FVT=$(dirname "$FVBPF")/fvbpf-test

setup() {
	common_setup
	[ -x "$INJ" ] || skip "inject_target not built (make)"
}
teardown() {
	local p
	for p in "${HOLDERS[@]:-}"; do
		[ -n "$p" ] && kill -KILL "$p" 2>/dev/null
	done
	common_teardown
}


@test "C program: injected, keeps its exact output, agent reports, time stopped measured" {
	start_workload "$WL_LOG" "$INJ" --mode tick --count 300
	run "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 1 -o "$OUT"
	assert_success
	assert_output --partial "libfvbpf.so injected, the target stopped"
	assert_output --partial "agent: libfvbpf.so injected at 20"
	# the library's markers are in: the windows are cut all the same
	run windows_ok 4
	assert_success
	[ "$(injected_maps "$WL_PID")" -eq 1 ]
	# the copy is gone from the filesystem, the mapping stays (dormant)
	grep -q '/dev/shm/\.fvbpf-inject-.* (deleted)$' "/proc/$WL_PID/maps"
	wait_for grep -q '^done' "$WL_LOG"
	run ticks_ok "$WL_LOG" 300
	assert_success
	grep -qx 'done ticks=300 sigusr1=0 errors=0' "$WL_LOG"
	[ "$(mf "p['agent_library']['how']")" = injected ]
	run mf "0 < p['agent_library']['stopped_us'] < 1000000 and p['agent_library']['injected_at'].endswith('Z')"
	assert_output True
	run mf "p['gpu']['activity']"
	assert_output --partial "no CUDA in this process"
}

@test "Python program: injected, keeps its exact output" {
	plain_pass_only "fvbpf's side is the C program's; the target differs"
	start_workload "$WL_LOG" python3 "$PYW" --count 300
	run "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 1 -o "$OUT"
	assert_success
	run windows_ok 4
	assert_success
	[ "$(injected_maps "$WL_PID")" -eq 1 ]
	wait_for grep -q '^done' "$WL_LOG"
	run ticks_ok "$WL_LOG" 300
	assert_success
	grep -qx 'done ticks=300 sigusr1=0 errors=0' "$WL_LOG"
	[ "$(mf "p['agent_library']['how']")" = injected ]
	run mf "p['gpu']['activity']"
	assert_output --partial "no CUDA in this process"
}

@test "Python program blocked in time.sleep: the sleep still lasts as long" {
	plain_pass_only "fvbpf's side is the nanosleep test's; restart codes are ASan test_inject's"
	start_workload "$WL_LOG" python3 "$PYW" --sleep 2000 --count 10
	wait_for grep -q '^waiting' "$WL_LOG"
	run "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 0.3 -o "$OUT"
	assert_success
	wait_for grep -q '^done' "$WL_LOG"
	run windows_ok 1
	assert_success
	grep -qx 'sleep ok' "$WL_LOG"
	run ticks_ok "$WL_LOG" 10
	assert_success
}

# blocked MODE: the program waits 2 s in MODE while it is injected.
blocked() {
	start_workload "$WL_LOG" "$INJ" --mode "$1" --ms 2000
	wait_for grep -q '^waiting' "$WL_LOG"
	sleep 0.2
	grep -q "^State:.*S (sleeping)" "/proc/$WL_PID/status"
	run "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 0.3 -o "$OUT"
	assert_success
	assert_output --partial "libfvbpf.so injected"
	[ "$(injected_maps "$WL_PID")" -eq 1 ]
	run windows_ok 1
	assert_success
	wait_for grep -q '^waited' "$WL_LOG"
	run cat "$WL_LOG"
	assert_line "$1 ok"
	assert_line "waited ok"
	refute_output --partial ERROR
}

@test "blocked in nanosleep: returns 0 after the full 2 s" { blocked sleep; }
# The ASan pass injects into one blocked call (nanosleep): fvbpf's side is
# the same for the others, whose restart codes are ASan test_inject's.
ONE_BLOCKED="fvbpf's side is the nanosleep test's; restart codes are ASan test_inject's"
@test "blocked in read on a pipe: returns the byte written later" { plain_pass_only "$ONE_BLOCKED"; blocked pipe; }
@test "blocked on a condition variable (futex): woken by its signal only" { plain_pass_only "$ONE_BLOCKED"; blocked cond; }
@test "blocked in epoll_wait: returns the event, no EINTR" { plain_pass_only "$ONE_BLOCKED"; blocked epoll; }

# stop_ticks: end a tick workload (SIGUSR2), print how many ticks it made.
stop_ticks() {
	kill -USR2 "$WL_PID"
	wait_for grep -q '^done' "$WL_LOG"
	sed -n 's/^done ticks=\([0-9]*\).*/\1/p' "$WL_LOG"
}

@test "16 busy threads: injected, every thread runs on, ticks continuous" {
	plain_pass_only "fvbpf's side is the C program's; the threads are the target's side"
	# lives until told (SIGUSR2): a slow machine's attach must not outlast it
	start_workload "$WL_LOG" "$INJ" --mode tick --count 100000 --threads 16
	run "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 0.5 -o "$OUT"
	assert_success
	run windows_ok 2
	assert_success
	[ "$(injected_maps "$WL_PID")" -eq 1 ]
	local n
	n=$(stop_ticks)
	wait_for grep -q '^threads ok' "$WL_LOG"
	grep -qx 'threads ok 16' "$WL_LOG"
	run ticks_ok "$WL_LOG" "$n"
	assert_success
}

@test "regions after injection: segments say injected, when and how long stopped" {
	start_workload "$WL_LOG" "$INJ" --mode tick --count 400 --regions
	run "$FVBPF" attach --inject -p "$WL_PID" -r training_train_one_step -n 3 -o "$OUT"
	assert_success
	run python3 - "$OUT" <<'PY'
import glob, json, sys
d = sys.argv[1]
t = json.load(open(sorted(glob.glob(d + "/trace_rank0_segment0001_*.json"))[0]))["otherData"]
s = json.load(open(sorted(glob.glob(d + "/summary_rank0_segment0001_*.json"))[0]))["metadata"]
for m in (t, s):
    print(m["agent_library"], m["agent_injected_at"].endswith("Z"), m["agent_inject_stopped_us"] > 0)
PY
	assert_success
	assert_output "injected True True
injected True True"
	wait_for grep -q '^done' "$WL_LOG"
	run ticks_ok "$WL_LOG" 400
	assert_success
}

@test "second inject into the same process: reused, nothing loaded twice" {
	start_workload "$WL_LOG" "$INJ" --mode tick --count 800 --regions
	run "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 0.3 -o "$OUT"
	assert_success
	run windows_ok 1
	assert_success
	run "$FVBPF" attach --inject -p "$WL_PID" -r training_train_one_step -n 2 -o "$OUT.2"
	assert_success
	assert_output --partial "already loaded, nothing injected (reused)"
	[ "$(injected_maps "$WL_PID")" -eq 1 ]
	OUT=$OUT.2
	[ "$(mf "p['agent_library']['how']")" = reused ]
	# a later attach without --inject uses the dormant library too
	run "$FVBPF" attach -p "$WL_PID" -r training_train_one_step -n 2 -o "$OUT.3"
	assert_success
	OUT=$OUT.3
	[ "$(mf "p['agent_library']['how']")" = "loaded by the job" ]
	[ "$(mf "p['segments']")" -ge 2 ]
	# and a library left by an earlier attach cuts time windows
	run "$FVBPF" attach -p "$WL_PID" --window 0.2 -d 0.5 -o "$OUT.4"
	assert_success
	OUT=$OUT.4
	run windows_ok 2
	assert_success
	wait_for grep -q '^done' "$WL_LOG"
	run ticks_ok "$WL_LOG" 800
	assert_success
}

@test "already traced by another ptracer: refused in one line, target unharmed" {
	start_workload "$WL_LOG" "$INJ" --mode tick --count 100000
	strace -p "$WL_PID" -o /dev/null &
	HOLDERS=($!)
	wait_for grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$WL_PID/status"
	run "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 0.5 -o "$OUT"
	assert_success
	assert_output --partial "--inject refused: it is already traced by PID"
	assert_output --partial "attaching without the agent"
	[ "$(injected_maps "$WL_PID")" -eq 0 ]
	[ "$(mf "p['agent_library']['how']")" = refused ]
	kill "${HOLDERS[0]}"
	wait_for grep -q "^TracerPid:[[:space:]]*0" "/proc/$WL_PID/status"
	local n
	n=$(stop_ticks)
	run ticks_ok "$WL_LOG" "$n"
	assert_success
}

@test "target killed during injection: no hang, one clear line" {
	[ -x "$FVT" ] || skip "no $FVT"
	start_workload "$WL_LOG" "$INJ" --mode tick --count 3000
	FVBPF_TEST_INJECT_STALL_MS=3000 "$FVT" attach --inject -p "$WL_PID" --window 0.2 -d 1 \
		-o "$OUT" >"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	wait_for grep -q "^State:.*t (tracing stop)" "/proc/$WL_PID/status"
	kill -KILL "$WL_PID"
	wait_fvbpf
	cat "$FV_ERR"
	grep -q "failed: the process exited during the injection" "$FV_ERR"
	[ "$FV_STATUS" -eq 1 ]
	grep -q "no process with PID $WL_PID\|cannot read\|PID $WL_PID exited while fvbpf was attaching" "$FV_ERR"
}

@test "a signal sent while the target is stopped is delivered after" {
	[ -x "$FVT" ] || skip "no $FVT"
	start_workload "$WL_LOG" "$INJ" --mode tick --count 300
	FVBPF_TEST_INJECT_STALL_MS=500 "$FVT" attach --inject -p "$WL_PID" --window 0.2 -d 0.5 \
		-o "$OUT" >"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	wait_for grep -q "^State:.*t (tracing stop)" "/proc/$WL_PID/status"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	grep -q "libfvbpf.so injected" "$FV_ERR"
	wait_for grep -q '^done' "$WL_LOG"
	grep -qx 'done ticks=300 sigusr1=1 errors=0' "$WL_LOG"
	run ticks_ok "$WL_LOG" 300
	assert_success
	[ "$(mf "p['agent_library']['signals_redelivered']")" -ge 1 ]
	# the stall is in the time stopped
	run mf "p['agent_library']['stopped_us'] >= 500000"
	assert_output True
}

@test "--inject-timeout: out of time before the call, restored, attach goes on" {
	[ -x "$FVT" ] || skip "no $FVT"
	start_workload "$WL_LOG" "$INJ" --mode tick --count 300
	local t0=$SECONDS
	run env FVBPF_TEST_INJECT_STALL_MS=5000 "$FVT" attach --inject --inject-timeout 1 \
		-p "$WL_PID" --window 0.2 -d 0.5 -o "$OUT"
	assert_success
	[ $((SECONDS - t0)) -lt 5 ]
	assert_output --partial "--inject failed: out of time before the call"
	[ "$(injected_maps "$WL_PID")" -eq 0 ]
	[ "$(mf "p['agent_library']['how']")" = failed ]
	wait_for grep -q '^done' "$WL_LOG"
	run ticks_ok "$WL_LOG" 300
	assert_success
}

@test "another mount namespace, private noexec /dev/shm: loaded from its /tmp" {
	start_workload "$WL_LOG" unshare -m --propagation private sh -c \
		"mount -t tmpfs -o noexec tmpfs /dev/shm && exec $INJ --mode tick --count 300"
	run "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 0.5 -o "$OUT"
	assert_success
	assert_output --partial "libfvbpf.so injected"
	grep -q ' /tmp/\.fvbpf-inject-.* (deleted)$' "/proc/$WL_PID/maps"
	run mf "p['gpu']['activity']"
	assert_output --partial "no CUDA in this process"
	wait_for grep -q '^done' "$WL_LOG"
	run ticks_ok "$WL_LOG" 300
	assert_success
}

@test "another mount namespace, private tmpfs over /dev/shm: loaded from it" {
	plain_pass_only "the noexec test runs the same namespace path, one directory further"
	start_workload "$WL_LOG" unshare -m --propagation private sh -c \
		"mount -t tmpfs tmpfs /dev/shm && exec $INJ --mode tick --count 300"
	run "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 0.5 -o "$OUT"
	assert_success
	grep -q ' /dev/shm/\.fvbpf-inject-.* (deleted)$' "/proc/$WL_PID/maps"
	# never in this namespace's /dev/shm
	run ls /dev/shm/.fvbpf-inject-"$WL_PID"-*
	assert_failure
	wait_for grep -q '^done' "$WL_LOG"
	run ticks_ok "$WL_LOG" 300
	assert_success
}

@test "CUDA program without the agent: hint without --inject; injected, the agent activates" {
	local rt=/usr/local/cuda/lib64/libcudart.so.13
	[ -e "$rt" ] || skip "no $rt"
	start_workload "$WL_LOG" python3 "$ROOT/tests/workloads/py_cuda_plain.py" "$rt"
	run "$FVBPF" attach -p "$WL_PID" --window 0.2 -d 0.3 -o "$OUT"
	assert_success
	assert_output --partial "maps CUDA but has no fvbpf agent: no GPU time; add --inject"
	run "$FVBPF" attach --inject -p "$WL_PID" -r training_forward -d 1.5 -o "$OUT.2"
	assert_success
	OUT=$OUT.2
	[ "$(mf "p['agent_library']['how']")" = injected ]
	# the real libcupti's activation path, without a GPU
	run mf "p['gpu']['activity']"
	refute_output "no word from the in-process agent"
	assert_output --regexp "CUPTI|cupti"
	kill -0 "$WL_PID"
}

@test "--inject options: ranges and dependencies are usage errors" {
	run "$FVBPF" attach --inject --inject-timeout 0 -p 1 -r training_forward
	[ "$status" -eq 2 ]
	assert_output --partial "invalid --inject-timeout '0'"
	run "$FVBPF" attach --inject-timeout 5 -p 1 -r training_forward
	[ "$status" -eq 2 ]
	assert_output --partial "--inject-timeout and --inject-lib need --inject"
	run "$FVBPF" attach --inject --inject-lib /nonexistent/libfvbpf.so -p 1 -r training_forward
	[ "$status" -eq 1 ]
	assert_output --partial "--inject-lib /nonexistent/libfvbpf.so: no such regular file"
}

@test "simulated GPU started without the library: injected, GPU tracks and exact joins" {
	local sim=$BUILD/tests/gpu_sim_lazy
	[ -x "$sim" ] || skip "no CUDA toolkit headers: gpu_sim_lazy not built"
	[ -e /usr/local/cuda/lib64/libcupti.so.13 ] || skip "no libcupti"
	run bash -c 'ldd "$1" | grep -q fvbpf' _ "$sim"
	assert_failure
	FVBPF_AGENT=off start_workload "$WL_LOG" "$sim" --steps 3 --kernels 3 --wait-signal
	start_fvbpf --inject --inject-lib "$BUILD/test-lib/libfvbpf.so" -p "$WL_PID" -o "$OUT" -n 3 \
		-r training_train_one_step,training_forward
	grep -q "libfvbpf.so injected" "$FV_ERR"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	wait_for grep -q '^counts' "$WL_LOG"
	grep -q '^counts steps=3 kernels=9 copies=3 records=12 missing=0' "$WL_LOG"
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=3 incomplete=0"
	assert_line "api cudaLaunchKernel=9"
	run python3 - "$OUT" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/trace_rank0_segment*_training_train_one_step.json")):
    t = json.load(open(f))
    ev = t["traceEvents"]
    starts = {e["id"] for e in ev if e.get("ph") == "s"}
    ends = {e["id"] for e in ev if e.get("ph") == "f"}
    launch = {e["args"]["correlation"] for e in ev if e.get("cat") == "cuda_runtime" and "correlation" in e["args"]}
    gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy")]
    joined = sum(1 for e in gpu if e["args"]["correlation"] in launch & starts & ends and e["dur"] > 0)
    o = t["otherData"]
    print(len(gpu), joined, o["gpu_activity"], o["gpu_clock"], o["agent_library"])
PY
	assert_success
	[ "$(grep -c '^4 4 cupti simulated injected$' <<<"$output")" -eq 3 ]
}
