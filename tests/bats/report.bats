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
