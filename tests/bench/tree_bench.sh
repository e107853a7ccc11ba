#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# `make bench` section 8: whole jobs (--children).
#   a. Attach and detach time for a tree of 8 processes: a shell launcher
#      with 8 children (build/tests/attach_latency --stay: linked with
#      libfvbpf, idle).  Attach time: from starting fvbpf to its "tracing"
#      line, by which every child is traced; detach: from SIGINT to exit.
#      Beside it the same 8 processes given with -p (no tree following).
#      RUNS runs each, interleaved; medians.
#   b. Time from a new process to its being traced: the launcher, traced
#      with --children, starts N attach_latency processes one after the
#      other; each measures in itself the time from main() to
#      fvbpf_attached() turning 1 (polled every 100 us).  min/median/max.
set -u
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
FVBPF=${FVBPF:-$BUILD/fvbpf}
LAT=$BUILD/tests/attach_latency
RUNS=${BENCH_TREE_RUNS:-5}
NEW=${BENCH_TREE_NEW:-20}
TMP=$(mktemp -d "${TMPDIR:-/tmp}"/fvbpf-tree-bench.XXXXXX)
LAUNCHER=

# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
# not bench_cleanup: the launcher's children are not in PIDS, and KEEP keeps TMP
cleanup() {
	[ -n "$LAUNCHER" ] && kill "$LAUNCHER" 2>/dev/null
	pkill -f "$LAT" 2>/dev/null
	[ -z "$KEEP" ] && rm -rf "$TMP"
}
on_exit cleanup
KEEP=${BENCH_TREE_KEEP:-}

[ -x "$LAT" ] || die "$LAT not built (make)"

# one_run MODE -> "ATTACH_MS DETACH_MS"; MODE tree (-p LAUNCHER --children) or pids
one_run() {
	local mode=$1 args t0 t1 t2 fv i
	if [ "$mode" = tree ]; then args=(-p "$LAUNCHER" --children); else args=(-p "$PIDS"); fi
	rm -rf "$TMP/out"
	t0=$(now)
	"$FVBPF" attach "${args[@]}" -r training_train_one_step -o "$TMP/out" 2>"$TMP/err" >/dev/null &
	fv=$!
	for i in $(seq 3000); do
		grep -q 'fvbpf: tracing' "$TMP/err" && break
		kill -0 "$fv" 2>/dev/null || die "fvbpf exited: $(cat "$TMP/err")"
		sleep 0.005
	done
	t1=$(now)
	grep -q 'tracing 1 region in 8 processes' "$TMP/err" || die "fvbpf did not trace 8 processes: $(cat "$TMP/err")"
	kill -INT "$fv"
	wait "$fv" || die "fvbpf failed: $(cat "$TMP/err")"
	t2=$(now)
	echo "$(ms "$t0" "$t1") $(ms "$t1" "$t2")"
}

bash -c "for i in \$(seq 8); do $LAT --stay >/dev/null & done; wait" &
LAUNCHER=$!
for i in $(seq 200); do [ "$(pgrep -P "$LAUNCHER" | wc -l)" -eq 8 ] && break; sleep 0.05; done
PIDS=$(pgrep -P "$LAUNCHER" | paste -sd,)
ta=() td=() pa=() pd=()
for i in $(seq "$RUNS"); do
	read -r a d <<<"$(one_run tree)" || exit 1
	ta+=("$a") td+=("$d")
	read -r a d <<<"$(one_run pids)" || exit 1
	pa+=("$a") pd+=("$d")
done
kill "$LAUNCHER" 2>/dev/null
pkill -f "$LAT"
wait "$LAUNCHER" 2>/dev/null
LAUNCHER=

# b. new processes under a traced launcher
rm -rf "$TMP/out"
bash -c "while [ ! -e $TMP/go ]; do sleep 0.02; done; \
	for i in \$(seq $NEW); do $LAT >>$TMP/lat.log; sleep 0.1; done" &
LAUNCHER=$!
"$FVBPF" attach -p "$LAUNCHER" --children -r training_train_one_step -o "$TMP/out" 2>"$TMP/err2" >/dev/null &
fv=$!
for i in $(seq 1000); do grep -q 'fvbpf: tracing' "$TMP/err2" && break; sleep 0.01; done
touch "$TMP/go"
wait "$LAUNCHER"
LAUNCHER=
for i in $(seq 500); do kill -0 "$fv" 2>/dev/null || break; sleep 0.02; done
wait "$fv" || die "fvbpf failed: $(cat "$TMP/err2")"
[ "$(grep -c '^latency_us=' "$TMP/lat.log")" -eq "$NEW" ] ||
	die "not every new process was traced: $(grep -c never "$TMP/lat.log") never"
got=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["processes"]))' "$TMP/out/manifest.json")
[ "$got" -eq "$NEW" ] || die "fvbpf traced $got processes, $NEW were started"
mapfile -t lat < <(sed -n 's/^latency_us=//p' "$TMP/lat.log" | awk '{printf "%.1f\n", $1/1000}')

echo
echo "8. Whole jobs (--children), tests/bench/tree_bench.sh: $RUNS runs each, interleaved, medians"
printf '   %-50s %12s %12s\n' "8 processes" "attach ms" "detach ms"
printf '   %-50s %12s %12s\n' "fvbpf attach -p LAUNCHER --children" "$(median "${ta[@]}")" "$(median "${td[@]}")"
printf '   %-50s %12s %12s\n' "fvbpf attach -p PID1,...,PID8" "$(median "${pa[@]}")" "$(median "${pd[@]}")"
printf '   %s\n' "(attach: fvbpf start to its 'tracing' line, BPF load included; detach: SIGINT to exit)"
printf '   new process to traced (%d started one by one, each timing itself from main()):\n' "$NEW"
printf '   %-50s min %s ms, median %s ms, max %s ms\n' "" "$(printf '%s\n' "${lat[@]}" | sort -g | head -1)" \
	"$(median "${lat[@]}")" "$(printf '%s\n' "${lat[@]}" | sort -g | tail -1)"
