#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# `make bench`, section 6: PyTorch operators (tests/bench/bench.sh runs it).
# A benchmark, not a test: it prints figures and exits 0 unless a run failed
# (a tool that did not attach, a workload that died, counts that are wrong).
#
# Method (root; torch venv of `make venv`, else SKIP; bpftrace)
#   a. Per-op cost.  tests/bench/torch_op_cost.py times N torch.add calls on
#      4-element tensors (one at::_ops::add_Tensor::call each) per round
#      (its figure: the thread's CPU time per call, median of 10 chunks), in
#      one process per set, rounds in this order:
#        A  not attached
#        E  bpftrace uprobe count on add_Tensor::call (a bare uprobe)
#        B  fvbpf attached with every torch probe, outside segments
#           (-r torch:no_such_scope: no scope opens the gate)
#        C  fvbpf attached, inside a segment (-r torch:bench_round)
#        D  bpftrace uprobe + uretprobe count on add_Tensor::call
#      SETS sets (a fresh process each), medians over the sets; each run's
#      counts are checked.  Targets: (B-A) about (E-A), (C-A) at most 1.25x
#      (D-A).  The attach time with all operator probes is fvbpf's own
#      figure (one uprobe_multi link for libtorch_cpu), median over the sets.
#   b. Where the nanoseconds go, one more round per set, fvbpf inside, with
#      kernel.bpf_stats_enabled=1 (it costs a little, so that round is not
#      timed): BPF run time per run of torch_call (bpftool prog show:
#      run_time_ns / run_cnt, two runs per op: entry and return), the trap
#      of a bare uprobe (E-A), and the ring records per op.
#   c. Step time of the CPU training loop tests/workloads/torch_train.py, one
#      process per set, STEPS steps per round (median step): not attached,
#      fvbpf attached outside segments, inside segments (--step-by on the
#      exact step scope: every step is in a segment), torch.profiler (CPU
#      activity) in the same process.  Per-event costs use the events of
#      one step as fvbpf counted them.
#
# Usage: tests/bench/torch_bench.sh BUILD_DIR
# Environment: BENCH_TORCH_OPS (calls per round, 100000), BENCH_SETS (3),
#   BENCH_TORCH_STEPS (60), FVBPF_TORCH_PY_214 (python with torch).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
FVBPF=$BUILD/fvbpf
PY=${FVBPF_TORCH_PY_214:-$BUILD/venv-torch214/bin/python3}
N=${BENCH_TORCH_OPS:-100000}
SETS=${BENCH_SETS:-3}
STEPS=${BENCH_TORCH_STEPS:-60}
FN=_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE
STEP_SCOPE='Optimizer.step#AdamW.step'

echo
if [ ! -x "$PY" ]; then
	echo "6. PyTorch operators: SKIP (no torch venv at $PY: run \`make venv\`)"
	exit 0
fi

# shellcheck source=tests/bench/bench_lib.sh
. "$ROOT/tests/bench/bench_lib.sh"
command -v bpftrace >/dev/null || die "bpftrace not found (make deps installs it)"
command -v bpftool >/dev/null || die "bpftool not found (make deps installs it)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fvbpf-torch-bench.XXXXXX")
bpf_stats_saved   # part b turns the stats on for one round a set

# fv_start OUTDIR ARGS...: fvbpf attached to WPID; sets FPID.
fv_start() {
	local o=$1
	shift
	"$FVBPF" attach -p "$WPID" "$@" -o "$o" >"$o.stdout" 2>"$o.stderr" &
	FPID=$!
	PIDS+=("$FPID")
	wait_file "$o.stderr" 'fvbpf: tracing' 120 "$FPID" ||
		{ tail -n 15 "$o.stderr" >&2; die "fvbpf did not attach"; }
	grep -q 'torch operators' "$o.stderr" || { tail -n 15 "$o.stderr" >&2; die "fvbpf probed no torch operators"; }
}

fv_stop() {
	stop "$FPID"
	[ "$RC" -eq 0 ] || { tail -n 15 "$1.stderr" >&2; die "fvbpf exited with status $RC"; }
}

# bt_start OUT PROG: bpftrace attached to WPID; sets BPID.
bt_start() {
	bpftrace -p "$WPID" -e "$2" >"$1" 2>"$1.err" &
	BPID=$!
	PIDS+=("$BPID")
	wait_file "$1" 'Attaching' 120 "$BPID" || { tail -n 15 "$1" "$1.err" >&2; die "bpftrace did not attach"; }
	sleep 1
}

# bt_fail OUT WHAT: bpftrace's own words and its exit (RC from stop), then die
bt_fail() {
	tail -n 15 "$1" "$1.err" >&2
	die "bpftrace counted ${2# }, expected $((N + 1)) (its exit status $RC; 137: still running 60 s after SIGINT)"
}

bt_count() { # OUT KEY -> the count bpftrace printed
	sed -n "s/^@$2: *\([0-9]*\)/\1/p" "$1"
}

# The torch.add count of fvbpf's segments under OUTDIR.
seg_adds() {
	python3 - "$1" <<-'EOF'
		import glob, json, sys
		n = 0
		for f in glob.glob(sys.argv[1] + "/summary_*_segment[0-9]*_*.json"):
		    n += sum(r["count"] for r in json.load(open(f))["rows"] if r["name"] == "aten::add")
		print(n)
	EOF
}

# BPF run time and runs of fvbpf PID's torch_call program: "NS CNT".  The
# program ids are those of PID's descriptors (fdinfo prog_id: this bpftool
# lists no owner pids); bpftool prog show gives run_time_ns and run_cnt.
prog_stats() {
	local ids
	# fvbpf opens and closes segment files meanwhile: a descriptor that
	# closed between the glob and sed's open is no failure (with pipefail
	# it ended the script without a word, in one make bench here)
	ids=$({ sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$1"/fdinfo/* 2>/dev/null || true; } | sort -u | tr '\n' ' ')
	bpftool prog show -j | python3 -c '
import json, sys
ids = {int(i) for i in sys.argv[1].split()}
for p in json.load(sys.stdin):
    if p.get("name") == "torch_call" and p.get("id") in ids:
        print(p.get("run_time_ns", 0), p.get("run_cnt", 0))
        break
else:
    print("0 0")' "$ids"
}

# ---- a + b: per-op cost ------------------------------------------------------
A=() E=() B=() C=() D=() ATT=() BPFNS=() RECS=()
for ((s = 1; s <= SETS; s++)); do
	d=$TMP/op.$s
	mkdir -p "$d"
	start_py "$d" "$ROOT/tests/bench/torch_op_cost.py" "$d" "$N" 6
	LIB=$(awk '$6 ~ /libtorch_cpu\.so$/ {print $6; exit}' "/proc/$WPID/maps")
	[ -n "$LIB" ] || die "the workload maps no libtorch_cpu.so"
	go_round "$d" 0                                                   # A
	bt_start "$d/bte" "uprobe:$LIB:$FN { @e = count(); }"             # E
	go_round "$d" 1
	bpftrace_stop "$BPID"
	[ "$(bt_count "$d/bte" e)" = $((N + 1)) ] || bt_fail "$d/bte" "$(bt_count "$d/bte" e) entries"
	fv_start "$d/fo" -r 'torch:no_such_scope'                         # B
	go_round "$d" 2
	fv_stop "$d/fo"
	[ "$(seg_adds "$d/fo")" = 0 ] || die "fvbpf recorded ops outside segments"
	fv_start "$d/fi" -r 'torch:bench_round'                           # C
	go_round "$d" 3
	fv_stop "$d/fi"
	cp "$d/fi.stderr" "$TMP/probed"
	[ "$(seg_adds "$d/fi")" = $((N + 1)) ] || die "fvbpf recorded $(seg_adds "$d/fi") torch.add in segments, expected $((N + 1))"
	ATT+=("$(python3 -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["processes"][0]["torch"]["attach_ms"])' "$d/fi/manifest.json")")
	bt_start "$d/btd" "uprobe:$LIB:$FN { @e = count(); } uretprobe:$LIB:$FN { @r = count(); }"  # D
	go_round "$d" 4
	bpftrace_stop "$BPID"
	[ "$(bt_count "$d/btd" r)" = $((N + 1)) ] || bt_fail "$d/btd" "$(bt_count "$d/btd" r) returns"
	# b: the same as C, with BPF statistics on (not timed)
	fv_start "$d/fs" -r 'torch:bench_round'
	sysctl -q -w kernel.bpf_stats_enabled=1
	read -r ns0 cnt0 < <(prog_stats "$FPID")
	go_round "$d" 5
	read -r ns1 cnt1 < <(prog_stats "$FPID")
	sysctl -q -w kernel.bpf_stats_enabled="$STATS_WAS"
	fv_stop "$d/fs"
	[ "$cnt1" -gt "$cnt0" ] || die "bpftool shows no runs of fvbpf's torch_call"
	BPFNS+=("$(awk -v a="$ns0" -v b="$ns1" -v c="$cnt0" -v e="$cnt1" 'BEGIN{printf "%.1f", (b-a)/(e-c)}')")
	RECS+=("$(python3 -c 'import json,sys,glob
n=sum(json.load(open(f))["metadata"]["torch_calls"] for f in glob.glob(sys.argv[1]+"/summary_*_segment[0-9]*_*.json"))
print("%.2f" % (2.0 * n / (int(sys.argv[2]) + 1)))' "$d/fs" "$N")")
	stop "$WPID"
	for k in 0 1 2 3 4; do
		v=$(sed -n "s/^round $k ns_per_op \([0-9.]*\)/\1/p" "$WLOG")
		[ -n "$v" ] || die "round $k printed no figure"
		case $k in 0) A+=("$v") ;; 1) E+=("$v") ;; 2) B+=("$v") ;; 3) C+=("$v") ;; 4) D+=("$v") ;; esac
	done
	note "torch set $s/$SETS: ns/op A ${A[-1]}, E ${E[-1]}, B ${B[-1]}, C ${C[-1]}, D ${D[-1]}; attach ${ATT[-1]} ms; BPF ${BPFNS[-1]} ns/run"
	rm -rf "$d"
done
MA=$(median "${A[@]}") ME=$(median "${E[@]}") MB=$(median "${B[@]}") MC=$(median "${C[@]}")
MD=$(median "${D[@]}") MATT=$(median "${ATT[@]}") MBPF=$(median "${BPFNS[@]}") MREC=$(median "${RECS[@]}")
over() { awk "BEGIN{printf \"%.1f\", $1-$MA}"; }
OE=$(over "$ME") OB=$(over "$MB") OC=$(over "$MC") OD=$(over "$MD")

echo "6. PyTorch operators: $N torch.add calls a round (at::_ops::add_Tensor::call), torch $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
echo "   thread CPU ns per op (median of 10 chunks a round), one process per set, rounds A E B C D in turn; $SETS sets, medians"
printf '   %-58s %-30s %9s %10s\n' "run" "per set" "median" "over A"
trow() { # LABEL MEDIAN OVER PER-SET...
	local label=$1 med=$2 ov=$3
	shift 3
	printf '   %-58s %-30s %9.1f %10s\n' "$label" "$(printf '%.0f ' "$@")" "$med" "$ov"
}
trow "A  not attached" "$MA" "-" "${A[@]}"
trow "E  bpftrace uprobe count (a bare uprobe)" "$ME" "$OE" "${E[@]}"
trow "B  fvbpf, all torch probes, outside segments" "$MB" "$OB" "${B[@]}"
trow "C  fvbpf, all torch probes, inside a segment" "$MC" "$OC" "${C[@]}"
trow "D  bpftrace uprobe+uretprobe count (entry+return)" "$MD" "$OD" "${D[@]}"
RATIO_LABEL='   %-60s' RATIO_NA_TARGET=0
ratio_verdict "inside a segment, fvbpf / bpftrace entry+return:" "$OC" "$OD" 1.25
ratio_verdict "outside segments, fvbpf / a bare uprobe:" "$OB" "$OE" 1.1
echo "   attach with all $(grep -o '[0-9]* torch operators, [0-9]* autograd nodes' "$TMP/probed" | head -1) probed (one uprobe_multi link): ${MATT} ms (per set: ${ATT[*]})"
echo "   where an op's $OC ns go inside a segment: trap of a bare uprobe (E-A) $OE ns;"
echo "     BPF torch_call $MBPF ns a run x 2 runs (entry, return; bpf_stats, ring reserve+submit included);"
echo "     $MREC ring records (32 bytes each) per op; the rest, $(awk "BEGIN{printf \"%.0f\", $OC-$OE-2*$MBPF}") ns, is the return probe's"
echo "     trampoline trap and the session uprobe's bookkeeping"

# ---- c: step time ----------------------------------------------------------
S0=() S1=() S2=() S3=() EVS=()
for ((s = 1; s <= SETS; s++)); do
	d=$TMP/step.$s
	mkdir -p "$d"
	start_py "$d" "$ROOT/tests/workloads/torch_train.py" time "$d" 4 "$STEPS" 3
	go_round "$d" 0
	fv_start "$d/fo" -r 'torch:no_such_scope'
	go_round "$d" 1
	fv_stop "$d/fo"
	fv_start "$d/fi" --step-by "$STEP_SCOPE"
	go_round "$d" 2
	fv_stop "$d/fi"
	go_round "$d" 3
	stop "$WPID"
	EVS+=("$(python3 -c 'import json,glob,sys
f=sorted(glob.glob(sys.argv[1]+"/summary_*_step.json"))
print(sum(r["count"] for r in json.load(open(f[1]))["rows"] if r["kind"] in ("cpu_op","user_annotation")) if len(f) > 2 else 0)' "$d/fi")")
	[ "${EVS[-1]}" -gt 0 ] || die "fvbpf wrote too few step segments (set $s)"
	for k in 0 1 2 3; do
		v=$(sed -n "s/^round $k ms_per_step \([0-9.]*\)/\1/p" "$WLOG")
		[ -n "$v" ] || die "step round $k printed no figure"
		case $k in 0) S0+=("$v") ;; 1) S1+=("$v") ;; 2) S2+=("$v") ;; 3) S3+=("$v") ;; esac
	done
	note "torch step set $s/$SETS: ms ${S0[-1]} ${S1[-1]} ${S2[-1]} ${S3[-1]}"
	rm -rf "$d"
done
M0=$(median "${S0[@]}") M1=$(median "${S1[@]}") M2=$(median "${S2[@]}") M3=$(median "${S3[@]}")
EV=$(median "${EVS[@]}")
echo
echo "   training step of tests/workloads/torch_train.py ($EV torch events a step), median of $STEPS steps, $SETS sets"
srow() { # LABEL MEDIAN PER-SET...
	local label=$1 med=$2
	shift 2
	printf '   %-40s %-24s %8.3f ms  %5.2fx  %6.2f us/event\n' "$label" "$(printf '%.2f ' "$@")" "$med" \
		"$(awk "BEGIN{print $med/$M0}")" "$(awk "BEGIN{print ($med-$M0)*1000/$EV}")"
}
srow "not attached" "$M0" "${S0[@]}"
srow "fvbpf attached, outside segments" "$M1" "${S1[@]}"
srow "fvbpf attached, inside segments" "$M2" "${S2[@]}"
srow "torch.profiler (CPU) in process" "$M3" "${S3[@]}"
exit 0
