# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Shared set-up of the end-to-end tests: start a workload, attach fvbpf,
# wait for things without fixed sleeps where a condition can be polled.

# bats_lib DIR: a bats library's files, sourced as its load.bash lists
# them but without the `$(dirname ...)` it runs for each (a subshell and a
# process each: a dozen per test, 1,400 tests a run).  A load.bash of
# another shape is loaded as it is.
bats_lib() {
	local line re='^source "\$\(dirname "\$\{BASH_SOURCE\[0\]\}"\)/([A-Za-z0-9_/.-]+)"$' files=()
	while IFS= read -r line; do
		case $line in '' | '#'*) continue ;; esac
		[[ $line =~ $re ]] || { load "$1/load"; return; }
		files+=("$1/${BASH_REMATCH[1]}")
	done <"$1/load.bash"
	for line in "${files[@]}"; do
		# shellcheck disable=SC1090
		source "$line"
	done
}
bats_lib /usr/lib/bats/bats-support
bats_lib /usr/lib/bats/bats-assert
bats_lib /usr/lib/bats/bats-file

# nap SECONDS: a poll's pause without a process: read's timeout on a FIFO
# of the test's own that nothing writes (the polls below slept 25,000
# times a run, a fork and an exec each).
nap() {
	local fifo=${BATS_TEST_TMPDIR:-${BATS_FILE_TMPDIR:-/nonexistent}}/.nap _x
	if [ -p "$fifo" ] || mkfifo "$fifo" 2>/dev/null; then
		read -r -t "$1" _x <>"$fifo" || true
	else
		sleep "$1"
	fi
}

ROOT=${FVBPF_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
# FVBPF_BIN: another build of fvbpf to test, e.g. the ASan/UBSan one that
# tests/run.sh runs the suite against a second time (FVBPF_SANITIZED=1).
FVBPF=${FVBPF_BIN:-$BUILD/fvbpf}
TRAINER=$BUILD/tests/marker_trainer
CHECK=$ROOT/tests/lib/trace_check.py

common_setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	OUT=$BATS_TEST_TMPDIR/out
	WL_LOG=$BATS_TEST_TMPDIR/workload.log
	FV_OUT=$BATS_TEST_TMPDIR/fvbpf.out
	FV_ERR=$BATS_TEST_TMPDIR/fvbpf.err
	WL_PIDS=()
	FV_PID=
	# the torch layout cache of this test alone: no test (nor file run
	# beside it) reads another's measurement or finds it already made
	export FVBPF_CACHE_DIR=$BATS_TEST_TMPDIR/cache
	[ -n "${FVBPF_SANITIZED:-}" ] && san_setup
	return 0
}

# ASan's reports go to files (one per process) that teardown looks at, so a
# report fails the test even where the test ignores fvbpf's status or stderr.
# World-writable: some tests run fvbpf as nobody.  GCC's separate libubsan
# writes to stderr whatever log_path says: teardown reads fvbpf's stderr and
# the last `run` output for its reports.
san_setup() {
	SAN_DIR=$(mktemp -d /tmp/fvbpf-san.XXXXXX)
	chmod 1777 "$SAN_DIR"
	export ASAN_OPTIONS="log_path=$SAN_DIR/asan:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
}

# plain_pass_only WHY: this test runs in the plain pass only, not in the
# ASan/UBSan pass (FVBPF_SANITIZED=1), because no fvbpf code runs in it that
# another test of that pass, or an ASan unit test, does not run already: a
# second torch release, one more blocked syscall, a long fixed-length run.
# Every test runs in both passes unless it says so (docs/testing.md lists
# the ones that do, with their times); FVBPF_ASAN_ALL=1 runs them all.
plain_pass_only() {
	[ -n "${FVBPF_SANITIZED:-}" ] && [ -z "${FVBPF_ASAN_ALL:-}" ] &&
		skip "plain pass only: $*"
	return 0
}

# sanitized_pass_only WHY: this long test runs in the ASan/UBSan pass only
# (FVBPF_SANITIZED=1), where a crash or a bad read of fvbpf's shows best;
# FVBPF_ASAN_ALL=1 runs it in the plain pass too.
sanitized_pass_only() {
	[ -z "${FVBPF_SANITIZED:-}" ] && [ -z "${FVBPF_ASAN_ALL:-}" ] &&
		skip "sanitized pass only: $*"
	return 0
}

SAN_REPORT_RE='^[^ ]+:[0-9]+:[0-9]+: runtime error: |ERROR: (Address|Leak|UndefinedBehavior)Sanitizer'

# Fails (status 1) when a sanitized fvbpf reported something during the test.
san_check() {
	local f found=0
	[ -n "${SAN_DIR:-}" ] || return 0
	for f in "$SAN_DIR"/*; do
		[ -e "$f" ] || continue
		found=1
		echo "# sanitizer report $f:" >&2
		sed 's/^/# /' "$f" >&2
	done
	rm -rf "$SAN_DIR"
	SAN_DIR=
	if [ -f "${FV_ERR:-}" ] && grep -Eq "$SAN_REPORT_RE" "$FV_ERR"; then
		found=1
		echo "# sanitizer report in fvbpf's stderr:" >&2
		sed 's/^/# /' "$FV_ERR" >&2
	fi
	if grep -Eq "$SAN_REPORT_RE" <<<"${output:-}"; then
		found=1
		echo "# sanitizer report in the last run's output:" >&2
		sed 's/^/# /' <<<"$output" >&2
	fi
	return $found
}

# descendants PID: its children, theirs, ... (pids, one a line)
descendants() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}

common_teardown() {
	local p
	[ -n "${FV_PID:-}" ] && kill -KILL "$FV_PID" 2>/dev/null
	# a workload's forked children too: one left behind holds the test's
	# output pipe, and bats waits for it for good
	for p in "${WL_PIDS[@]:-}"; do
		[ -n "$p" ] && kill -KILL $(descendants "$p") "$p" 2>/dev/null
	done
	san_check
}

# wait_long CMD... : the same for up to 60 s (fvbpf reading libtorch, an
# injection, under ASan on a busy machine); on a timeout show what fvbpf
# and the job ($JOB/*.log, where a test has one) said.
wait_long() {
	local i f
	for i in $(seq 1200); do
		"$@" && return 0
		nap 0.05
	done
	echo "timed out waiting for: $*" >&2
	for f in "${FV_ERR:-}" ${JOB:+"$JOB"/*.log}; do
		[ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
	done
	return 1
}

# wait_for CMD... : poll a condition for up to 10 s.
wait_for() {
	local i
	for i in $(seq 200); do
		"$@" && return 0
		nap 0.05
	done
	echo "timed out waiting for: $*" >&2
	return 1
}

# wait_for_gone PGID: up to 10 s for a job's process group to leave (a
# torchrun job started in a session of its own).
wait_for_gone() {
	local i
	for i in $(seq 200); do
		pgrep -g "$1" >/dev/null || return 0
		nap 0.05
	done
	return 1
}

# start_workload LOG CMD...: the one way the tests start a workload: CMD in
# the background, its output in LOG, WL_PID from its first "pid=" line (the
# process that holds the markers or torch, which CMD may reach through env,
# sh or unshare).  WL_READY=REGEX waits for that line too (a workload that
# says more once it is ready).  Waits on the line, up to 60 s (importing
# torch takes seconds, many more on a loaded machine); a CMD that ends
# without it fails at once, its last lines shown.
start_workload() {
	local log=$1 bg i
	shift
	"$@" >"$log" 2>&1 &
	bg=$!
	WL_PIDS+=("$bg")
	disown # no "Killed" notices from teardown
	WL_PID=
	for i in $(seq 1200); do
		workload_ready "$log" && return 0
		kill -0 "$bg" 2>/dev/null || break
		nap 0.05
	done
	workload_ready "$log" && return 0 # it said it and ended since
	echo "the workload gave no ${WL_READY:-pid=} line (${i}th look, $(kill -0 "$bg" 2>/dev/null &&
		echo running || echo ended)): $*" >&2
	tail -n 20 "$log" >&2
	return 1
}

workload_ready() { # LOG: its pid= (and WL_READY) line is there; sets WL_PID
	grep -q '^pid=' "$1" || return 1
	[ -z "${WL_READY:-}" ] || grep -q "$WL_READY" "$1" || return 1
	WL_PID=$(sed -n 's/^pid=//p' "$1" | head -n1)
}

# start_torchrun_job N SCRIPT ARGS...: N ranks of SCRIPT DIR ARGS under
# torchrun, in their own session, DIR=$JOB; waits for each rank's
# $JOB/rank.R ("pid ...") and sets RANK0..RANK<N-1>, LAUNCHER and
# JOB_PGID (teardown: stop_torchrun_job).
start_torchrun_job() {
	local n=$1 script=$2 r
	shift 2
	(cd "$JOB" && OMP_NUM_THREADS=1 exec setsid "$(dirname "$PY214")/torchrun" --standalone \
		--nproc-per-node "$n" "$script" "$JOB" "$@" >"$JOB/job.log" 2>&1) &
	disown
	for r in $(seq 0 $((n - 1))); do
		wait_long test -e "$JOB/rank.$r"
		eval "RANK$r=$(cut -d' ' -f1 "$JOB/rank.$r")"
	done
	LAUNCHER=$(ps -o ppid= -p "$RANK0" | tr -d ' ')
	JOB_PGID=$(ps -o pgid= -p "$LAUNCHER" | tr -d ' ')
}

# stop_torchrun_job: the ranks leave together once rank 0 sees $JOB/stop;
# the group is killed otherwise.
stop_torchrun_job() {
	[ -n "${JOB:-}" ] && touch "$JOB/stop"
	[ -n "${JOB_PGID:-}" ] && { wait_for_gone "$JOB_PGID" || kill -KILL -- "-$JOB_PGID" 2>/dev/null; }
	return 0
}

# Real PyTorch for the tests: the venvs `make venv` builds (CI builds them:
# `make test` depends on it), or the interpreters FVBPF_TORCH_PY_214/_213 name.
PY214=${FVBPF_TORCH_PY_214:-$BUILD/venv-torch214/bin/python3}
PY213=${FVBPF_TORCH_PY_213:-$BUILD/venv-torch213/bin/python3}

# The independent reader of --format pftrace traces and its protobuf venv.
PB_PY=$BUILD/venv-pb/bin/python
PFCHECK=$ROOT/tests/lib/pftrace_check.py

need_pb() {
	[ -x "$PB_PY" ] || skip "no $PB_PY (make venv)"
}

# need_torch PY: a missing venv fails the test: it is part of the suite, not optional.
need_torch() {
	if [ ! -x "$1" ]; then
		echo "no torch venv at $1: run \`make venv\` (or set FVBPF_TORCH_PY_214/_213)" >&2
		return 1
	fi
}

# oracle [-n LINES] FILE PY SCRIPT [ARG...]: the last LINES (1) lines of
# what `PY SCRIPT ARG...` prints (a workload's torch.profiler run of the
# same step the test traces: the counts, shapes, frames or memory fvbpf
# must equal) into FILE.  Each answer is computed once and kept in
# $BUILD/oracle-cache (FVBPF_ORACLE_CACHE), keyed by the interpreter's path,
# its torch (torch/version.py: release and commit), the script and the
# Python files beside it, the arguments and the TORCH_* variables the
# workloads read: both passes and every test asking the same question
# share one run (5 s each, 30 s on a loaded machine; 32 runs before).  A
# run that fails fails the test, its stderr shown, and is not kept.
oracle() {
	local lines=1 file py script dir key spec rc
	if [ "$1" = -n ]; then
		lines=$2
		shift 2
	fi
	file=$1 py=$2 script=$3
	shift 3
	need_torch "$py" || return 1
	dir=${FVBPF_ORACLE_CACHE:-$BUILD/oracle-cache}
	mkdir -p "$dir"
	# where torch is, without importing it (that takes seconds)
	spec=$("$py" -c 'import importlib.util as u, os
s = u.find_spec("torch")
print(os.path.join(os.path.dirname(s.origin), "version.py") if s else "")') || return 1
	[ -f "$spec" ] || { echo "no torch in $py" >&2; return 1; }
	key=$({
		printf '%s\0' "$py" "$@"
		env | grep '^TORCH_' | sort || true
		cat "$spec" "$script" "$(dirname "$script")"/*.py
	} | sha256sum | cut -c1-40)
	# one run per key, whoever asks first; the others wait for its answer
	rc=0
	(
		flock 9
		[ -s "$dir/$key.out" ] && exit 0
		"$py" "$script" "$@" >"$dir/$key.tmp" 2>"$dir/$key.err" && [ -s "$dir/$key.tmp" ] || {
			echo "the oracle failed: $py $script $*" >&2
			tail -n 20 "$dir/$key.err" >&2
			rm -f "$dir/$key.tmp"
			exit 1
		}
		mv "$dir/$key.tmp" "$dir/$key.out"
	) 9>"$dir/$key.lock" || rc=$?
	[ "$rc" -eq 0 ] || return "$rc"
	tail -n "$lines" "$dir/$key.out" >"$file"
}

# run_steps: let the workload go ($BATS_TEST_TMPDIR/go), wait up to 60 s
# for its $BATS_TEST_TMPDIR/done, then for fvbpf.
run_steps() {
	touch "$BATS_TEST_TMPDIR/go"
	local i
	for i in $(seq 600); do
		[ -e "$BATS_TEST_TMPDIR/done" ] && break
		nap 0.1
	done
	wait_fvbpf
}

# start_fvbpf ARGS...: attach in the background, return once it traces
# (up to 30 s: reading and probing libtorch takes seconds on a busy machine).
start_fvbpf() {
	local i
	"$FVBPF" attach "$@" >"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	for i in $(seq 600); do
		grep -q 'fvbpf: tracing' "$FV_ERR" && return 0
		kill -0 "$FV_PID" 2>/dev/null || break
		nap 0.05
	done
	grep -q 'fvbpf: tracing' "$FV_ERR" && return 0
	echo "fvbpf did not start tracing:" >&2
	cat "$FV_ERR" >&2
	return 1
}

# wait_fvbpf [SECONDS]: wait for fvbpf to exit by itself (10 s), return its status.
wait_fvbpf() {
	local i
	for i in $(seq $((${1:-10} * 20))); do
		kill -0 "$FV_PID" 2>/dev/null || break
		nap 0.05
	done
	if kill -0 "$FV_PID" 2>/dev/null; then
		echo "fvbpf did not stop; what it said:" >&2
		tail -n 30 "$FV_ERR" >&2
		return 99
	fi
	FV_STATUS=0
	wait "$FV_PID" || FV_STATUS=$?
	FV_PID=
	return 0
}

# The workload's own count for a name, from its "counts ..." line.
wl_count() {
	sed -n 's/^counts .*\b'"$1"'=\([0-9]*\).*/\1/p' "${2:-$WL_LOG}"
}

# The checker's count for a line like "region training_forward=5".
chk_count() { # key output
	sed -n 's/^'"$1"'=\([0-9]*\).*/\1/p' <<<"$2"
}
