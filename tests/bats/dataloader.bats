#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# DataLoader workers (issue 38): a trainer's workers, forked long before
# the attach, traced with it by `attach -p TRAINER` alone: each batch on
# the worker that loaded it, its fetch and collate times, a flow to the
# trainer's receipt, the trainer's wait in its summary.

load helpers

DL=$ROOT/tests/workloads/dl_train.py
DLCHECK=$ROOT/tests/lib/dl_check.py
SLOW_MS=60

setup() { common_setup; }
teardown() {
	[ -n "${BATS_TEST_TMPDIR:-}" ] && touch "$BATS_TEST_TMPDIR/stop"
	stop_torchrun_job
	common_teardown
}

# start_dl OPTION...: the trainer, running epochs until $BATS_TEST_TMPDIR/stop.
start_dl() {
	need_torch "$PY214" || return 1
	WL_READY='loader running' start_workload "$WL_LOG" "$PY214" "$DL" "$@" \
		--slow-ms "$SLOW_MS" "$BATS_TEST_TMPDIR"
}

# A summary with a batch of 10 ms or more (worker 1's) is written.
slow_batch_written() {
	grep -lqs '"fetch_us":[0-9]\{5\}' "$OUT"/summary_rank0_segment*.json
}

# in_sleep PID: the process's main thread is in clock_nanosleep.
in_sleep() {
	local nr rest
	read -r nr rest <"/proc/$1/syscall" && [ "$nr" = 230 ]
}

# The job ends by itself once told: its workers were never harmed.
stop_dl() {
	touch "$BATS_TEST_TMPDIR/stop"
	wait_long grep -q '^epochs=' "$WL_LOG"
	assert_file_contains "$WL_LOG" 'workers_bad=0$'
}

@test "dataloader: 2 persistent workers forked before the attach, -p TRAINER alone: batches, fetch, waits, flows" {
	start_dl --workers 2 --persistent
	local workers
	workers=$(sed -n 's/^workers=//p' "$WL_LOG")
	[ -n "$workers" ]
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by train_step -n 16
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	grep -q 'DataLoader queues probed in .*_pickle' "$FV_ERR"
	# its workers are traced with it: no hint to attach to them
	run grep -c 'its children .* map libtorch_cpu' "$FV_ERR"
	assert_output "0"
	run python3 "$CHECK" "$OUT"
	assert_success
	run python3 "$DLCHECK" "$OUT" "$WL_PID" "$workers" 1 "$SLOW_MS"
	echo "$output"
	assert_success
	# the totals and losses in the exit report and the manifest
	grep -q '^    dataloader: 2 workers, [1-9][0-9]* batches, [1-9][0-9]* received' "$FV_OUT"
	run python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]["dataloader"]
assert p["workers"] == 2 and p["batches"] >= p["received"] > 0, p
assert p["probed_in"].split("/")[-1].startswith("_pickle."), p
assert p["unfinished"] == p["workers_over"] == p["bad"] == 0, p
print("ok")' "$OUT/manifest.json"
	assert_output "ok"
	stop_dl
}

# The spawn and forkserver start methods: the workers are a new program
# (spawn) or the forks of a forkserver the trainer started; found by
# their command line and parents, numbered as the loader numbered them.
@test "dataloader: spawn and forkserver workers: each batch on the worker that loaded it, worker_ids as the loader's" {
	local m workers
	for m in spawn forkserver; do
		rm -f "$BATS_TEST_TMPDIR/stop"
		start_dl --workers 2 --persistent --start-method "$m"
		workers=$(sed -n 's/^workers=//p' "$WL_LOG")
		[ -n "$workers" ]
		start_fvbpf -p "$WL_PID" -o "$OUT.$m" --step-by train_step -n 12
		wait_fvbpf 60
		[ "$FV_STATUS" -eq 0 ]
		run python3 "$CHECK" "$OUT.$m"
		assert_success
		# the slow batches on worker 1, by pid and worker_id
		run python3 "$DLCHECK" "$OUT.$m" "$WL_PID" "$workers" 1 "$SLOW_MS"
		echo "$m: $output"
		assert_success
		stop_dl
		wait_long test ! -e "/proc/$WL_PID"
	done
}

@test "dataloader: --format pftrace: each batch on its worker's own process track, a flow to the trainer's slice that received it" {
	start_dl --workers 2 --persistent
	local workers
	workers=$(sed -n 's/^workers=//p' "$WL_LOG")
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by train_step -n 8 --format pftrace
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	run "$PB_PY" - "$ROOT/tests/lib" "$OUT" "$workers" <<-'EOF'
		import glob, sys
		sys.path.insert(0, sys.argv[1])
		import pftrace_check as pc
		workers = [int(w) for w in sys.argv[3].split(",")]
		batches = flows = 0
		for path in sorted(glob.glob(sys.argv[2] + "/trace_*.pftrace")):
		    trace, _ = pc.read(path)
		    tracks, slices, fo, fi, _, _ = pc.decode(trace)
		    assert fo == fi, (path, fo, fi)
		    for uuid, name, cat, start, end, _ in slices:
		        if cat != "dataloader":
		            continue
		        assert name.startswith("DataLoader batch "), name
		        pid, tid = pc.track_key(tracks, uuid)
		        assert pid == tid and pid in workers, (path, name, pid, tid)
		        proc = tracks[tracks[uuid].parent_uuid]
		        want = "rank 0 worker %d" % workers.index(pid)
		        assert proc.process.pid == pid and proc.process.process_name == want, (proc, want)
		        # worker k % 2 loads batch k
		        assert workers.index(pid) == int(name.split()[-1]) % 2, (name, pid)
		        batches += 1
		    flows += fo
		# every batch's receipt lies in a slice of the trainer's (its __next__)
		assert batches >= 6 and flows == batches, (batches, flows)
		print("ok")
	EOF
	echo "$output"
	assert_output "ok"
	stop_dl
}

@test "dataloader: workers forked every epoch (not persistent): each epoch's on its own tracks, same worker_ids" {
	start_dl --workers 2
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by train_step -n 20
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	run python3 "$DLCHECK" "$OUT" "$WL_PID" - 1 "$SLOW_MS"
	echo "$output"
	assert_success
	stop_dl
}

@test "dataloader: a pin-memory thread: the trainer receives there, flows end there" {
	start_dl --workers 2 --persistent --pin-memory
	# torch starts the thread only where an accelerator is (not on CI)
	grep -q '^pin_memory_thread=1$' "$WL_LOG" ||
		skip "torch runs no pin-memory thread without an accelerator (GPU machines only)"
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by train_step -n 16
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	run python3 "$DLCHECK" --pin "$OUT" "$WL_PID" "$(sed -n 's/^workers=//p' "$WL_LOG")" 1 "$SLOW_MS"
	echo "$output"
	assert_success
	stop_dl
}

@test "dataloader: a 2-rank torchrun job, -p LAUNCHER --children: each rank's workers under that rank, none a target" {
	need_torch "$PY214"
	JOB=$BATS_TEST_TMPDIR/job
	mkdir -p "$JOB"
	start_torchrun_job 2 "$DL" --workers 2 --persistent --slow-ms "$SLOW_MS"
	start_fvbpf -p "$LAUNCHER" --children -o "$OUT" --step-by train_step -n 10
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	run python3 - "$OUT" "$JOB" <<-'EOF'
		import glob, json, os, sys
		out, job = sys.argv[1:]
		seen = {}
		for r in (0, 1):
		    pid, workers = open(os.path.join(job, "rank.%d" % r)).read().split()
		    workers = [int(w) for w in workers.split(",")]
		    for f in glob.glob(os.path.join(out, "summary_rank%d_segment*.json" % r)):
		        dl = json.load(open(f)).get("dataloader") or {"workers": []}
		        for w in dl["workers"]:
		            assert w["pid"] == workers[w["worker_id"]], (f, w, workers)
		            assert w["name"] == "rank %d worker %d" % (r, w["worker_id"]), (f, w)
		            seen.setdefault(r, set()).add(w["worker_id"])
		    for f in glob.glob(os.path.join(out, "trace_rank%d_segment*.json" % r)):
		        for e in json.load(open(f))["traceEvents"]:
		            if e.get("cat") == "dataloader" and e["ph"] == "X":
		                assert e["pid"] in workers, (f, e)
		            if e.get("cat") == "dataloader" and e["ph"] == "f":
		                assert e["pid"] == int(pid), (f, e)
		print(sorted((r, sorted(v)) for r, v in seen.items()))
	EOF
	echo "$output"
	assert_output "[(0, [0, 1]), (1, [0, 1])]"
	# the workers are traced with their rank, none as a process of its own
	run python3 -c '
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
print(sorted(p["pid"] for p in m["processes"] if p["segments"]) == sorted(map(int, sys.argv[2:])))
' "$OUT" "$RANK0" "$RANK1"
	assert_output "True"
	# report: the loader's share per rank, each the sum of that rank's
	# complete counted segments' summaries (their wait, batches, time)
	run "$FVBPF" report --json "$OUT"
	assert_success
	echo "$output" >"$BATS_TEST_TMPDIR/report.json"
	run "$FVBPF" report "$OUT"
	assert_success
	echo "$output" >"$BATS_TEST_TMPDIR/report.txt"
	run "$FVBPF" report --html "$BATS_TEST_TMPDIR/report.html" "$OUT"
	assert_success
	run python3 - "$OUT" "$BATS_TEST_TMPDIR/report.json" "$BATS_TEST_TMPDIR/report.txt" \
		"$BATS_TEST_TMPDIR/report.html" <<-'EOF'
		import json, os, re, sys
		out, rj, rt, rh = sys.argv[1:]
		html = open(rh).read()
		assert "<th>DataLoader wait ms</th><th>its share</th>" in html
		m = json.load(open(os.path.join(out, "manifest.json")))
		want = {}
		for f in m["files"]:
		    s = json.load(open(os.path.join(out, f["summary_json"])))
		    meta, dl = s["metadata"], s.get("dataloader")
		    if meta["incomplete"] or not f.get("counted", True) or not dl:
		        continue
		    w = want.setdefault(meta["rank"], [0, 0.0, 0, 0.0])
		    w[0] += 1
		    w[1] += dl["wait_us"] / 1e3
		    w[2] += dl["batches"]
		    w[3] += (meta["end_us"] - meta["start_us"]) / 1e3
		assert sorted(want) == [0, 1], want
		regions = json.load(open(rj))["regions"]
		with_dl = [g for g in regions if any("dataloader" in k for k in g["ranks"])]
		assert len(with_dl) == 1, [(g["region"], g["ranks"]) for g in regions]
		region = with_dl[0]
		text = open(rt).read()
		for k in region["ranks"]:
		    n, wait, batches, seg = want[k["rank"]]
		    d = k["dataloader"]
		    assert d["segments"] == n and d["batches"] == batches, (k["rank"], d, want)
		    assert abs(d["wait_ms"] - wait) < 0.01 and abs(d["share_pct"] - 100 * wait / seg) < 0.1, (d, want)
		    line = r"^ +%d +%.3f +%.1f%% +%d  .*rank %d\b" % (n, d["wait_ms"], d["share_pct"], batches, k["rank"])
		    assert re.search(line, text, re.M), (line, text)
		    cells = "<td>%.3f</td><td>%.1f%%</td></tr>" % (d["wait_ms"], d["share_pct"])
		    assert cells in html, cells
		assert "DataLoader: the trainer's wait for batches from its workers, per rank" in text
		print("ok")
	EOF
	echo "$output"
	assert_output "ok"
	stop_torchrun_job
}

@test "dataloader: a worker killed mid-batch is counted unfinished (exit report, manifest, summary)" {
	start_dl --workers 2 --persistent
	local w1
	w1=$(sed -n 's/^workers=//p' "$WL_LOG" | cut -d, -f2)
	# time windows: one is open when the worker dies, whenever that is (a
	# trainer waits for its batch between steps, outside any step segment)
	start_fvbpf -p "$WL_PID" -o "$OUT" --window 0.5
	# batches are being joined: a segment with worker 1's slow batch is out
	wait_long slow_batch_written
	# worker 1 spends all but microseconds of each batch asleep in
	# __getitem__ (time.sleep: clock_nanosleep, 230 on x86_64): killed
	# there, it dies mid-batch (not between two batches, as it once was on
	# a loaded machine); its trainer then fails
	wait_long in_sleep "$w1"
	kill -KILL "$w1"
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	# (worker 0, stopped by its failing trainer, may leave one too)
	grep -q '^    dataloader: 2 workers, .* lost: [12] unfinished (worker gone mid-batch)' "$FV_OUT"
	run python3 -c '
import glob, json, sys
p = json.load(open(sys.argv[1] + "/manifest.json"))["processes"][0]["dataloader"]
last = sorted(glob.glob(sys.argv[1] + "/summary_rank0_segment*_window.json"))[-1]
# the trainer'"'"'s last segment says so too
print(p["unfinished"] in (1, 2), json.load(open(last))["dataloader"]["lost"]["unfinished"] == p["unfinished"])' "$OUT"
	assert_output "True True"
	wait_long grep -q 'exited unexpectedly\|killed by signal' "$WL_LOG"
}

@test "dataloader: num_workers=0: nothing changes (no dataloader object, slice or flow)" {
	start_dl --workers 0
	start_fvbpf -p "$WL_PID" -o "$OUT" --step-by train_step -n 4
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	run python3 "$DLCHECK" --none "$OUT"
	echo "$output"
	assert_success
	run grep -i 'warning' "$FV_ERR"
	refute_output --partial 'DataLoader'
	run grep 'dataloader' "$FV_OUT" "$OUT/manifest.json"
	assert_failure
	stop_dl
}

@test "dataloader: an interpreter without _pickle's symbols: its forked children said untraced, one line" {
	local py=/usr/bin/python3
	[ -x "$py" ] || skip "no $py"
	nm "$(readlink -f "$py")" 2>/dev/null | grep -q ' _pickle_loads$' &&
		skip "$py has _pickle's symbols"
	start_workload "$WL_LOG" "$py" "$ROOT/tests/workloads/dl_fork_plain.py" "$BATS_TEST_TMPDIR"
	start_fvbpf -p "$WL_PID" -o "$OUT" --window 0.2 -n 2
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	run grep -c "PID $WL_PID: its forked children (DataLoader workers) are not traced: .* has no symbol table for CPython's _pickle; use a Python built with its symbols" "$FV_ERR"
	assert_output "1"
	touch "$BATS_TEST_TMPDIR/stop"
}
