# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Sourced by the make-bench scripts (tests/bench/*.sh): the helpers they
# share.  The caller sets TMP (its scratch folder), FVBPF, and WPID (the
# workload) before calling round/fv_round; PIDS collects what cleanup kills.
# A script that defines one of these names again after sourcing this file
# (its own round, fv_round, verdict...) keeps its own, which differs.

# die MESSAGE: BENCH_TAG (default bench) names the script in the line
die() { echo "${BENCH_TAG:-bench}: FAILED: $*" >&2; DIED=1; exit 1; }
note() { echo "bench: $*" >&2; }

PIDS=()
bench_cleanup() {
	local p
	for p in "${PIDS[@]:-}"; do
		[ -n "$p" ] && kill -0 "$p" 2>/dev/null && kill -INT "$p" 2>/dev/null || true
	done
	sleep 0.2
	for p in "${PIDS[@]:-}"; do
		[ -n "$p" ] && kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
	done
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
}

wait_file() { # FILE PATTERN SECONDS PID: 0 once FILE has PATTERN, 1 if PID ends first
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		kill -0 "$4" 2>/dev/null || { sleep 0.1; grep -q -- "$2" "$1" 2>/dev/null; return; }
		sleep 0.05
	done
	return 1
}

now() { date +%s.%N; }
ms() { awk "BEGIN{printf \"%.1f\", ($2-$1)*1000}"; } # T0 T1 (from now): ms between

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

wait_gone() { # PID SECONDS: wait for PID to exit (SIGKILL after SECONDS); sets RC
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$1" 2>/dev/null && { kill -KILL "$1" 2>/dev/null || true; }
	RC=0
	wait "$1" || RC=$?
}

stop() { # PID: SIGINT, wait (SIGKILL after 60 s); sets RC
	kill -INT "$1" 2>/dev/null || true
	wait_gone "$1" 60
}

# shellcheck source=tests/lib/bpftrace_int.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/bpftrace_int.sh"

# bpftrace_stop PID [SECONDS]: stop's twin for bpftrace (bpftrace_int:
# SIGINT until it ends), SIGKILL after SECONDS (60); sets RC
bpftrace_stop() {
	bpftrace_int "$1" "${2:-60}" || true
	wait_gone "$1" 0
}

# round DIR K [KIND]: run the workload's round K and wait for it; KIND (the
# ab mode's: what its B blocks run) goes in DIR/go.K, written whole before
# the workload can see it
round() {
	local i
	printf '%s\n' "${3:-}" >"$1/go.$2.tmp"
	mv "$1/go.$2.tmp" "$1/go.$2"
	for ((i = 0; i < 6000; i++)); do
		[ -e "$1/done.$2" ] && return 0
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.05
	done
	die "round $2 did not finish: $(tail -n 5 "$1/wl.log")"
}

# start_py DIR ARGS...: "$PY" ARGS, a workload that prints pid= when it is
# ready, its output in DIR/wl.log; sets WPID, WLOG
start_py() {
	local d=$1
	shift
	WLOG=$d/wl.log
	"$PY" "$@" >"$WLOG" 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
	wait_file "$WLOG" '^pid=' 120 "$WPID" || { tail -n 15 "$WLOG" >&2; die "torch workload did not start"; }
}

# go_round DIR K: round's variant for workloads that only look for DIR/go.K
# (an empty file); done.K counts even when the workload has exited right
# after writing it, and a failure shows the end of WLOG
go_round() {
	local i
	touch "$1/go.$2"
	for ((i = 0; i < 6000; i++)); do
		[ -e "$1/done.$2" ] && return 0
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.05
	done
	[ -e "$1/done.$2" ] || { tail -n 15 "$WLOG" >&2; die "round $2 did not finish"; }
}

# fv_round DIR K KIND WANT ARGS...: attach fvbpf (output DIR/oK, its stderr
# DIR/fK.err, which must say WANT), run round K, detach.  BPF_STATS=1:
# bpftool's program list before the attach and around the round (bpf_runs);
# FV_THEN="K2 KIND2": round K2 too, before the detach
fv_round() {
	local d=$1 k=$2 kind=$3 want=$4
	shift 4
	[ -z "${BPF_STATS:-}" ] || bpftool -j prog show >"$d/bpf$k.old" 2>/dev/null || true
	"$FVBPF" attach -p "$WPID" -o "$d/o$k" "$@" >"$d/f$k.out" 2>"$d/f$k.err" &
	FPID=$!
	PIDS+=("$FPID")
	wait_file "$d/f$k.err" 'fvbpf: tracing' 120 "$FPID" || die "fvbpf did not attach: $(tail -n 5 "$d/f$k.err")"
	grep -q -- "$want" "$d/f$k.err" || die "round $k: fvbpf did not say '$want'"
	[ -z "${BPF_STATS:-}" ] || bpftool -j prog show >"$d/bpf$k.before" 2>/dev/null || true
	round "$d" "$k" "$kind"
	[ -z "${BPF_STATS:-}" ] || bpftool -j prog show >"$d/bpf$k.after" 2>/dev/null || true
	if [ -n "${FV_THEN:-}" ]; then
		set -- $FV_THEN
		if [ -n "${BPF_STATS:-}" ]; then
			cp "$d/bpf$k.old" "$d/bpf$1.old" 2>/dev/null || true
			bpftool -j prog show >"$d/bpf$1.before" 2>/dev/null || true
		fi
		round "$d" "$1" "$2"
		[ -z "${BPF_STATS:-}" ] || bpftool -j prog show >"$d/bpf$1.after" 2>/dev/null || true
	fi
	stop "$FPID"
	[ "$RC" -eq 0 ] || die "fvbpf exited with status $RC (round $k): $(tail -n 5 "$d/f$k.err")"
}

# fig DIR K CLOCK FIELD: what the ab mode printed for round K, "round K
# CLOCK a_ms X ratio Y" (CLOCK wall or cpu): FIELD 1 is X, 2 is Y
fig() {
	local v
	v=$(sed -n "s/^round $2 $3 a_ms \([0-9.]*\) ratio \([0-9.]*\)\$/\\$4/p" "$1/wl.log")
	[ -n "$v" ] || die "round $2 printed no $3 figure: $(tail -n 3 "$1/wl.log")"
	echo "$v"
}

# ratio_verdict LABEL NUM DEN TARGET: NUM/DEN against TARGET (at most); n/a
# when DEN is not above 0.  RATIO_LABEL: the label's printf format (default
# %-66s); RATIO_NA_TARGET=0: the n/a line without the target
ratio_verdict() {
	local ratio v fmt=${RATIO_LABEL:-%-66s} na="   n/a (the reference cost is within noise of A)"
	if awk "BEGIN{exit !($3 > 0)}"; then
		ratio=$(awk "BEGIN{printf \"%.2f\", $2/$3}")
		if awk "BEGIN{exit !($ratio <= $4)}"; then v=PASS; else v="ABOVE TARGET"; fi
		printf "$fmt %5sx   (target: at most %sx)   %s\n" "$1" "$ratio" "$4" "$v"
	elif [ "${RATIO_NA_TARGET:-1}" = 1 ]; then
		printf "$fmt$na   (target: at most %sx)\n" "$1" "$4"
	else
		printf "$fmt$na\n" "$1"
	fi
}

# step_events DIR GLOB: torch events a step, from the second of the segment
# summaries DIR/GLOB (the first may have begun mid-step); 0 with fewer than 3
step_events() {
	python3 -c 'import json,glob,sys
f=sorted(glob.glob(sys.argv[1]+"/"+sys.argv[2]))
print(sum(r["count"] for r in json.load(open(f[1]))["rows"] if r["kind"] in ("cpu_op","user_annotation")) if len(f) > 2 else 0)' "$1" "$2"
}

verdict() { # LABEL VALUE CHECK GOAL
	local v=met
	awk -v x="$2" "BEGIN{exit !($3)}" || v="NOT MET"
	printf '   %-52s %8s   (goal: %s)   %s\n' "$1" "$2" "$4" "$v"
}

# bpf_runs DIR K: "RUNS NS" of the BPF programs fvbpf loaded for round K
# (those not there before its attach), run during the round: with
# kernel.bpf_stats_enabled=1, the kernel counts every run exactly
bpf_runs() {
	python3 - "$1/bpf$2.old" "$1/bpf$2.before" "$1/bpf$2.after" <<'PY'
import json, sys
def load(p):
    try:
        return {x["id"]: x for x in json.load(open(p))}
    except (OSError, ValueError):
        return {}
old, a, b = (load(p) for p in sys.argv[1:])
ids = [i for i in b if i not in old and i in a]
print(sum(b[i].get("run_cnt", 0) - a[i].get("run_cnt", 0) for i in ids),
      sum(b[i].get("run_time_ns", 0) - a[i].get("run_time_ns", 0) for i in ids))
PY
}

# bpf_prog_delta A B: "RUNS NS", the runs and run time of the programs in
# both of two `bpftool prog show ... --json` listings, A before and B
# after (one program or a list; an unreadable one counts nothing)
bpf_prog_delta() {
	python3 - "$1" "$2" <<'PY'
import json, sys
def load(p):
    try:
        v = json.load(open(p))
    except (OSError, ValueError):
        return {}
    return {x["id"]: x for x in (v if isinstance(v, list) else [v])}
a, b = load(sys.argv[1]), load(sys.argv[2])
print(sum(b[i].get("run_cnt", 0) - a[i].get("run_cnt", 0) for i in b if i in a),
      sum(b[i].get("run_time_ns", 0) - a[i].get("run_time_ns", 0) for i in b if i in a))
PY
}

# needs_torch "N. TITLE": the section's SKIP line, and exit 0, without a
# torch venv at $PY; its end where $FVBPF is not built
needs_torch() {
	if [ ! -x "$PY" ]; then
		echo "$1: SKIP (no torch venv at $PY: run \`make venv\`)"
		exit 0
	fi
	[ -x "$FVBPF" ] || die "$FVBPF not built (make)"
}

sn() { # DIR K: the scope cost round K printed (ns)
	local v
	v=$(sed -n "s/^round $2 scope_ns \([0-9.]*\)\$/\1/p" "$1/wl.log")
	[ -n "$v" ] || die "round $2 printed no scope cost: $(tail -n 3 "$1/wl.log")"
	echo "$v"
}

# derived_outside DIR KN KC KA KB STEPS CLOCK: 1 + the cost outside segments
# of a step, as a share of round KN's A steps (CLOCK: wall or cpu).  Round
# KN ran attached (BPF_STATS=1) on a scope that never comes and KC
# (scopecost) right after it, in the same attach; KA and KB not attached
# around them.  Outside segments the callbacks do not run (their count is
# exact) and the BPF programs that do are those of record_function scopes,
# so the cost is the scopes a step (BPF runs a step in KN over runs a scope
# in KC, 10,000 scopes) times what an empty scope costs more attached (KC
# against KA and KB, the same process in the same minute).
derived_outside() {
	local runs sruns extra
	read -r runs _ < <(bpf_runs "$1" "$2")
	read -r sruns _ < <(bpf_runs "$1" "$3")
	[ "${sruns:-0}" -gt 0 ] || die "no BPF runs counted in round $3 (kernel.bpf_stats_enabled?)"
	extra=$(awk "BEGIN{print $(sn "$1" "$3")-($(sn "$1" "$4")+$(sn "$1" "$5"))/2}")
	awk "BEGIN{print 1+$extra*($runs/$6)/($sruns/10000)/($(fig "$1" "$2" "$7" 1)*1e6)}"
}

# on_exit COMMANDS: run COMMANDS when the script exits, and before them,
# when it ends with a failure die did not explain, name the command that
# failed: set -e ends a script without a word, which left a make bench
# saying only "the PyTorch section failed (above)".  A signal says so too.
on_exit() {
	trap 'bench_rc=$?; [ "$bench_rc" -eq 0 ] || [ -n "${DIED:-}" ] ||
		echo "${BENCH_TAG:-bench}: FAILED: exit status $bench_rc after: $BASH_COMMAND" >&2; '"$1" EXIT
	trap 'echo "${BENCH_TAG:-bench}: interrupted" >&2; DIED=1; exit 130' INT TERM
}

# bpf_stats_saved: kernel.bpf_stats_enabled back to what it is now
# (STATS_WAS) when the script exits, and bench_cleanup, for a script that
# turns the stats on and off itself
bpf_stats_saved() {
	STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
	on_exit 'sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS" 2>/dev/null; bench_cleanup'
}

# bpf_stats_on: kernel.bpf_stats_enabled=1 until the script exits
bpf_stats_on() {
	bpf_stats_saved
	sysctl -qw kernel.bpf_stats_enabled=1 2>/dev/null || true
}
