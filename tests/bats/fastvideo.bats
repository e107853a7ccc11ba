#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# FastVideo's own regions from an unmodified, already running job: the
# released fastvideo 0.2.1 profiler module (`make venv` fetches it), a CPU
# training loop that uses its three call styles and no fvbpf code
# (tests/workloads/fastvideo_train.py), reached through the Python shim
# (--inject, or the opt-in import hook).  And -r py:MODULE:QUALNAME on a
# plain Python loop (tests/workloads/py_func_loop.py).

load helpers

FVJOB=$ROOT/tests/workloads/fastvideo_train.py
PYLOOP=$ROOT/tests/workloads/py_func_loop.py
SEGS=$ROOT/tests/lib/segment_names.py
PY=${FVBPF_TORCH_PY_213:-$BUILD/venv-torch213/bin/python3}
FVPKG=$BUILD/fastvideo-0.2.1/pkg
REGIONS=training_train_one_step,training_forward,training_backward

setup() {
	common_setup
	if [ ! -x "$PY" ] || [ ! -f "$FVPKG/fastvideo/profiler.py" ]; then
		echo "no torch venv or FastVideo module under $BUILD: run \`make venv\`" >&2
		return 1
	fi
	RUN=$BATS_TEST_TMPDIR/run
	mkdir -p "$RUN"
}
teardown() {
	[ -n "${RUN:-}" ] && touch "$RUN/stop"
	common_teardown
}

# start_job [OPTION...]: the FastVideo job, set up and stepping (or blocked).
start_job() {
	start_workload "$WL_LOG" env PYTHONPATH="$FVPKG" "$PY" "$FVJOB" "$RUN" "$@"
}

# other_python NAME: the interpreter of that minor version, on PATH or
# installed by pyenv.
other_python() {
	local p
	for p in "$1" "$(pyenv root 2>/dev/null)"/versions/*/bin/"$1"; do
		"$p" -c 1 >/dev/null 2>&1 && { echo "$p"; return 0; }
	done
	return 1
}

# stop_job [SECONDS]: the job ends its loop by itself (FastVideo's own
# profiler writes its trace first), and ran without an error.
stop_job() {
	local i
	touch "$RUN/stop"
	for i in $(seq $((${1:-10} * 10))); do
		grep -q '^done steps=' "$WL_LOG" && break
		sleep 0.1
	done
	grep -q '^done steps=' "$WL_LOG"
	! grep -q Traceback "$WL_LOG"
}

# $1 segments of the one-step region, each with forward and backward
# inside it and PyTorch operators.  One more may come first, partial: the
# step that ran when the shim was installed (or when fvbpf attached) was
# entered before its wrapper (or the probes) were there, and shows what it
# did after (a step open at attach is not counted by -n).
three_styles_ok() {
	local full=" regions=training_backward,training_forward,training_train_one_step aten=" l n=0
	run python3 "$SEGS" "$OUT"
	echo "$output"
	[ "${#lines[@]}" -eq "$1" ] || [ "${#lines[@]}" -eq $(($1 + 1)) ]
	for l in "${lines[@]}"; do
		n=$((n + 1))
		if [ "$n" -eq 1 ]; then
			[[ $l =~ ^trace_rank0_segment0000_training_[a-z_]*\.json\ regions=[a-z_,]*\ aten= ]]
			# a piece of the step in flight: written, marked, not counted by -n
			if [ "${#lines[@]}" -eq $(($1 + 1)) ]; then
				python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["otherData"]
assert not m["counted"] and m["not_counted_why"] in ("a fragment of the step in flight at attach", "started before attach"), m' \
					"$OUT/${l%% *}"
			fi
			continue
		fi
		[[ $l == trace_rank0_segment*_training_train_one_step.json\ * ]]
		[[ $l == *"$full"* ]]
		[[ $l =~ aten=([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 20 ]
	done
}

@test "the shim alone (recording markers): every call style, py: kinds, errors never raised" {
	# what this checks runs in Python, not in fvbpf: the ASan pass
	# (FVBPF_SANITIZED) has nothing more to find here
	[ -z "${FVBPF_SANITIZED:-}" ] || skip "no fvbpf code under test: the plain pass runs it"
	run env PYTHONPATH="$FVPKG" "$PY" "$ROOT/tests/lib/shim_check.py"
	echo "$output" | grep -v '^ok ' >&2
	assert_success
	assert_line "all ok"
}

@test "--inject: a running FastVideo job's three call styles become segments with operators inside" {
	start_job
	wait_for grep -q '^stepping' "$WL_LOG"
	run timeout 120 "$FVBPF" attach --inject -p "$WL_PID" -r "$REGIONS" -n 3 -o "$OUT"
	assert_success
	assert_output --regexp "Python shim ran( at last)?: fastvideo.profiler wrapped"
	assert_output --partial "python shim: fastvideo.profiler wrapped"
	three_styles_ok 3
	python3 - "$OUT/manifest.json" <<-'EOF'
		import json, sys
		p = json.load(open(sys.argv[1]))["processes"][0]["python_shim"]
		assert p["asked"] and p["answered"], p
		assert p["fastvideo_entry_points"] == 3, p
		assert p["status"] == "fastvideo.profiler wrapped", p
	EOF
	stop_job
}

@test "--inject: detached, the wrappers stay dormant; a second attach reuses them" {
	plain_pass_only "the shim's side; fvbpf's injection reuse is inject.bats'"
	start_job
	run timeout 120 "$FVBPF" attach --inject -p "$WL_PID" -r "$REGIONS" -n 2 -o "$OUT"
	assert_success
	three_styles_ok 2
	rm -rf "$OUT"
	# detached, the job steps on through the dormant wrappers; the library
	# is there, so the next attach needs no --inject and injects nothing
	run timeout 120 "$FVBPF" attach -p "$WL_PID" -r "$REGIONS" -n 2 -o "$OUT"
	assert_success
	assert_output --regexp "Python shim ran( at last)?: fastvideo.profiler wrapped"
	three_styles_ok 2
	[ "$(grep '\.fvbpf-inject-.*\.so' "/proc/$WL_PID/maps" | awk '{print $6}' | sort -u | wc -l)" -eq 1 ]
	stop_job
}

@test "LD_PRELOAD=libfvbpf.so (the agent's way in): FastVideo's regions without --inject" {
	plain_pass_only "the shim request of the --inject test, reached through the agent"
	LD_PRELOAD=$BUILD/libfvbpf.so start_job
	wait_for grep -q '^stepping' "$WL_LOG"
	run timeout 120 "$FVBPF" attach -p "$WL_PID" -r "$REGIONS" -n 3 -o "$OUT"
	assert_success
	refute_output --partial "injected"
	assert_output --regexp "Python shim ran( at last)?: fastvideo.profiler wrapped"
	three_styles_ok 3
	stop_job
}

@test "import hook: a job started with it needs no --inject" {
	plain_pass_only "the shim request of the --inject test, reached through the import hook"
	local venv=$BATS_TEST_TMPDIR/venv site
	"$PY" -m venv --without-pip "$venv"
	site=$("$venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	# the hook's venv sees the torch venv's packages
	"$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' >"$site/torch-venv.pth"
	run env PYTHONPATH="$ROOT/python" FVBPF_LIB="$BUILD/libfvbpf.so" "$venv/bin/python3" -m fvbpf.hook install
	assert_success
	assert_output --partial "installed $site/fvbpf-hook.pth"
	PY=$venv/bin/python3 FVBPF_LIB=$BUILD/libfvbpf.so start_job
	wait_for grep -q '^stepping' "$WL_LOG"
	# the package loaded the library when the job imported fastvideo.profiler
	grep -q 'libfvbpf.so' "/proc/$WL_PID/maps"
	run timeout 120 "$FVBPF" attach -p "$WL_PID" -r "$REGIONS" -n 3 -o "$OUT"
	assert_success
	refute_output --partial "injected"
	three_styles_ok 3
	stop_job
	run "$venv/bin/python3" -m fvbpf.hook status
	assert_success
	PYTHONPATH=$ROOT/python "$venv/bin/python3" -m fvbpf.hook uninstall
	[ ! -e "$site/fvbpf-hook.pth" ]
	# FVBPF_HOOK=0: the hook stays out of a process
	run env FVBPF_HOOK=0 PYTHONPATH="$FVPKG" "$venv/bin/python3" -c 'import sys, fastvideo.profiler; print("_fvbpf_shim" in sys.modules)'
	assert_output --partial False
}

@test "FastVideo's own profiler on at the same time: its files and fvbpf's are both written" {
	plain_pass_only "the --inject test's fvbpf code; checks FastVideo's own files"
	FASTVIDEO_TORCH_PROFILE_REGIONS=training_train_one_step start_job --trace-dir "$RUN/fvtrace"
	wait_for grep -q '^stepping' "$WL_LOG"
	run timeout 120 "$FVBPF" attach --inject -p "$WL_PID" -r "$REGIONS" -n 3 -o "$OUT"
	assert_success
	three_styles_ok 3
	# FastVideo's record_function scope is inside fvbpf's segment too
	grep -q 'fastvideo.region::profiler_region_training_train_one_step' "$OUT"/trace_rank0_segment0000_*.json
	stop_job 120
	test -s "$RUN/fvtrace/summary_rank0.json"
	ls "$RUN"/fvtrace/*.pt.trace.json.gz
	python3 -c 'import json, sys; rows = json.load(open(sys.argv[1])); assert any(r["name"] == "aten::addmm" for r in rows), rows' "$RUN/fvtrace/summary_rank0.json"
}

@test "region names: an unknown -r name is warned about; a region FastVideo does not know is no segment" {
	plain_pass_only "the unknown-name warning is errors.bats'; the rest is the shim's side"
	start_job --unknown
	wait_for grep -q '^stepping' "$WL_LOG"
	run timeout 120 "$FVBPF" attach --inject -p "$WL_PID" -r "$REGIONS,training_typo" -n 3 -o "$OUT"
	assert_success
	assert_output --partial "unknown region 'training_typo' ignored"
	three_styles_ok 3
	stop_job
}

@test "the job imports FastVideo after the attach: its regions start then" {
	start_job --import-late
	timeout 120 "$FVBPF" attach --inject -p "$WL_PID" -r "$REGIONS" -n 3 -o "$OUT" \
		>"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	wait_long grep -Eq 'Python shim ran( at last)?: fastvideo.profiler not imported yet, watched' "$FV_ERR"
	touch "$RUN/import"
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	grep -q 'fastvideo.profiler imported and wrapped' "$FV_ERR"
	three_styles_ok 3
	stop_job
}


blocked_main_thread() { # OPTION
	start_job "$1" 8
	wait_for grep -q '^blocking' "$WL_LOG"
	run timeout 120 "$FVBPF" attach --inject -p "$WL_PID" -r "$REGIONS" -n 3 -o "$OUT"
	assert_success
	# the attach went on, said why no Python region came, then got them
	assert_output --partial "has not run Python code for 2 s"
	assert_output --partial "Python shim ran at last"
	three_styles_ok 3
	stop_job
}

@test "main thread blocked in a long time.sleep: the attach goes on, regions come when it wakes" {
	plain_pass_only "the shim's bounded wait is ASan test_py_shim's; 'at last' runs in the late-import test"
	blocked_main_thread --block-sleep
}

@test "main thread blocked in a C call: the attach goes on, regions come when it returns" {
	plain_pass_only "the shim's bounded wait is ASan test_py_shim's; 'at last' runs in the late-import test"
	blocked_main_thread --block-c
}

@test "DataLoader fork workers inherit the wrappers and call no probe" {
	plain_pass_only "the --inject test's fvbpf code; the forked workers are the target's side"
	start_job --workers 2
	wait_for grep -q '^stepping' "$WL_LOG"
	run timeout 120 "$FVBPF" attach --inject -p "$WL_PID" -r "$REGIONS,training_dataloader" -n 3 -o "$OUT"
	assert_success
	assert_output --partial "0 bad records"
	three_styles_ok 3
	# only the job's own process has slices: no worker's region reached fvbpf
	run python3 "$SEGS" "$OUT"
	for l in "${lines[@]}"; do
		[[ $l == *" pids=$WL_PID" ]]
	done
	stop_job
}

@test "-r py:MODULE:QUALNAME: exactly N calls become N segments" {
	start_workload "$WL_LOG" python3 "$PYLOOP" "$BATS_TEST_TMPDIR" 7
	"$FVBPF" attach --inject -p "$WL_PID" -o "$OUT" \
		-r 'py:__main__:Trainer.training_step,py:__main__:Trainer.static_step' \
		>"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	wait_long grep -q 'Python shim ran' "$FV_ERR"
	grep -q 'py:__main__:Trainer.training_step is a region now' "$FV_ERR"
	touch "$BATS_TEST_TMPDIR/go"
	wait_for grep -q '^done calls=7' "$WL_LOG"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	[ "$(ls "$OUT" | grep -c '^trace_rank0_segment.*_py___main___trainer.training_step.json$')" -eq 7 ]
	[ "$(ls "$OUT" | grep -c '^trace_rank0_segment.*_py___main___trainer.static_step.json$')" -eq 1 ]
	[ "$(ls "$OUT" | grep -c '^trace_')" -eq 8 ]
}

# identity_job [--blocked]: tests/workloads/py_identity.py checks itself
# before, while attached and after fvbpf (SIGINT once its calls ran) exited.
identity_job() {
	local items=py:__main__:plain,py:__main__:Model.step,py:__main__:Model.st,py:__main__:Model.cm
	items+=,py:__main__:closed,py:__main__:rec,py:__main__:coro,py:__main__:gen,py:__main__:agen
	items+=,py:late_mod:later
	MALLOC_PERTURB_=254 start_workload "$WL_LOG" python3 "$ROOT/tests/workloads/py_identity.py" \
		"$BATS_TEST_TMPDIR" "$@"
	"$FVBPF" attach --inject -p "$WL_PID" -o "$OUT" -r "$items" >"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	wait_long grep -q '^burst done' "$WL_LOG"
	kill -INT "$FV_PID"
	wait_fvbpf 30
	cat "$FV_ERR" >&2
	[ "$FV_STATUS" -eq 0 ]
	touch "$BATS_TEST_TMPDIR/after"
	wait_long grep -q '^done failed=' "$WL_LOG"
	cat "$WL_LOG" >&2
	! grep -q '^FAIL' "$WL_LOG" || false
	grep -qx 'during checked 9' "$WL_LOG"
	grep -qx 'after checked 9' "$WL_LOG"
	grep -qx 'done failed=0' "$WL_LOG"
}

# Its functions are its own objects, pickle by reference, keep their kind
# and signature, and after the detach their code and attributes are what
# they were (the library's restore, the functions not called); a forked
# child's are its own after a call; generator functions are refused.
@test "-r py: keeps the job's functions: identity, pickling, kinds; their own code after the detach" {
	identity_job
	# the generator kinds: one line each, counted in the manifest
	grep -q 'py:__main__:gen is a generator function: not a region' "$FV_ERR"
	grep -q 'py:__main__:agen is an async generator function: not a region' "$FV_ERR"
	! grep -q "region 'py:__main__:a\\?gen' was never entered" "$FV_ERR" || false
	grep -q '7 py: functions wrapped, 1 waiting for their module, 0 unresolved, 2 refused' "$FV_OUT"
	python3 - "$OUT/manifest.json" <<-'EOF'
		import json, sys
		p = json.load(open(sys.argv[1]))["processes"][0]["python_shim"]
		assert (p["py_functions_wrapped"], p["py_functions_waiting"], p["py_functions_refused"]) == (7, 1, 2), p
	EOF
	# the regions, as many segments as calls (the recursion and the
	# coroutine's await inside theirs)
	local name want
	for want in plain=3 model.step=2 model.st=1 model.cm=1 closed=1 rec=1 coro=2 gen=0 agen=0; do
		name=${want%=*}
		[ "$(ls "$OUT" | grep -c "^trace_rank0_segment.*_py___main___$name.json\$")" -eq "${want#*=}" ] ||
			{ echo "segments of $name: want ${want#*=}" >&2; ls "$OUT" >&2; false; }
	done
	[ "$(ls "$OUT" | grep -c '^trace_')" -eq 11 ]
}

@test "-r py: a main thread blocked in C after the detach: the first call restores the code" {
	plain_pass_only "the target's side; fvbpf's is the test before's"
	identity_job --blocked
	grep -qx 'worker: restored by a call' "$WL_LOG"
}

@test "the shim's py: trampolines alone, on every CPython 3.8-3.13 installed" {
	plain_pass_only "no fvbpf code under test: the shim's Python"
	local v py n=0
	for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
		py=$(other_python "python$v") || continue
		run "$py" "$ROOT/tests/lib/shim_py_check.py"
		echo "$py: $output" | grep -v '^ok ' >&2
		assert_success
		assert_line "all ok"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

@test "-r py: errors: a malformed item, a name that does not resolve, a module not imported" {
	run "$FVBPF" attach -p $$ -r 'py:no_colon_here' -o "$OUT"
	assert_failure
	assert_output --partial "give a Python function as py:MODULE:QUALNAME"
	run "$FVBPF" attach -p $$ -r 'py:a.b:1bad' -o "$OUT"
	assert_failure
	assert_output --partial "py:MODULE:QUALNAME"
	start_workload "$WL_LOG" python3 "$PYLOOP" "$BATS_TEST_TMPDIR" 3
	run timeout 60 "$FVBPF" attach --inject -p "$WL_PID" -d 3 -o "$OUT" \
		-r 'py:__main__:Nope.step,py:json:dumps,py:__main__:Trainer.training_step'
	assert_success
	assert_output --partial "py:__main__:Nope.step: module '__main__' has no attribute 'Nope'"
	assert_output --partial "py:json:dumps: json is not imported yet; wrapped when it is"
	assert_output --partial "1 py: functions wrapped, 1 waiting for their module, 1 unresolved"
}

@test "sub-interpreters: the shim refuses with one line, the attach goes on" {
	plain_pass_only "the shim's refusal; fvbpf relays its line as in the py: errors test"
	start_workload "$WL_LOG" python3 "$PYLOOP" "$BATS_TEST_TMPDIR" 3 --subinterp
	run timeout 60 "$FVBPF" attach --inject -p "$WL_PID" -d 3 -o "$OUT" \
		-r 'py:__main__:Trainer.training_step'
	assert_success
	assert_output --partial "Python regions are off in a process running sub-interpreters"
	refute_output --partial "is a region now"
	# and one line in the job's own log (logger "fvbpf", a warning)
	[ "$(grep -c '^fvbpf: Python regions are off' "$WL_LOG")" -eq 1 ]
}

@test "no marker region asked (--window): no Python shim request" {
	plain_pass_only "no shim code runs"
	start_job
	wait_for grep -q '^stepping' "$WL_LOG"
	run timeout 60 "$FVBPF" attach --inject -p "$WL_PID" --window 0.2 -d 1 -o "$OUT"
	assert_success
	refute_output --partial "Python shim"
	refute_output --partial "python shim"
	stop_job
}
