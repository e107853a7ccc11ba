#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# The BATS end-to-end tests in their two passes, for tests/run.sh:
#
#   tests/run-bats.sh [FILE.bats...]        (default: every tests/bats/*.bats)
#
# plain: against $BUILD/fvbpf; asan: against the ASan/UBSan
# $BUILD/asan/fvbpf (FVBPF_SANITIZED=1; plain_pass_only and
# sanitized_pass_only in tests/bats/helpers.bash say which tests skip where).
# Files run $BATS_JOBS at a time (GNU parallel), both passes of a file
# among them, the longest first (their times in the last run, kept in
# $BUILD/bats-times; on a fresh clone those of tests/bats/times, a CI run's,
# so that a short file with a long test, soak.bats, does not start last
# and run alone at the end); a file tagged `# bats file_tags=serial` (it stops
# targets, counts against time or rates: its header says why) runs alone
# afterwards, one pass after the other.  Tests within a file run in order.
#
# Output: TAP, each test's line as it ends, numbered in the order they end
# and named by pass and file ("ok 12 asan attach_c.bats: NAME in 812ms"),
# bats' lines about a failure after it, as comments that name them too.  A
# file whose tests did not all report (bats itself failed) is a "not ok"
# line.  Exit status 1 if anything failed.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD FVBPF_ROOT=$PWD
BATS_JOBS=${BATS_JOBS:-4}
TIMES=$BUILD/bats-times
DEFAULT_TIMES=tests/bats/times

# cpu_secs FILE: the user + system seconds of the waited-for children in
# FILE, the output of the shell's `times` (run in that shell: in a pipe or
# $(...) it counts a new subshell's).
cpu_secs() {
	awk 'NR == 2 {
		split($1, u, /[ms]/); split($2, s, /[ms]/)
		printf "%.1f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$1"
	rm -f "$1"
}

# busy_ticks: the machine's busy CPU time in clock ticks (not idle or
# iowait), all CPUs, from /proc/stat.
busy_ticks() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 }' /proc/stat
}

# one PASS FILE: the file's tests in that pass, their lines labelled.
one() {
	local pass=$1 file=$2 name line planned=0 seen=0 failed=0 rc rcf
	local plan_re='^1\.\.([0-9]+)$' result_re='^((not )?ok [0-9]+ )(.*)$'
	name="$pass $(basename "$file")"
	if [ "$pass" = asan ]; then
		export FVBPF_BIN=$BUILD/asan/fvbpf FVBPF_SANITIZED=1
	fi
	rcf=$(mktemp)
	while IFS= read -r line; do
		if [[ $line =~ $plan_re ]]; then
			planned=${BASH_REMATCH[1]}
		elif [[ $line =~ $result_re ]]; then
			seen=$((seen + 1))
			[ -z "${BASH_REMATCH[2]}" ] || failed=1
			printf '%s%s: %s\n' "${BASH_REMATCH[1]}" "$name" "${BASH_REMATCH[3]}"
		else
			printf '# %s: %s\n' "$name" "${line#\# }"
		fi
	done < <(
		start=$SECONDS
		bats --timing --tap "$file" 2>&1
		echo $? >"$rcf"
		# the CPU its tests and what they started used (the waited-for
		# children's, in seconds), against its time: where the suite's
		# two CPUs go
		times >"$rcf.cpu"
		echo "# $(cpu_secs "$rcf.cpu") s of CPU in $((SECONDS - start)) s"
	)
	rc=$(cat "$rcf")
	rm -f "$rcf"
	if [ "$seen" -ne "$planned" ] || { [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; }; then
		echo "not ok 0 $name: $seen of $planned tests reported, bats exited with status $rc"
		return 1
	fi
	return "$failed"
}

if [ "${1:-}" = --one ]; then
	one "$2" "$3"
	exit
fi

files=("$@")
[ ${#files[@]} -gt 0 ] || files=(tests/bats/*.bats)
parallel_jobs=() serial=() total=0 time_files=()
for t in "$TIMES" "$DEFAULT_TIMES"; do
	[ -r "$t" ] && time_files+=("$t")
done
for f in "${files[@]}"; do
	n=$(grep -c '^@test ' "$f")
	total=$((total + 2 * n))
	if grep -q '^# bats file_tags=.*\bserial\b' "$f"; then
		serial+=("$f")
		continue
	fi
	for p in plain asan; do
		# the last run's seconds, else a CI run's, else the file's size:
		# longest first
		s=$(awk -v p="$p" -v f="$(basename "$f")" '$1 == p && $2 == f { print $3; exit }' \
			"${time_files[@]}" /dev/null)
		parallel_jobs+=("${s:-$(($(wc -c <"$f") / 100))} $p $f")
	done
done

# renumber: the lines of every job in the order they end; each pass and
# file's seconds kept for the next run's order.
renumber() {
	local line n=0 key ms
	local time_re='^(not )?ok [0-9]+ (plain|asan) ([^:]*): .* in ([0-9]+)ms'
	local num_re='^(not )?ok [0-9]+ (.*)$'
	declare -A secs=()
	while IFS= read -r line; do
		if [[ $line =~ $time_re ]]; then
			key="${BASH_REMATCH[2]} ${BASH_REMATCH[3]}"
			ms=${BASH_REMATCH[4]}
			secs[$key]=$((${secs[$key]:-0} + ms))
		fi
		if [[ $line =~ $num_re ]]; then
			n=$((n + 1))
			line="${BASH_REMATCH[1]}ok $n ${BASH_REMATCH[2]}"
		fi
		printf '%s\n' "$line"
	done
	for key in "${!secs[@]}"; do
		echo "$key $((secs[$key] / 1000))"
	done >"$TIMES.new"
	# keep the times of files this run did not run
	[ -f "$TIMES" ] && awk 'NR == FNR { seen[$1 " " $2] = 1; next } !(($1 " " $2) in seen)' \
		"$TIMES.new" "$TIMES" >>"$TIMES.new"
	mv "$TIMES.new" "$TIMES"
}

# phase NAME CMD...: CMD's lines, "PASS FILE", run BATS_JOBS at a time
# (serial_files: one at a time, in order), then how long it took and how
# busy the machine's CPUs were meanwhile (this suite and anything else).
phase() {
	local name=$1 t0=$SECONDS b0 rc=0 hz
	shift
	b0=$(busy_ticks)
	if [ "$1" = serial_files ]; then
		serial_files || rc=1
	else
		"$@" | sort -rn | cut -d' ' -f2- |
			parallel --will-cite --line-buffer --colsep ' ' -j "$BATS_JOBS" "$0" --one {1} {2} || rc=1
	fi
	hz=$(getconf CLK_TCK)
	echo "# $name: $((SECONDS - t0)) s, the machine's $(nproc) CPUs busy" \
		"$(( ($(busy_ticks) - b0) / hz )) s of them"
	return $rc
}

serial_files() {
	local f p rc=0
	for f in "${serial[@]}"; do
		for p in plain asan; do
			"$0" --one "$p" "$f" || rc=1
		done
	done
	return $rc
}

mkdir -p "$(dirname "$TIMES")"
echo "1..$total"
echo "# ${#parallel_jobs[@]} file passes $BATS_JOBS at a time, then ${#serial[@]} serial files alone, each pass"
status=0
{
	if [ ${#parallel_jobs[@]} -gt 0 ]; then
		phase "files side by side" printf '%s\n' "${parallel_jobs[@]}" || status=1
	fi
	if [ ${#serial[@]} -gt 0 ]; then
		phase "serial files" serial_files || status=1
	fi
	exit $status
} | renumber
exit "${PIPESTATUS[0]}"
