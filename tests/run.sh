#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# The whole test suite: C unit tests (plain and ASan/UBSan), the Python
# binding self-check, and the BATS end-to-end tests (real BPF, needs root),
# once with build/fvbpf and once with the ASan/UBSan build/asan/fvbpf.
# Every runner speaks TAP; this script adds them up and ends with
# "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD FVBPF_ROOT=$PWD

passed=0 failed=0 skipped=0 run_failed=0
started=$SECONDS
rcf=$(mktemp)
trap 'rm -f "$rcf"' EXIT

# Reads TAP on stdin, echoes each line as it comes, and adds up its
# ok/not ok/skip lines (run_failed: this runner had a "not ok").
count_tap() {
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		"not ok"*) failed=$((failed + 1)) run_failed=1 ;;
		"ok "*"# skip"* | "ok "*"# SKIP"*) skipped=$((skipped + 1)) ;;
		"ok "*) passed=$((passed + 1)) ;;
		esac
	done
}

run_tap() { # name command...
	local name=$1 rc
	shift
	echo "# --- $name (at $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s)"
	run_failed=0
	count_tap < <("$@" 2>&1; echo $? >"$rcf")
	rc=$(cat "$rcf")
	if [ "$rc" -ne 0 ] && [ "$run_failed" -eq 0 ]; then
		echo "not ok - $name exited with status $rc"
		failed=$((failed + 1))
	fi
}

for t in "$BUILD"/tests/test_* "$BUILD"/tests/asan/test_*; do
	[ -x "$t" ] || continue
	run_tap "unit ${t#"$BUILD"/tests/}" "$t"
done

# The libFuzzer harnesses, 8 s each from their seeds ("make fuzz"
# runs them for minutes); a skip line where clang cannot build them.
run_tap "fuzz" env BUILD="$BUILD" tests/fuzz/run.sh "${FUZZ_CI_SECONDS:-8}"

run_tap "python binding" python3 tests/workloads/py_binding_check.py "$BUILD/libfvbpf.so"

# Python unittest, verbose, as TAP lines; UNITTEST_PY names another
# interpreter (a venv of make venv), whose absence is a failure.
unittest_tap() {
	local py=${UNITTEST_PY:-python3}
	if ! command -v "$py" >/dev/null; then
		echo "not ok 1 - no $py: run make venv"
		return 1
	fi
	"$py" -m unittest -v "$@" 2>&1 | awk '
		/ \.\.\. ok$/ { n++; print "ok " n " - " $1; next }
		/ \.\.\. skipped/ { n++; print "ok " n " - " $1 " # skip"; next }
		/ \.\.\. (FAIL|ERROR)$/ { n++; print "not ok " n " - " $1; next }
		{ print "# " $0 }'
}
run_tap "GPU check report parser" unittest_tap tests/gpu/test_gpu_report.py
# The Kubernetes manifest of docs/k8s against the API's own schemas.
UNITTEST_PY=$BUILD/venv-k8s/bin/python run_tap "Kubernetes manifest" unittest_tap \
	tests/k8s/test_manifest.py
# The layout: includes run down the stages of user/, never in a circle.
run_tap "include layout" python3 tools/include_check.py --tap
# docs/errors.md: each message of its tables is printed by the source.
run_tap "errors table" python3 tools/errors_check.py --tap

if [ "$(id -u)" -ne 0 ]; then
	echo "# BATS end-to-end tests need root (BPF): run 'make test' (it uses sudo)"
	echo "not ok - end-to-end tests not run: not root"
	failed=$((failed + 1))
else
	mountpoint -q /sys/kernel/tracing 2>/dev/null ||
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
	# Both passes, files side by side where they allow it: once against
	# build/fvbpf, once against the ASan/UBSan build/asan/fvbpf (what the
	# target sends is hostile, and the next overflow in the loader should
	# show here, not in a job).  Every test runs in both, except those that
	# say plain_pass_only (no fvbpf code that this pass does not run
	# elsewhere: docs/testing.md lists them) or sanitized_pass_only;
	# FVBPF_ASAN_ALL=1 runs them all in both.
	run_tap "bats (plain and ASan/UBSan passes)" tests/run-bats.sh
fi

# The suite's own time, without apt, venvs and builds: CI's budget for it
# is 30 minutes.
echo "# tests took $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
