#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Every rank of a job on the same steps: a 3-rank data-parallel job under
# torchrun with the gloo backend (tests/workloads/ddp_train.py, real
# PyTorch on the CPU, no fvbpf code in it).  All ranks are armed before any
# segment is cut, -n ends the torchrun and --match forms by itself, the
# k-th segments of every rank are the same step (their spans overlap), and
# two attaches started apart with one --start-at begin on the same step.

load helpers

DDP=$ROOT/tests/workloads/ddp_train.py

setup() {
	common_setup
	need_torch "$PY214"
	JOB=$BATS_TEST_TMPDIR/job
	mkdir -p "$JOB"
}

teardown() {
	stop_torchrun_job
	common_teardown
}

start_ddp() {
	start_torchrun_job "${1:-3}" "$DDP"
}

steps_check() {
	python3 - "$@" <<-'EOF'
		import glob, json, os, re, sys
		segs = {}
		for d in sys.argv[1:]:
		    for f in glob.glob(os.path.join(d, "trace_rank*_segment*_step.json")):
		        m = json.load(open(f))["otherData"]
		        # a rank's first step a step before the others' is written,
		        # not counted (its k-th would be the others' k-1-th)
		        if m["incomplete"] or m.get("started_before_attach") or m.get("counted") is False:
		            continue
		        r = int(re.search(r"rank(\d+)_", f).group(1))
		        segs.setdefault(r, []).append((float(m["start_us"]), float(m["end_us"])))
		ranks = sorted(segs)
		for r in ranks:
		    segs[r].sort()
		n = min(len(segs[r]) for r in ranks)
		bad = []
		for k in range(n):
		    lo = max(segs[r][k][0] for r in ranks)
		    hi = min(segs[r][k][1] for r in ranks)
		    # the same step: they share most of the shortest one's span
		    if hi - lo <= 0.5 * min(segs[r][k][1] - segs[r][k][0] for r in ranks):
		        bad.append((k, [segs[r][k] for r in ranks]))
		print("ranks=%s complete=%s overlap=%s" % (",".join(map(str, ranks)),
		      ",".join(str(len(segs[r])) for r in ranks), "no" if bad else "yes"))
		for b in bad:
		    print("not overlapping:", b)
		# by time, as attaches started apart are paired: steps of the
		# first rank that overlap exactly one segment of every other by
		# most of its length
		def over(a, b):  # most of the shorter one: not a sliver at a step's end
		    return min(a[1], b[1]) - max(a[0], b[0]) > 0.5 * min(a[1] - a[0], b[1] - b[0])
		paired = sum(1 for a in segs[ranks[0]]
		             if all(sum(over(a, b) for b in segs[r]) == 1 for r in ranks[1:]))
		print("paired=%d" % paired)
	EOF
}

@test "job: attach -p TORCHRUN --children --inject -n 3 ends by itself; every rank's k-th segment is the same step" {
	start_ddp 3
	run timeout 120 "$FVBPF" attach -p "$LAUNCHER" --children --inject -n 3 -o "$OUT"
	echo "$output"
	assert_success
	assert_output --regexp "4 processes armed in [0-9.]+ s; their segments begin together"
	run python3 -c 'import json, sys; a = json.load(open(sys.argv[1]))["arming"]; print(a["processes"], a["start_at"], a["armed_in_ns"] > 0)' "$OUT/manifest.json"
	assert_output "4 False True"
	run steps_check "$OUT"
	echo "$output"
	assert_line "ranks=0,1,2 complete=3,3,3 overlap=yes"
}

@test "job: --match ddp_train -n 3 ends by itself, the launcher exempt" {
	start_ddp 3
	run timeout 120 "$FVBPF" attach --match "ddp_train\.py $JOB" -n 3 -o "$OUT"
	echo "$output"
	assert_success
	run steps_check "$OUT"
	echo "$output"
	assert_line "ranks=0,1,2 complete=3,3,3 overlap=yes"
}

# Two fvbpf, one per group of ranks, started apart as on two nodes: one
# --start-at makes them begin on the same step.
@test "job: two attaches started 2 s apart with one --start-at begin on the same step" {
	start_ddp 3
	local at out1=$BATS_TEST_TMPDIR/a out2=$BATS_TEST_TMPDIR/b pid1
	# the instant both wait for: after both are armed, however slowly (the
	# ASan build arming two torch ranks took 28.8 s with three other test
	# files and two busy loops beside it on 2 CPUs; the plain one a third)
	local lead=30
	[ -n "${FVBPF_SANITIZED:-}" ] && lead=55
	at=$(python3 -c 'import sys, time; print("%.3f" % (time.time() + int(sys.argv[1])))' "$lead")
	"$FVBPF" attach -p "$RANK0" --start-at "$at" -n 3 -o "$out1" >"$out1.log" 2>&1 &
	pid1=$!
	# the second node's fvbpf comes later: the gap is the test's subject
	sleep 2
	run timeout 120 "$FVBPF" attach -p "$RANK1,$RANK2" --start-at "$at" -n 3 -o "$out2"
	echo "$output"
	assert_success
	assert_output --partial "segments wait for --start-at"
	wait "$pid1"
	cat "$out1.log"
	# both cut at the instant asked (the second attach armed well before it)
	run python3 -c 'import json, sys
for d in sys.argv[2:]:
    a = json.load(open(d + "/manifest.json"))["arming"]
    print(a["start_at"], abs(a["segments_from_realtime_ns"] / 1e9 - float(sys.argv[1])) < 0.5)' \
		"$at" "$out1" "$out2"
	assert_output $'True True\nTrue True'
	run steps_check "$out1" "$out2"
	echo "$output"
	assert_line --partial "ranks=0,1,2 complete=3,3,3 "
	# a rank of one attach may begin a step before the other attach's
	# ranks (the instant fell between their ends of one step): paired by
	# time, at least two of the three steps hold every rank
	assert_line --regexp '^paired=[23]$'
	# export over both directories: each step folder holds one step of the
	# ranks that have it, the same step (their segments share most of it)
	run "$FVBPF" export "$out1" "$out2" -o "$BATS_TEST_TMPDIR/hta"
	echo "$output"
	assert_success
	run python3 - "$BATS_TEST_TMPDIR/hta/step" <<-'EOF'
		import glob, json, os, sys
		full = 0
		for d in sorted(glob.glob(os.path.join(sys.argv[1], "step*"))):
		    spans = []
		    for f in sorted(glob.glob(os.path.join(d, "rank*.pt.trace.json"))):
		        m = json.load(open(f))["otherData"]
		        spans.append((float(m["start_unix_us"]), float(m["end_unix_us"])))
		    lo, hi = max(a for a, _ in spans), min(b for _, b in spans)
		    assert hi - lo > 0.5 * min(b - a for a, b in spans), (d, spans)
		    full += len(spans) == 3
		print("steps with all ranks: %d" % full)
	EOF
	echo "$output"
	assert_success
	assert_line --regexp '^steps with all ranks: [23]$'
}
