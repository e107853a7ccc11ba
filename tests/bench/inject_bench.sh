#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# `make bench` section 9: `fvbpf attach --inject`.
#   a. Time the target is stopped by the injection (fvbpf's own figure,
#      manifest.json agent_library.stopped_us: from PTRACE_INTERRUPT to
#      PTRACE_DETACH, the dlopen() call inside it), over RUNS fresh
#      processes (build/tests/inject_target, not linked with libfvbpf,
#      ticking every 10 ms): min/median/max.  Goal: median under 5 ms.
#      Also with 16 busy threads beside the main one.
#   b. Attach to first segment: from starting `fvbpf attach -r
#      training_train_one_step` to the first trace file, for a fresh
#      process with --inject (it then finds the library at its next 10 ms
#      tick, as a lazy marker lookup would) and for the same kind of
#      process that already has the library (injected by an earlier
#      attach; no --inject).  RUNS runs each, interleaved; medians.
set -u
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
FVBPF=${FVBPF:-$BUILD/fvbpf}
INJ=$BUILD/tests/inject_target
RUNS=${BENCH_INJECT_RUNS:-20}
TMP=$(mktemp -d "${TMPDIR:-/tmp}"/fvbpf-inject-bench.XXXXXX)
WL=

# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
# not bench_cleanup: one target at a time (WL), ended with SIGTERM as stop_wl does
cleanup() {
	[ -n "$WL" ] && kill "$WL" 2>/dev/null
	rm -rf "$TMP"
}
on_exit cleanup
minmax() { printf '%s\n' "$@" | sort -g | sed -n '1p;$p' | paste -sd' '; }

[ -x "$INJ" ] || die "$INJ not built (make)"

# start_wl ARGS...: a fresh target, WL set to its PID.
start_wl() {
	"$INJ" "$@" >"$TMP/wl" 2>&1 &
	WL=$!
	for _ in $(seq 400); do grep -q '^pid=' "$TMP/wl" && return 0; sleep 0.005; done
	die "inject_target did not start"
}
stop_wl() { kill "$WL" 2>/dev/null; wait "$WL" 2>/dev/null; WL=; }

# stopped_us ARGS...: inject into a fresh target, print the time it was stopped.
stopped_us() {
	local us
	start_wl --mode tick --count 100000 "$@"
	rm -rf "$TMP/out"
	"$FVBPF" attach --inject -p "$WL" --window 1 -d 0.05 -o "$TMP/out" >/dev/null 2>"$TMP/err" ||
		die "fvbpf failed: $(cat "$TMP/err")"
	us=$(python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['processes'][0]['agent_library']; assert a['how']=='injected', a; print(a['stopped_us'])" "$TMP/out/manifest.json") ||
		die "not injected: $(cat "$TMP/err")"
	stop_wl
	echo "$us"
}

# first_segment_ms [--inject]: fvbpf start to the first trace file.
first_segment_ms() {
	local t0 t1 fv
	rm -rf "$TMP/out"
	t0=$(now)
	"$FVBPF" attach "$@" -p "$WL" -r training_train_one_step -n 2 -o "$TMP/out" >/dev/null 2>"$TMP/err" &
	fv=$!
	for _ in $(seq 5000); do
		compgen -G "$TMP/out/trace_*.json" >/dev/null && break
		kill -0 "$fv" 2>/dev/null || break
		sleep 0.002
	done
	t1=$(now)
	wait "$fv" || die "fvbpf failed: $(cat "$TMP/err")"
	compgen -G "$TMP/out/trace_*.json" >/dev/null || die "no segment: $(cat "$TMP/err")"
	ms "$t0" "$t1"
}

echo
echo "9. fvbpf attach --inject ($RUNS runs)"
A=() ; T=()
for _ in $(seq "$RUNS"); do
	A+=("$(stopped_us)")
	T+=("$(stopped_us --threads 16)")
done
read -r amin amax <<<"$(minmax "${A[@]}")"
read -r tmin tmax <<<"$(minmax "${T[@]}")"
amed=$(median "${A[@]}")
printf '   target stopped, 1 thread:           min %6s us  median %6s us  max %6s us   (goal: median under 5000 us) %s\n' \
	"$amin" "$amed" "$amax" "$(awk "BEGIN{print ($amed < 5000) ? \"PASS\" : \"ABOVE GOAL\"}")"
printf '   target stopped, 16 busy threads:    min %6s us  median %6s us  max %6s us\n' \
	"$tmin" "$(median "${T[@]}")" "$tmax"

WITH=() ; WITHOUT=()
for _ in $(seq "$RUNS"); do
	start_wl --mode tick --count 100000 --regions
	WITH+=("$(first_segment_ms --inject)")
	WITHOUT+=("$(first_segment_ms)")
	stop_wl
done
printf '   attach to first segment, --inject into a fresh process:   median %7s ms  (min/max %s)\n' \
	"$(median "${WITH[@]}")" "$(minmax "${WITH[@]}" | tr ' ' /)"
printf '   attach to first segment, library already loaded:         median %7s ms  (min/max %s)\n' \
	"$(median "${WITHOUT[@]}")" "$(minmax "${WITHOUT[@]}" | tr ' ' /)"
exit 0
