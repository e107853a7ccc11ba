#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# fvbpf report and fvbpf merge: on generated multi-node directories whose
# clock offsets differ by a known amount, on a real attach, and on errors.

load helpers

GEN=$ROOT/tests/lib/gen_rank_dirs.py
SKEW=12345678 # ns the nodes' recorded realtime clocks disagree by

setup() {
	common_setup
	GEN_OUT=$BATS_TEST_TMPDIR/gen
}
teardown() { common_teardown; }

gen() { python3 "$GEN" "$GEN_OUT" --nodes 2 --ranks 4 --segments 3 --offset-skew-ns "$SKEW" "$@"; }

@test "report: text and --json match what the generator wrote" {
	gen --hostile
	run "$FVBPF" report "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_success
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/report.txt"
	run "$FVBPF" report --json --top 20 "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_success
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/report.json"
	run python3 - "$GEN_OUT/truth.json" "$BATS_TEST_TMPDIR/report.txt" "$BATS_TEST_TMPDIR/report.json" <<'PY'
import json, re, sys
truth = json.load(open(sys.argv[1]))
text = open(sys.argv[2], encoding="utf-8").read()
rep = json.load(open(sys.argv[3]))
# fvbpf writes target text without control characters, as \xNN
clean = lambda s: re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: "\\x%02x" % ord(m.group()), s)
ops = {o["kind"] + "\x00" + clean(o["name"]): o for o in truth["ops"].values()}
assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text), "control character in text output"
g = rep["regions"][0]
assert g["region"] == truth["region"]
assert g["segments"] == truth["segments"] and g["incomplete"] == truth["incomplete"], g
# hostnames come back cleaned (the generator's node1 holds control characters)
got = {(r["rank"], r["restart"]): r for r in g["ranks"]}
assert all(not re.search(r"[\x00-\x1f\x7f]", r["hostname"]) for r in g["ranks"])
assert len(got) == len(truth["ranks"]), (len(got), len(truth["ranks"]))
for k, t in truth["ranks"].items():
    r = got[(t["rank"], t["restart"])]
    assert r["segments"] == t["segments"] and r["incomplete"] == t["incomplete"], (k, r)
    for f in ("mean_ms", "min_ms", "max_ms"):
        assert abs(r[f] - t[f]) < 1e-6, (k, f, r[f], t[f])
s, ts = g["slowest"], truth["slowest"]
assert (s["rank"], s["restart"]) == (truth["ranks"][ts["key"]]["rank"], truth["ranks"][ts["key"]]["restart"]), s
assert abs(s["over_median_ms"] - ts["over_ms"]) < 1e-6 and abs(s["median_rank_mean_ms"] - ts["median_ms"]) < 1e-6
# operators and kernels: sums over ranks of the complete segments
for table in ("operators", "kernels"):
    assert g[table]["ranked_by"] == "device_us"
    for row in g[table]["rows"]:
        t = ops[row["kind"] + "\x00" + row["name"]]
        assert abs(row["device_us"] * 1000 - t["device_ns"]) < 1 and row["count"] == t["count"], row
        assert abs(row["cpu_us"] * 1000 - t["cpu_ns"]) < 1, row
top_op = max((o for o in truth["ops"].values() if o["kind"] in ("cpu_op", "user_annotation")),
             key=lambda o: o["device_ns"])
assert g["operators"]["rows"][0]["name"] == top_op["name"]
# text: every rank line, the slowest line, columns aligned
lines = text.splitlines()
rank_lines = [l for l in lines if re.match(r"^\s+\d+\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+node", l)]
assert len(rank_lines) == len(truth["ranks"]), rank_lines
assert len({l.index("node") for l in rank_lines}) == 1, "rank columns not aligned"
want = "%.3f ms" % ts["over_ms"]
slow = [l for l in lines if l.strip().startswith("slowest rank:")]
assert slow and want in slow[0] and ("rank %d" % truth["ranks"][ts["key"]]["rank"]) in slow[0], slow
assert "incomplete segments (%d)" % truth["incomplete"] in text
print("ok", len(got), "ranks")
PY
	assert_success
	assert_output "ok 8 ranks"
}

@test "report: without device time it ranks by CPU time and says so; restarts are ranks of their own" {
	gen --no-device --restart
	run "$FVBPF" report "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_success
	assert_output --partial "no device time recorded: ranked by CPU time"
	assert_output --partial "node0 rank 0 restart 1"
	run "$FVBPF" report --json "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_success
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["regions"][0]["operators"]["ranked_by"]=="cpu_us"' "$output"
}

@test "merge: every rank side by side, node B shifted by exactly the skew, flow ids unique" {
	gen
	run "$FVBPF" merge "$GEN_OUT/node0" "$GEN_OUT/node1" -o "$BATS_TEST_TMPDIR/merged.json"
	assert_success
	assert_output --partial "merged 8 ranks"
	run python3 - "$GEN_OUT" "$BATS_TEST_TMPDIR/merged.json" "$SKEW" <<'PY'
import json, sys, os
from decimal import Decimal
gen, merged, skew = sys.argv[1], sys.argv[2], int(sys.argv[3])
truth = json.load(open(os.path.join(gen, "truth.json")))
t = json.load(open(merged), parse_float=Decimal)
meta = t["otherData"]
ranks = meta["ranks"]
assert len(ranks) == 8, len(ranks)
assert "NTP/PTP" in meta["clock_alignment"]["assumption"] and "not measured" in meta["clock_alignment"]["assumption"]
nodes = {n["hostname"]: n for n in meta["clock_alignment"]["nodes"]}
for h, n in truth["nodes"].items():
    assert nodes[h]["offset_ns"] == n["offset_ns"] and nodes[h]["uncertainty_ns"] == n["uncertainty_ns"], (h, nodes[h])
# each rank's process group: named, sorted in rank order
names = {e["pid"]: e["args"]["name"] for e in t["traceEvents"] if e.get("name") == "process_name"}
sort = {e["pid"]: e["args"]["sort_index"] for e in t["traceEvents"] if e.get("name") == "process_sort_index"}
for r in ranks:
    label = "rank %d (%s)" % (r["rank"], r["hostname"])
    pids = r["pids"].values()
    assert all(names[p].startswith(label + ": ") for p in pids), (label, [names[p] for p in pids])
order = [min(sort[p] for p in r["pids"].values()) for r in sorted(ranks, key=lambda r: r["rank"])]
assert order == sorted(order)
assert len({p for r in ranks for p in r["pids"].values()}) == 2 * len(ranks)
# shift per rank: merged ts - source ts, the same for every event of a rank
shift = {}
for r in ranks:
    src = json.load(open(r["source"]), parse_float=Decimal)
    s_ts = [e["ts"] for e in src["traceEvents"] if "ts" in e]
    by_pid = {int(k): v for k, v in r["pids"].items()}
    m_ts = [e["ts"] for e in t["traceEvents"] if "ts" in e and e["pid"] in by_pid.values()]
    assert len(s_ts) == len(m_ts), (len(s_ts), len(m_ts))
    d = {m - s for s, m in zip(s_ts, m_ts)}
    assert len(d) == 1, d
    shift[r["hostname"]] = d.pop()
    assert shift[r["hostname"]] * 1000 == r["shift_ns"]
# relative to unaligned, node1 is moved by its offset difference: mono base difference + the skew
want = (truth["nodes"]["node1"]["offset_ns"] - truth["nodes"]["node0"]["offset_ns"])
assert want == truth["nodes"]["node0"]["mono0_ns"] - truth["nodes"]["node1"]["mono0_ns"] + skew
assert (shift["node1"] - shift["node0"]) * 1000 == want, (shift, want)
# timeline starts near 0
assert min(e["ts"] for e in t["traceEvents"] if "ts" in e) >= 0
# flow ids unique: every id is one s and one f
from collections import Counter
c = Counter((e["ph"], e["id"]) for e in t["traceEvents"] if e.get("ph") in ("s", "f"))
ids = {i for (_, i) in c}
assert all(c[("s", i)] == 1 and c[("f", i)] == 1 for i in ids), c
assert len(ids) == 8 * 2
print("ok")
PY
	assert_success
	assert_output "ok"
}

@test "merge --segment and --region; old manifests without clock fall back to start_wallclock" {
	gen --no-clock
	run "$FVBPF" merge "$GEN_OUT"/node* -o "$BATS_TEST_TMPDIR/m.json" --segment 1 --region training_train_one_step
	assert_success
	run python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["otherData"]
assert m["reference_segment"] == 1
assert all(n["offset_source"].startswith("summary start_wallclock") for n in m["clock_alignment"]["nodes"])
assert all(r["segment"] == 1 for r in m["ranks"]), [r["segment"] for r in m["ranks"]]
print("ok")' "$BATS_TEST_TMPDIR/m.json"
	assert_output "ok"
	run "$FVBPF" merge "$GEN_OUT/node0" -o "$BATS_TEST_TMPDIR/m.json" --segment 99
	assert_failure
	assert_output --partial "no segment 99"
}

@test "report and merge on a real attach of the marker workload" {
	start_workload "$WL_LOG" "$TRAINER" --steps 6 --step-ms 12 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 3 -r training_train_one_step,training_forward
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run "$FVBPF" report "$OUT"
	assert_success
	assert_output --partial "region training_train_one_step: 3 segments"
	assert_output --partial "slowest rank:"
	run "$FVBPF" report --json "$OUT"
	assert_success
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); r=d["regions"][0]; assert r["ranks"][0]["complete"]==3, r' "$output"
	run "$FVBPF" merge "$OUT" -o "$BATS_TEST_TMPDIR/merged.json"
	assert_success
	run python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
x = [e for e in t["traceEvents"] if e.get("ph") == "X"]
assert x and min(e["ts"] for e in x) >= 0, len(x)
assert any(e.get("name") == "process_name" and e["args"]["name"].startswith("rank 0 ") for e in t["traceEvents"])
print("ok", t["otherData"]["clock_alignment"]["nodes"][0]["offset_source"].split(" ")[0])' "$BATS_TEST_TMPDIR/merged.json"
	assert_success
	assert_output --regexp "^ok (manifest|summary)$"
}

@test "errors: each one clear line and a non-zero status" {
	echo x >"$BATS_TEST_TMPDIR/file"
	run "$FVBPF" report "$BATS_TEST_TMPDIR/file"
	assert_failure
	assert_output "fvbpf: error: $BATS_TEST_TMPDIR/file: not a directory (give fvbpf attach's output directory)"
	mkdir -p "$BATS_TEST_TMPDIR/empty" "$BATS_TEST_TMPDIR/corrupt"
	run "$FVBPF" report "$BATS_TEST_TMPDIR/empty"
	assert_failure
	assert_output --partial "$BATS_TEST_TMPDIR/empty: no manifest.json"
	[ "${#lines[@]}" -eq 1 ]
	printf '{"tool":"fvbpf","files":[' >"$BATS_TEST_TMPDIR/corrupt/manifest.json"
	run "$FVBPF" report "$BATS_TEST_TMPDIR/corrupt"
	assert_failure
	assert_output --partial "$BATS_TEST_TMPDIR/corrupt/manifest.json: not valid JSON"
	[ "${#lines[@]}" -eq 1 ]
	run "$FVBPF" merge "$BATS_TEST_TMPDIR/corrupt"
	[ "$status" -eq 2 ]
	assert_output "fvbpf: error: no output file: fvbpf merge DIR... -o FILE"
	run "$FVBPF" report --top 0 "$BATS_TEST_TMPDIR/corrupt"
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 1 ]
}

# "$FVBPF" "$@" under `run`, its peak RSS (KiB) in PEAK_KB.  Without a
# sanitizer the address space is capped at 1 GiB, so that a regression
# fails here instead of growing until the OOM killer ends it (24 GiB seen).
run_peak() {
	local t=$BATS_TEST_TMPDIR/time.out
	if [ -n "${FVBPF_SANITIZED:-}" ]; then
		run /usr/bin/time -f '%M' -o "$t" "$FVBPF" "$@"
	else
		run bash -c 'ulimit -v 1048576 && exec /usr/bin/time -f %M -o "$0" "$@"' "$t" "$FVBPF" "$@"
	fi
	PEAK_KB=$(tail -n 1 "$t")
}

# The file names of files[0] of a manifest.
first_entry() {
	python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["files"][0]; print(f[sys.argv[2]])' "$@"
}

@test "report and merge: a manifest listing one summary 200,000 times is read once each, under the default --max-memory" {
	plain_pass_only "its point is the memory bound, which the ASan build does not keep (RSS unchecked)"
	python3 "$GEN" "$GEN_OUT" --nodes 1 --ranks 1 --segments 1 --repeat 200000
	run_peak report "$GEN_OUT/node0"
	assert_success
	assert_output --partial "node0/manifest.json: 199999 files[] entries repeat an earlier entry's file: read once"
	assert_output --partial "region training_train_one_step: 1 segments (1 complete, 0 incomplete), 1 rank"
	echo "# report peak RSS ${PEAK_KB} KiB" >&3
	[ -n "${FVBPF_SANITIZED:-}" ] || [ "$PEAK_KB" -lt $((256 * 1024)) ]
	run_peak merge "$GEN_OUT/node0" -o "$BATS_TEST_TMPDIR/m.json"
	assert_success
	assert_output --partial "merged 1 rank"
	echo "# merge peak RSS ${PEAK_KB} KiB" >&3
	[ -n "${FVBPF_SANITIZED:-}" ] || [ "$PEAK_KB" -lt $((256 * 1024)) ]
}

@test "report and merge: 50,000 distinct entries within --max-memory 64M; a bound too small is one error line" {
	plain_pass_only "its point is the memory bound, which the ASan build does not keep (RSS unchecked)"
	python3 "$GEN" "$GEN_OUT" --nodes 1 --ranks 1 --segments 1
	d=$GEN_OUT/node0
	# 50,000 segments of 500 ranks, their summaries links of one file
	python3 - "$d" <<'PY'
import json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
f = m["files"][0]
files = []
for i in range(50000):
    e = dict(f, rank=i % 500, pid=10000 + i % 500, segment=i // 500,
             summary_json="summary_%06d.json" % i, trace="trace_%06d.json" % i)
    os.link(os.path.join(d, f["summary_json"]), os.path.join(d, e["summary_json"]))
    files.append(e)
m["files"] = files
json.dump(m, open(os.path.join(d, "manifest.json"), "w"))
PY
	# the ASan build's own RSS is past 64M (shadow memory, quarantine)
	mm=64M
	[ -z "${FVBPF_SANITIZED:-}" ] || mm=4G
	run_peak report --max-memory "$mm" "$d"
	assert_success
	assert_output --partial "region training_train_one_step: 50000 segments (50000 complete, 0 incomplete), 500 ranks"
	echo "# report peak RSS ${PEAK_KB} KiB" >&3
	[ -n "${FVBPF_SANITIZED:-}" ] || [ "$PEAK_KB" -lt $((64 * 1024)) ]
	run_peak merge --max-memory "$mm" "$d" -o "$BATS_TEST_TMPDIR/m.json"
	assert_failure # the traces are not there: only the summaries were linked
	assert_output --partial "trace_000000.json: No such file or directory"
	[ -n "${FVBPF_SANITIZED:-}" ] || [ "$PEAK_KB" -lt $((64 * 1024)) ]
	# the tables do not fit: refused before growing, one line with the fix
	run "$FVBPF" report --max-memory 40M "$d"
	assert_failure
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp "^fvbpf: error: .*--max-memory.*: give (a larger one, e\.g\. )?--max-memory [0-9]+M( or more)?$"
	run "$FVBPF" report --max-memory 1M "$d"
	assert_failure
	assert_output --regexp "^fvbpf: error: --max-memory 1 MiB is too small for fvbpf report: .*: give --max-memory [0-9]+M or more$"
	run "$FVBPF" merge --max-memory 1M "$d" -o "$BATS_TEST_TMPDIR/m.json"
	assert_failure
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial "is too small for fvbpf merge"
	run "$FVBPF" report --max-memory 12Q "$d"
	[ "$status" -eq 2 ]
	assert_output "fvbpf: error: invalid --max-memory '12Q': give a size from 1 byte to 1024G with an optional K, M or G suffix, e.g. --max-memory 512M"
	# export reads every directory before it writes: the same bound, the same line
	run "$FVBPF" export --max-memory 40M "$d" -o "$BATS_TEST_TMPDIR/hta"
	assert_failure
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp "^fvbpf: error: .*--max-memory.*: give (a larger one, e\.g\. )?--max-memory [0-9]+M( or more)?$"
	[ ! -e "$BATS_TEST_TMPDIR/hta" ]
	run "$FVBPF" export --max-memory 12Q "$d" -o "$BATS_TEST_TMPDIR/hta"
	[ "$status" -eq 2 ]
	assert_output "fvbpf: error: invalid --max-memory '12Q': give a size from 1 byte to 1024G with an optional K, M or G suffix, e.g. --max-memory 512M"
}

@test "report and merge read only regular files inside the directory: links are refused by name, their target never shown" {
	gen
	d=$GEN_OUT/node0
	trace=$(first_entry "$d/manifest.json" trace)
	summ=$(first_entry "$d/manifest.json" summary_json)
	# root's files, not for the eyes of whoever may write the directory
	secret=$BATS_TEST_TMPDIR/secret
	mkdir -m 0700 "$secret"
	sed 's/aten::addmm/SECRET_d41d8cd9/g' "$d/$trace" >"$secret/trace.json"
	sed 's/aten::addmm/SECRET_d41d8cd9/g' "$d/$summ" >"$secret/summary.json"
	cp "$d/manifest.json" "$secret/manifest.json"
	chmod 0600 "$secret"/*
	# the trace merge picks (rank 0's first segment): a link
	ln -sf "$secret/trace.json" "$d/$trace"
	run "$FVBPF" merge "$d" "$GEN_OUT/node1" -o "$BATS_TEST_TMPDIR/m.json"
	assert_failure
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial "$d/$trace: a symbolic link: refused"
	refute_output --partial SECRET
	[ ! -e "$BATS_TEST_TMPDIR/m.json" ]
	run grep -rqs SECRET_d41d8cd9 "$BATS_TEST_TMPDIR" --exclude-dir=secret
	[ "$status" -eq 1 ] # nowhere, temporary files included
	# a summary: a link
	ln -sf "$secret/summary.json" "$d/$summ"
	run "$FVBPF" report --json "$d"
	assert_failure
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial "$d/$summ: a symbolic link: refused"
	refute_output --partial SECRET
	# the manifest: a link
	ln -sf "$secret/manifest.json" "$GEN_OUT/node1/manifest.json"
	run "$FVBPF" report "$GEN_OUT/node1"
	assert_failure
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial "$GEN_OUT/node1/manifest.json: a symbolic link: refused"
}

@test "report and merge: a FIFO in place of a trace, summary or manifest is refused at once, also one swapped in after a check" {
	gen
	d=$GEN_OUT/node0
	trace=$(first_entry "$d/manifest.json" trace)
	summ=$(first_entry "$d/manifest.json" summary_json)
	mv "$d/$trace" "$BATS_TEST_TMPDIR/trace.json"
	mkfifo "$d/$trace"
	run timeout 20 "$FVBPF" merge "$d" -o "$BATS_TEST_TMPDIR/m.json"
	[ "$status" -eq 1 ]
	assert_output --partial "$d/$trace: not a regular file: refused"
	rm "$d/$trace"
	mv "$BATS_TEST_TMPDIR/trace.json" "$d/$trace"
	mv "$d/$summ" "$BATS_TEST_TMPDIR/summary.json"
	mkfifo "$d/$summ"
	run timeout 20 "$FVBPF" report "$d"
	[ "$status" -eq 1 ]
	assert_output --partial "$d/$summ: not a regular file: refused"
	rm "$d/$summ"
	mv "$BATS_TEST_TMPDIR/summary.json" "$d/$summ"
	rm "$GEN_OUT/node1/manifest.json"
	mkfifo "$GEN_OUT/node1/manifest.json"
	run timeout 20 "$FVBPF" report "$GEN_OUT/node1"
	[ "$status" -eq 1 ]
	assert_output --partial "$GEN_OUT/node1/manifest.json: not a regular file: refused"
	# the trace swapped between a FIFO and the file, again and again, while
	# merge runs: it must never wait on the FIFO (checking the path and then
	# opening it hung about one merge in 20 here: 100 make a miss unlikely)
	cp "$d/$trace" "$BATS_TEST_TMPDIR/trace.json"
	python3 - "$d/$trace" "$BATS_TEST_TMPDIR/trace.json" "$BATS_TEST_TMPDIR/stop" <<'PY' >/dev/null 2>&1 3>&- &
import os, sys, time
path, reg, stop = sys.argv[1:]
end, i = time.time() + 300, 0
while time.time() < end and not os.path.exists(stop):
    tmp = "%s.swap%d" % (path, i % 2)
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.mkfifo(tmp) if i % 2 else os.link(reg, tmp)
    os.rename(tmp, path)
    i += 1
PY
	swapper=$!
	WL_PIDS+=("$swapper")
	for i in $(seq 100); do
		run timeout 20 "$FVBPF" merge "$d" -o "$BATS_TEST_TMPDIR/m.json"
		[ "$status" -ne 124 ]
		[ "$status" -eq 0 ] || assert_output --partial "$d/$trace: not a regular file: refused"
	done
	touch "$BATS_TEST_TMPDIR/stop"
	wait "$swapper"
}

# Issue 35: ranks paired by training step, never by segment number.  The
# generator's rank 1 starts two steps late, rank 2 has no segment at step
# 1 (its later segments numbered on), the nodes' CLOCK_MONOTONIC and
# recorded realtime clocks differ (SKEW): segment N of each rank is not
# the same step, and truth.json says which are.
gen_steps() { gen --ranks 2 --segments 4 --late 1:2 --skip 2:1 "$@"; }

# The step check: report --json's steps, merge's picks and export's
# folders against truth.json's (ARGS: report/merge/export options).
check_steps() { # TRUTH_KEY [OPTION...]
	local key=$1 out=$BATS_TEST_TMPDIR/hta
	shift
	"$FVBPF" report --json "$@" "$GEN_OUT/node0" "$GEN_OUT/node1" >"$BATS_TEST_TMPDIR/r.json"
	"$FVBPF" report "$@" "$GEN_OUT/node0" "$GEN_OUT/node1" >"$BATS_TEST_TMPDIR/r.txt"
	rm -rf "$out"
	"$FVBPF" export "$@" "$GEN_OUT/node0" "$GEN_OUT/node1" -o "$out" >"$BATS_TEST_TMPDIR/e.txt" 2>&1
	local n
	n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))[sys.argv[2]]))' \
		"$GEN_OUT/truth.json" "$key")
	for ((s = 0; s < n; s++)); do
		"$FVBPF" merge "$@" --step "$s" "$GEN_OUT/node0" "$GEN_OUT/node1" \
			-o "$BATS_TEST_TMPDIR/m$s.json" >/dev/null 2>>"$BATS_TEST_TMPDIR/m.err"
	done
	run python3 - "$GEN_OUT" "$BATS_TEST_TMPDIR" "$key" <<'PY'
import json, os, re, sys
gen, tmp, key = sys.argv[1:]
truth = json.load(open(os.path.join(gen, "truth.json")))
want = truth[key]
hosts = {v["host"]: v for v in truth["ranks"].values()}
label = lambda k: "%s rank %s" % tuple(k.split("/")[:2])
g = json.load(open(os.path.join(tmp, "r.json")))["regions"][0]
steps = g["steps"]
assert [s["step"] for s in steps] == list(range(len(want))), [s["step"] for s in steps]
allranks = {label(k) for k in truth["ranks"]}
for s, w in zip(steps, want):
    got = {m["label"]: m["segment"] for m in s["segments"]}
    assert got == {label(k): v for k, v in w.items()}, (s["step"], got, w)
    assert set(s["missing"]) == allranks - set(got) and s["missing_count"] == len(allranks - set(got)), s
# the text says which rank has no segment where
text = open(os.path.join(tmp, "r.txt")).read()
for r in sorted(allranks):
    miss = [str(i) for i, w in enumerate(want) if r not in {label(k) for k in w}]
    if miss:
        assert "%s: no segment at %d of %d steps (%s)" % (r, len(miss), len(want), ", ".join(miss)) in text, (r, miss)
# export: a folder per step holding that step of every rank, each file the segment's own trace
region = os.path.join(tmp, "hta", truth["region"])
assert sorted(os.listdir(region)) == ["step%04d" % i for i in range(len(want))], os.listdir(region)
for i, w in enumerate(want):
    d = os.path.join(region, "step%04d" % i)
    files = sorted(os.listdir(d))
    assert files == sorted("rank%s.pt.trace.json" % k.split("/")[1] for k in w), (i, files, w)
    for k, seg in w.items():
        t = json.load(open(os.path.join(d, "rank%s.pt.trace.json" % k.split("/")[1])))
        assert t["otherData"]["segment"] == seg and t["otherData"]["rank"] == int(k.split("/")[1]), (i, k)
# merge --step N: the same segments, the ranks without one named
err = open(os.path.join(tmp, "m.err")).read()
for i, w in enumerate(want):
    m = json.load(open(os.path.join(tmp, "m%d.json" % i)))["otherData"]
    assert m["step"] == i, m["step"]
    assert {(r["rank"], r["segment"]) for r in m["ranks"]} == {(int(k.split("/")[1]), v) for k, v in w.items()}, (i, m["ranks"])
    miss = {re.sub(r" \(.*", "", x) for x in m["ranks_without_segment"]}
    assert miss == {"rank %s" % k.split("/")[1] for k in truth["ranks"]} - {"rank %s" % k.split("/")[1] for k in w}, (i, miss)
    for x in m["ranks_without_segment"]:
        assert "fvbpf: merge: %s has no segment at step %d of region" % (x, i) in err, (x, i)
print("ok", len(want), "steps")
PY
	echo "$output"
	assert_success
	assert_output --regexp '^ok [0-9]+ steps$'
}

@test "steps: report, --json, merge and export pair ranks by step, not segment number (a late rank, a skipped step, two hosts' clocks)" {
	gen_steps
	check_steps steps
	# not one step of rank 0's is rank 1's segment of the same number
	python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
assert any(w.get("node0/1/0") not in (None, w.get("node0/0/0")) for w in t["steps"]), t["steps"]' "$GEN_OUT/truth.json"
	run cat "$BATS_TEST_TMPDIR/e.txt"
	assert_output --partial "exported 16 traces"
	assert_output --partial "fvbpf: 4 of 6 steps lack a rank (no segment of it at that step): fvbpf report lists them"
	# --segment N: the step of the lowest rank's segment N
	run "$FVBPF" merge --segment 0 "$GEN_OUT/node0" "$GEN_OUT/node1" -o "$BATS_TEST_TMPDIR/s.json"
	assert_success
	assert_output --partial ", step 0 (--segment"
	assert_output --partial "fvbpf: merge: rank 1 (node0) has no segment at step 0"
	run "$FVBPF" merge --step 99 "$GEN_OUT/node0" "$GEN_OUT/node1" -o "$BATS_TEST_TMPDIR/s.json"
	assert_failure
	assert_output "fvbpf: error: merge: region 'training_train_one_step' has 6 steps (0 to 5): no step 99"
	run "$FVBPF" merge --step 1 --segment 1 "$GEN_OUT/node0" -o "$BATS_TEST_TMPDIR/s.json"
	[ "$status" -eq 2 ]
	assert_output --partial "--step and --segment: give one"
}

@test "steps: directories written before the step keys pair the same way; started_before_attach stands for counted" {
	gen_steps --old-keys --uncounted 3:0
	check_steps steps
	run "$FVBPF" report "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_output --partial "1 segment does not count (started before attach: 1)"
}

@test "steps: segments that do not count are left out, said, and taken with --include-uncounted" {
	gen_steps --uncounted 3:0
	check_steps steps
	run cat "$BATS_TEST_TMPDIR/r.txt"
	assert_output --partial "region training_train_one_step: 16 segments (14 complete, 1 incomplete, 1 not counted), 4 ranks"
	assert_output --partial "1 segment does not count (fragment: 1): left out of every figure, --include-uncounted takes them in"
	run cat "$BATS_TEST_TMPDIR/e.txt"
	assert_output --partial "1 segment that does not count (begun before the attach, ...) left out: --include-uncounted exports them"
	python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))["regions"][0]
r3 = [r for r in g["ranks"] if r["rank"] == 3][0]
assert g["not_counted"] == 1 and g["not_counted_why"] == [{"why": "fragment", "segments": 1}] and not g["not_counted_taken_in"], g
assert r3["not_counted"] == 1 and r3["complete"] == 3, r3' "$BATS_TEST_TMPDIR/r.json"
	rm -f "$BATS_TEST_TMPDIR/m.err"
	check_steps steps_all --include-uncounted
	python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))["regions"][0]
assert g["not_counted_taken_in"] and [r for r in g["ranks"] if r["rank"] == 3][0]["complete"] == 4, g' "$BATS_TEST_TMPDIR/r.json"
}

@test "steps: a step key on every segment pairs by key where the clocks do not overlap; merge warns in one line" {
	# node1's recorded clock 30 ms off: its 20 ms segments overlap none of node0's
	gen --ranks 2 --segments 3 --offset-skew-ns 30000000 --step-keys
	check_steps steps
	python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))["regions"][0]
assert g["pairing"]["paired_by"] == "step_key", g["pairing"]
assert all(s["step_key"] == "pg0:%d" % s["step"] and not s["segments_overlap"] for s in g["steps"]), g["steps"]' \
		"$BATS_TEST_TMPDIR/r.json"
	run "$FVBPF" merge "$GEN_OUT/node0" "$GEN_OUT/node1" -o "$BATS_TEST_TMPDIR/k.json"
	assert_success
	[ "$(grep -c '^fvbpf: warning: merge: 2 of 4 ranks.* do not overlap the reference rank' <<<"$output")" -eq 1 ]
	# without the keys the same directories pair by their clocks, wrongly here
	gen --ranks 2 --segments 3 --offset-skew-ns 30000000
	run "$FVBPF" report --json "$GEN_OUT/node0" "$GEN_OUT/node1"
	python3 -c '
import json, sys
g = json.loads(sys.argv[1])["regions"][0]
assert g["pairing"]["paired_by"] == "time_overlap" and g["pairing"]["steps_missing_a_rank"] > 0, g["pairing"]' "$output"
}

@test "split: each rank's time per sub-region (FastVideo's four, one nested), in text, --json and --html" {
	gen --ranks 2 --segments 3 --sub-regions
	run "$FVBPF" report --json "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_success
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/r.json"
	run "$FVBPF" report "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_success
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/r.txt"
	run "$FVBPF" report --html "$BATS_TEST_TMPDIR/r.html" "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_success
	run python3 - "$GEN_OUT/truth.json" "$BATS_TEST_TMPDIR" <<'PY'
import html, json, os, re, sys
truth, tmp = json.load(open(sys.argv[1])), sys.argv[2]
g = json.load(open(os.path.join(tmp, "r.json")))["regions"][0]
assert g["split_nesting"] == "recorded", g["split_nesting"]
ranks = {(r["hostname"], r["rank"]): r for r in g["ranks"]}
text = open(os.path.join(tmp, "r.txt")).read().split("\n  split of ", 1)[1]
page = open(os.path.join(tmp, "r.html")).read()
for k, t in truth["ranks"].items():
    r = ranks[(t["host"], t["rank"])]
    rows = {x["region"]: x for x in r["split"]["inside"]}
    assert set(rows) == set(t["split"]), (k, set(rows))
    for name, ms in t["split"].items():
        assert abs(rows[name]["mean_ms"] - ms) < 1e-6, (k, name, rows[name], ms)
        assert rows[name]["depth"] == (2 if name == "distillation_loss" else 1), rows[name]
    top = sum(ms for n, ms in t["split"].items() if n != "distillation_loss")
    assert abs(r["split"]["outside_sub_regions_ms"] - (t["mean_ms"] - top)) < 1e-6, (k, r["split"])
    # text: the rank's block, forward's nested region indented under it
    block = text.split("%s rank %d (" % (t["host"], t["rank"]), 1)[1].split("\n    node", 1)[0]
    assert re.search(r"\n      training_dataloader +%.3f " % t["split"]["training_dataloader"], block), block
    assert re.search(r"\n        distillation_loss +%.3f " % t["split"]["distillation_loss"], block), block
    assert "(training_train_one_step outside these)" in block
    # the page: a row of the split table per rank
    row = re.search(r"<tr><td class=\"name\">%s rank %d</td><td>[\d.]+</td>(.*?)</tr>" % (t["host"], t["rank"]),
                    page.split("Split into sub-regions")[1]).group(1)
    assert "%.3f (" % t["split"]["training_forward"] in row, row
# the slow rank: its dataloader is where its time goes
slow = truth["ranks"][truth["slowest"]["key"]]
assert slow["split"]["training_dataloader"] > 3 * min(v["split"]["training_dataloader"] for v in truth["ranks"].values())
assert "&#8250; distillation_loss" in page
print("ok")
PY
	echo "$output"
	assert_success
	assert_output "ok"
	# summaries written before region rows had a parent: flat, and said
	gen --ranks 2 --segments 3 --sub-regions --old-keys
	run "$FVBPF" report "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_success
	assert_output --partial "sub-regions shown flat"
}
