#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Run the libFuzzer harnesses: each for SECONDS, from its committed seed
# corpus (tests/fuzz/corpus/NAME, never written to) plus a work corpus of
# what it found: BUILD/fuzz/corpus/NAME kept between runs with FUZZ_KEEP=1
# (make fuzz), else a temporary one (make test, as root: nothing left in
# the build tree).  One TAP line per harness: ok when it ran its time
# without a crash, leak, timeout or runaway allocation.  A finding's input
# is copied to BUILD/fuzz/artifacts/ (rerun: BUILD/fuzz/fuzz_NAME FILE).
#
#   tests/fuzz/run.sh SECONDS [NAME...]     (default: every built harness)
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
secs=${1:?seconds}
shift
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for b in "$BUILD"/fuzz/fuzz_*; do
		[ -x "$b" ] && names+=("$(basename "$b" | sed 's/^fuzz_//')")
	done
fi
if [ ${#names[@]} -eq 0 ]; then
	echo "ok 1 - fuzzers # skip not built (clang without -fsanitize=fuzzer)"
	echo "1..1"
	exit 0
fi

# Per harness: the longest input worth trying (an ELF needs room).
max_len() {
	case $1 in
	elf) echo 65536 ;;
	gpu_chunk) echo 32768 ;;
	*) echo 16384 ;;
	esac
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "${FUZZ_KEEP:-0}" = 1 ]; then
	keep=$BUILD/fuzz
else
	keep=$tmp
fi

# A finding's input, where the user can reach it (not root's).
save_artifacts() { # name
	local f
	for f in "$tmp/artifacts/$1-"*; do
		[ -e "$f" ] || continue
		mkdir -p "$BUILD/fuzz/artifacts"
		cp "$f" "$BUILD/fuzz/artifacts/"
		[ -n "${SUDO_UID:-}" ] && chown -R "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$BUILD/fuzz/artifacts"
		echo "# input: $BUILD/fuzz/artifacts/$(basename "$f")"
	done
}

# Per harness: extra options.  The decoder logs as fvbpf does, to stderr:
# closed (libFuzzer keeps its own copy for its reports).
extra() {
	case $1 in
	events) echo -close_fd_mask=2 ;;
	esac
}

# One harness: its TAP line (numbered N) and any report, in $tmp/NAME.tap.
fuzz_one() { # N NAME
	local n=$1 name=$2 bin work log status execs cov
	bin=$BUILD/fuzz/fuzz_$name
	work=$keep/corpus/$name
	log=$keep/$name.log
	mkdir -p "$work"
	# -rss_limit_mb / -malloc_limit_mb: an input that makes fvbpf allocate
	# without bound is a finding too.
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
		-max_len="$(max_len "$name")" -print_final_stats=1 $(extra "$name") \
		-artifact_prefix="$tmp/artifacts/${name}-" \
		"$work" "tests/fuzz/corpus/$name" >"$log" 2>&1
	status=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n1)
	if [ $status -eq 0 ]; then
		echo "ok $n - fuzz $name: ${execs:-?} executions in ${secs} s, ${cov:-cov: ?}, no finding"
	else
		echo "not ok $n - fuzz $name: exit $status after ${execs:-?} executions"
		grep -E -A12 '^(==[0-9]+==ERROR|.*runtime error)' "$log" | head -n 40 | sed 's/^/# /'
		save_artifacts "$name"
	fi
}

# Each harness is one single-threaded process: FUZZ_JOBS of them at a time
# (default: one per CPU), each still for its full SECONDS; the TAP lines
# come out in order once all are done.
par=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$par" -ge 1 ] 2>/dev/null || par=1
n=0 rc=0
mkdir -p "$tmp/artifacts"
for name in "${names[@]}"; do
	n=$((n + 1))
	while [ "$(jobs -pr | wc -l)" -ge "$par" ]; do
		wait -n
	done
	fuzz_one "$n" "$name" >"$tmp/$name.tap" &
done
wait
for name in "${names[@]}"; do
	cat "$tmp/$name.tap"
	grep -q '^not ok' "$tmp/$name.tap" && rc=1
done
echo "1..$n"
exit $rc
