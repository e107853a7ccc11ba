#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Collectives across ranks (docs/collectives.md): gloo jobs under torchrun
# (tests/workloads/ddp_train.py) whose rank R sleeps a known time before
# each backward, so that the others wait for it in DDP's gradient
# all-reduce; fvbpf attached with no change to the job, on both operator
# paths; `fvbpf report --json` must name R last with the others' wait near
# the delay, each collective matched by process group and sequence number.

load helpers

DDP=$ROOT/tests/workloads/ddp_train.py
HTA_PY=${FVBPF_HTA_PY:-$BUILD/venv-hta/bin/python3}
# the straggler's delay: large beside what load adds to it (a late rank
# descheduled on a busy machine arrives later still: +35 ms once under ASan)
LATE_MS=200

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

# start_job N ARGS...: N ranks of ddp_train.py with ARGS (RANK0, ..., JOB_PGID).
start_job() {
	local n=$1
	shift
	start_torchrun_job "$n" "$DDP" "$@"
}

# coll_check DIR NRANKS LATE_RANK: what report --json says of the gradient
# all-reduces (group 0's collectives where LATE_RANK came last).
coll_check() {
	"$FVBPF" report --json "$1" >"$1.report.json" || return 1
	python3 - "$1.report.json" "$2" "$3" "$LATE_MS" <<-'EOF'
		import json, statistics, sys
		rep = json.load(open(sys.argv[1]))
		n, late, delay = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]) * 1e3
		colls = [c for g in rep["regions"] for s in g["steps"] for c in s.get("collectives", [])]
		# the gradient all-reduce: each step's heaviest (the stop flag's
		# all-reduce after it may have any rank last, by a hair)
		grads = [max(s["collectives"], key=lambda c: c["wait_us"])
		         for g in rep["regions"] for s in g["steps"] if s.get("collectives")]
		grads = [c for c in grads if c["pg"] == "0" and len(c["ranks"]) == n]
		# every matched collective: one entry per rank, the same name
		whole = all(len({r["rank_number"] for r in c["ranks"]}) == len(c["ranks"]) for c in colls)
		steps = [s for g in rep["regions"] for s in g["steps"] if s.get("collectives")]
		late_in = sum(1 for s in steps
		              if max(s["collectives"], key=lambda c: c["wait_us"])["last_rank_number"] == late)
		waits = [r["waited_us"] for c in grads if c["last_rank_number"] == late
		         for r in c["ranks"] if r["rank_number"] != late]
		med = statistics.median(waits) if waits else 0
		top = rep["stragglers"][0] if rep["stragglers"] else {}
		print("steps=%d late_in=%d whole=%s top=%s" % (len(steps), late_in, whole,
		      top.get("rank_number")))
		print("wait_ok=%s (median %.1f ms of %.1f ms)" % (abs(med - delay) <= 0.25 * delay,
		      med / 1e3, delay / 1e3))
	EOF
}

# trace_check DIR: the trace's collective slices carry Kineto's names.
trace_check() {
	python3 - "$1" <<-'EOF'
		import glob, json, os, sys
		n = 0
		for f in glob.glob(os.path.join(sys.argv[1], "trace_rank*.json")):
		    t = json.load(open(f))
		    mine = 0
		    for e in t["traceEvents"]:
		        a = e.get("args") or {}
		        if e.get("name", "").startswith("gloo:") and e.get("ph") == "X":
		            assert a["Collective name"] == e["name"][5:], a
		            assert a["Process Group Name"] in ("0", "1"), a
		            assert a["Group size"] in (2, 3, 4), a
		            assert isinstance(a["Seq"], int), a
		            assert a.get("dtype", "Float") == "Float", a
		            mine += 1
		    if mine:  # torch's distributedInfo: the backend and its groups
		        d = t["distributedInfo"]
		        assert d["backend"] == "gloo", d
		        assert {g["pg_name"] for g in d["pg_config"]} <= {"0", "1"}, d
		        assert all(g["pg_size"] in (2, 3, 4) for g in d["pg_config"]), d
		    n += mine
		print("kineto_slices=%s" % ("yes" if n else "no"))
	EOF
}

@test "collectives: 2 ranks, uprobe path: rank 1 is last in the gradient all-reduce, the other waits the delay" {
	start_job 2 --late-rank 1 --late-ms "$LATE_MS"
	run timeout 120 "$FVBPF" attach --match "ddp_train\.py $JOB" -n 4 -o "$OUT"
	echo "$output"
	assert_success
	assert_output --partial "gloo backend functions probed"
	assert_output --regexp "collectives: 3 gloo functions probed, [1-9][0-9]* collectives joined"
	run coll_check "$OUT" 2 1
	echo "$output"
	assert_success
	assert_line --regexp "^steps=[34] late_in=[34] whole=True top=1$"
	assert_line --partial "wait_ok=True"
	run trace_check "$OUT"
	assert_output "kineto_slices=yes"
	# the text section
	run "$FVBPF" report "$OUT"
	assert_output --regexp "Collectives: [0-9]+ matched across ranks by process group and sequence number"
	assert_output --regexp "waited for: [^ ]+ rank 1: last in"
	# the page: the stragglers, the step drawn per rank, parsed as XML
	"$FVBPF" report --html "$BATS_TEST_TMPDIR/page.html" "$OUT"
	run python3 - "$BATS_TEST_TMPDIR/page.html" <<-'EOF'
		import re, sys, xml.dom.minidom
		t = open(sys.argv[1]).read()
		i = t.index("<h3>Collectives: who waits for whom</h3>")
		svg = re.search(r"<svg .*?</svg>", t[i:], re.S).group(0)
		xml.dom.minidom.parseString(svg)
		print("waiting=%d transfer=%d rank1_first=%s" % (svg.count("<title>waiting"),
		      svg.count("<title>transfer"),
		      re.search(r'<tr class="slowest"><td class="name">[^<]* rank 1<', t[i:]) is not None))
	EOF
	echo "$output"
	assert_output --regexp "^waiting=[1-9][0-9]* transfer=[1-9][0-9]* rank1_first=True$"
	# HTA's communication analysis reads the exported step folders
	[ -x "$HTA_PY" ] || fail "no HolisticTraceAnalysis venv at $HTA_PY: run \`make venv\`"
	"$FVBPF" export "$OUT" -o "$BATS_TEST_TMPDIR/exp"
	run "$HTA_PY" - "$BATS_TEST_TMPDIR/exp" <<-'EOF'
		import glob, os, sys
		from hta.trace_analysis import TraceAnalysis
		n = 0
		for d in sorted(glob.glob(os.path.join(sys.argv[1], "*", "step*"))):
		    r = TraceAnalysis(trace_dir=d).get_comm_comp_overlap(visualize=False)
		    n += len(r) == 2  # a row per rank
		print("hta_steps=%d" % n)
	EOF
	assert_success
	assert_line --regexp "^hta_steps=[1-9]"
}

@test "collectives: 4 ranks, callbacks path (--inject): rank 1 is the straggler" {
	start_job 4 --late-rank 1 --late-ms "$LATE_MS"
	run timeout 150 "$FVBPF" attach --match "ddp_train\.py $JOB" --inject -n 4 -o "$OUT"
	echo "$output"
	assert_success
	assert_output --regexp "operators: PyTorch [^ ]+'s callbacks through libfvbpf.so"
	run coll_check "$OUT" 4 1
	echo "$output"
	assert_success
	assert_line --regexp "^steps=[34] late_in=[34] whole=True top=1$"
	assert_line --partial "wait_ok=True"
}

@test "collectives: two process groups are matched each apart, by their own sequence numbers; sizes equal the tensors'" {
	start_job 3 --subgroup
	# --record-shapes: the TensorImpl layout the tensors' sizes are read by
	run timeout 150 "$FVBPF" attach --match "ddp_train\.py $JOB" -n 3 --record-shapes \
		--max-memory 1G -o "$OUT"
	echo "$output"
	assert_success
	# torch's own count of the gradient bucket: DDP all-reduces the
	# parameters, flattened, in one bucket of float32
	params=$("$PY214" -c 'import sys; sys.path.insert(0, sys.argv[1]); import ddp_train
print(sum(p.numel() for p in ddp_train.Block().parameters()))' "$(dirname "$DDP")")
	run trace_check "$OUT"
	assert_output "kineto_slices=yes"
	"$FVBPF" report --json "$OUT" >"$OUT.json"
	run python3 - "$OUT.json" <<-'EOF'
		import json, sys
		rep = json.load(open(sys.argv[1]))
		colls = [c for g in rep["regions"] for s in g["steps"] for c in s.get("collectives", [])]
		by = {}
		for c in colls:
		    by.setdefault(c["pg"], []).append(c)
		# the pair group: ranks 0 and 1 only; the world group: all three;
		# a sequence number is matched once per group
		pair = by.get("1", [])
		world = by.get("0", [])
		print("pair=%s world=%s" % (
		    bool(pair) and all(sorted(r["rank_number"] for r in c["ranks"]) == [0, 1] for c in pair),
		    bool(world) and all(len(c["ranks"]) == 3 for c in world)))
		print("unique=%s" % all(len({c["seq"] for c in v}) == len(v) for v in by.values()))
		# sizes: the pair's 1000 floats, the world's gradient bucket and
		# the 1-float stop flag, each the same on every rank
		sizes = sorted({(c["pg"], c["bytes"], c["dtype"]) for c in colls},
		               key=lambda x: (x[0], -1 if x[1] is None else x[1], str(x[2])))
		print("sizes=%s" % sizes)
	EOF
	echo "$output"
	assert_line "pair=True world=True"
	assert_line "unique=True"
	assert_line "sizes=[('0', 4, 'Float'), ('0', $((params * 4)), 'Float'), ('1', 4000, 'Float')]"
}

# NCCL's calls from the CUDA wheel's libnccl (ctypes, no GPU: each returns
# ncclInvalidArgument at once), decoded into the fields torch gives a
# collective, under Kineto's names.
@test "collectives: NCCL calls of the real libnccl carry Collective name, message sizes and dtype" {
	local nccl
	nccl=$("$PY214" -c 'import os, nvidia.nccl as m; print(os.path.join(list(m.__path__)[0], "lib", "libnccl.so.2"))')
	[ -e "$nccl" ] || fail "no libnccl.so.2 in the torch 2.14.1 venv: $nccl"
	FVBPF_LIB=$BUILD/libfvbpf.so start_workload "$BATS_TEST_TMPDIR/nccl.log" "$PY214" \
		"$ROOT/tests/workloads/py_nccl.py" "$nccl" 3
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_forward -n 3
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	wait_for grep -q '^done' "$BATS_TEST_TMPDIR/nccl.log"
	# every call failed fast (4: ncclInvalidArgument), as without a GPU
	grep -q '^done rets=4$' "$BATS_TEST_TMPDIR/nccl.log"
	run python3 - "$OUT" <<-'EOF'
		import glob, json, os, sys
		seen = {}
		for f in glob.glob(os.path.join(sys.argv[1], "trace_*.json")):
		    for e in json.load(open(f))["traceEvents"]:
		        if e.get("cat") == "nccl" and e.get("ph") == "X":
		            a = e["args"]
		            seen.setdefault(e["name"], set()).add(
		                (a.get("Collective name"), a.get("In msg nelems"), a.get("Out msg nelems"),
		                 a.get("dtype"), a.get("bytes"), a["return"]))
		for k in sorted(seen):
		    print(k, sorted(seen[k]))
	EOF
	echo "$output"
	assert_line "ncclAllReduce [('allreduce', 1000, 1000, 'Float', 4000, 'ncclInvalidArgument')]"
	assert_line "ncclAllGather [('allgather', 256, None, 'Long', 2048, 'ncclInvalidArgument')]"
	assert_line "ncclReduceScatter [('reduce_scatter', None, 64, 'BFloat16', 128, 'ncclInvalidArgument')]"
	assert_line "ncclBroadcast [('broadcast', 10, 10, 'Double', 80, 'ncclInvalidArgument')]"
	assert_line "ncclSend [('send', 5, None, 'Char', 5, 'ncclInvalidArgument')]"
}

# Two attaches (one a rank, standing for two hosts), the second's
# directory then made another host's whose realtime clock runs 750 ms
# ahead: report finds the skew from the collectives' exits and applies it,
# so that the straggler is named as on one clock.
@test "collectives: another host's clock skew is estimated from the collectives' exits and applied" {
	start_job 2 --late-rank 1 --late-ms "$LATE_MS"
	local r1=$RANK1 a=$BATS_TEST_TMPDIR/a b=$BATS_TEST_TMPDIR/b at lead=20 pid
	[ -n "${FVBPF_SANITIZED:-}" ] && lead=45
	at=$(python3 -c 'import sys, time; print("%.3f" % (time.time() + int(sys.argv[1])))' "$lead")
	"$FVBPF" attach -p "$RANK0" --start-at "$at" -n 4 -o "$a" >"$a.log" 2>&1 &
	pid=$!
	run timeout 150 "$FVBPF" attach -p "$r1" --start-at "$at" -n 4 -o "$b"
	echo "$output"
	assert_success
	wait "$pid"
	python3 - "$b/manifest.json" <<-'EOF'
		import json, os, sys
		m = json.load(open(sys.argv[1]))
		m["hostname"] = "node-b"
		for f in m["files"]:
		    f["start_unix_us"] += 750000
		    f["end_unix_us"] += 750000
		for k in ("start", "end"):
		    m["clock"][k]["realtime_ns"] += 750000000
		json.dump(m, open(sys.argv[1], "w"))
		d = os.path.dirname(sys.argv[1])
		for f in m["files"]:  # the summaries say the same times
		    p = os.path.join(d, f["summary_json"])
		    s = json.load(open(p))
		    s["metadata"]["start_unix_us"] += 750000
		    s["metadata"]["end_unix_us"] += 750000
		    json.dump(s, open(p, "w"))
	EOF
	"$FVBPF" report --json "$a" "$b" >"$BATS_TEST_TMPDIR/r.json"
	run python3 - "$BATS_TEST_TMPDIR/r.json" "$LATE_MS" <<-'EOF'
		import json, statistics, sys
		r = json.load(open(sys.argv[1]))
		c = r["clocks"][1]
		print("skew_ok=%s (%s ns from %d)" % (abs(c["skew_from_collectives_ns"] + 750e6) < 3e6,
		      c["skew_from_collectives_ns"], c["skew_collectives"]))
		print("first=%s" % r["clocks"][0]["skew_from_collectives_ns"])
		top = r["stragglers"][0]
		heaviest = [max(s["collectives"], key=lambda x: x["wait_us"])
		            for g in r["regions"] for s in g["steps"] if s.get("collectives")]
		waits = [e["waited_us"] for x in heaviest if x["last_rank_number"] == 1
		         for e in x["ranks"] if e["rank_number"] == 0]
		med = statistics.median(waits) if waits else 0
		delay = float(sys.argv[2]) * 1e3
		print("top=%s wait_ok=%s (median %.1f ms)" % (top["rank_number"], abs(med - delay) <= 0.25 * delay,
		      med / 1e3))
	EOF
	echo "$output"
	assert_line --regexp "^skew_ok=True "
	assert_line "first=None"
	assert_line --regexp "^top=1 wait_ok=True "
	run "$FVBPF" report "$a" "$b"
	assert_output --regexp "skew from [0-9]+ collective exits shared with the first directory: -7(4[7-9]|5[0-2])\.[0-9]+ ms"
}
