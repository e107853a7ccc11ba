#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Check fvbpf's --profile-memory outputs against an oracle.

  mem_check.py oracle ORACLE SUMMARY.json TRACE.json [MEMORY.svg]
      ORACLE: torch_mem.py oracle's output (line 1: {name: [count,
      cpu_memory_usage, self_cpu_memory_usage]} of key_averages under
      torch.profiler(profile_memory=True); line 2: its [memory] events'
      count, peak Total Allocated and 1 MiB events).  Every torch row must
      hold the oracle's count and both memory columns (names fvbpf cannot
      see, and the oracle's own "[memory]" row of frees outside every op,
      aside); the named ops must be among them with memory; device columns
      0; the segment's CPU peak equal; a 1 MiB [memory] event inside an
      aten::empty slice on its thread; a "Memory cpu" counter track.

  mem_check.py cuda WORKLOAD_LOG SUMMARY.json TRACE.json [MEMORY.svg]
      WORKLOAD_LOG: mem_report.py's, with its "expect {...}" line (what the
      calls it made must give).  Metadata counts and peaks, the CUDA
      [memory] events one for one, counter tracks per device.
  MEMORY.svg: the segment's timeline picture, checked against the
  summary's memory_peaks (a panel per device, its peak and operator).
Prints what it compared; exits 1 on a mismatch.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

UNSEEN = ("detach", "[memory]")
MUST = ("aten::empty", "aten::addmm", "aten::mm", "aten::cat", "aten::clamp_min",
        "aten::linear", "aten::threshold_backward")
MEM_KEYS = ("cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage",
            "self_device_memory_usage")


def load(summary, trace):
    s = json.load(open(summary))
    t = json.load(open(trace))["traceEvents"]
    return s["metadata"], s["rows"], t


def fail(msg):
    print("MISMATCH: " + msg)
    return False


def check_oracle(oracle_path, summary, trace):
    lines = open(oracle_path).read().splitlines()
    oracle = {k: v for k, v in json.loads(lines[0]).items() if k not in UNSEEN}
    kineto = json.loads(lines[1])
    meta, rows, ev = load(summary, trace)
    ok = True
    got = {r["name"]: [r["count"], r["cpu_memory_usage"], r["self_cpu_memory_usage"]]
           for r in rows if r["kind"] in ("cpu_op", "user_annotation")}
    bad = sorted((k, oracle.get(k), got.get(k)) for k in set(oracle) | set(got)
                 if oracle.get(k) != got.get(k))
    print("rows %d, oracle rows %d, with memory %d, mismatches %s" % (
        len(got), len(oracle), sum(1 for v in oracle.values() if v[1] or v[2]), bad[:8]))
    ok = not bad or fail("per-op memory")
    for name in MUST:
        if not (oracle.get(name) and oracle[name][1]):
            ok = fail("the oracle has no memory for %s" % name)
    if any(r.get(k) for r in rows for k in MEM_KEYS[2:]):
        ok = fail("device memory on a CPU-only job")
    print("peak: fvbpf %s, torch.profiler %d" % (meta["memory_peak_cpu_bytes"], kineto["peak"]))
    if meta["memory_peak_cpu_bytes"] != kineto["peak"]:
        ok = fail("segment peak")
    if "aten::" not in meta["memory_peaks"]:
        ok = fail("no op at the peak: %s" % meta["memory_peaks"])
    mem = [e for e in ev if e.get("name") == "[memory]"]
    mib = [e for e in mem if e["args"]["Bytes"] == 1 << 20]
    empties = [e for e in ev if e.get("name") == "aten::empty" and e.get("cat") == "cpu_op"]
    inside = [m for m in mib for e in empties if e["tid"] == m["tid"]
              and e["ts"] <= m["ts"] <= e["ts"] + e["dur"]]
    print("[memory] events %d (oracle %d, frees after the scope included), 1 MiB %d (oracle %d),"
          " inside aten::empty %d" % (len(mem), kineto["memory_events"], len(mib),
                                      kineto["mib_events"], len(inside)))
    if len(mib) != kineto["mib_events"] or len(inside) != len(mib) or not mib:
        ok = fail("1 MiB [memory] event")
    for m in mem:
        a = m["args"]
        if (m["ph"], m["cat"], m["s"], a["Device Type"], a["Device Id"]) != \
                ("i", "cpu_instant_event", "t", 0, -1) or "Total Reserved" not in a:
            ok = fail("[memory] event as Kineto writes it: %s" % m)
            break
    if len(mem) != meta["memory_events"]:
        ok = fail("memory_events %s, trace %d" % (meta["memory_events"], len(mem)))
    if not any(e.get("ph") == "C" and e.get("name") == "Memory cpu" for e in ev):
        ok = fail("no Memory cpu counter track")
    return ok


def check_cuda(log, summary, trace):
    exp = None
    for line in open(log):
        if line.startswith("expect "):
            exp = json.loads(line[7:])
    if exp is None:
        return fail("no expect line in %s" % log)
    meta, rows, ev = load(summary, trace)
    ok = True
    for k in ("memory_events", "memory_events_lost", "memory_frees_unknown",
              "memory_peak_cpu_bytes", "memory_peak_device_allocated_bytes",
              "memory_peak_device_reserved_bytes"):
        print("%s: fvbpf %s, calls made %s" % (k, meta[k], exp[k]))
        if meta[k] != exp[k]:
            ok = fail(k)
    peaks = meta["memory_peaks"]
    print("memory_peaks: %s" % peaks)
    for dev, (alloc, res) in exp["peaks"].items():
        if "%s allocated=%d reserved=%d " % (dev, alloc, res) not in peaks + " ":
            ok = fail("peak of %s" % dev)
    if "live_at_end=%d" % exp["cpu_live_at_end"] not in peaks:
        ok = fail("CPU allocations live at the end")
    got = [[a["Bytes"], a["Total Allocated"], a["Total Reserved"], a["Device Id"], a["Addr"]]
           for a in (e["args"] for e in ev if e.get("name") == "[memory]")
           if a["Device Type"] == 1]
    print("CUDA [memory] events: %d, calls made %d" % (len(got), len(exp["cuda_events"])))
    if got != exp["cuda_events"]:
        ok = fail("CUDA [memory] events %s" % got)
    tracks = {e["name"] for e in ev if e.get("ph") == "C"}
    want = {"Memory " + d for d in exp["peaks"]} | {"Memory cpu"}
    print("counter tracks: %s" % sorted(tracks))
    if tracks != want:
        ok = fail("counter tracks")
    return ok


def check_svg(path, summary):
    """The timeline picture: well-formed SVG, a panel per device of
    memory_peaks naming the same peak and operator, a line per panel."""
    meta = json.load(open(summary))["metadata"]
    ok = True
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    if root.tag != ns + "svg":
        return fail("%s: not an svg" % path)
    texts = ["".join(t.itertext()) for t in root.iter(ns + "text")]
    lines = list(root.iter(ns + "polyline"))
    peaks = re.findall(r"(\S+) allocated=(\d+)(?: reserved=(\d+))? op=(.*?)(?: live_at_end=\d+)?(?:;|$)",
                       meta["memory_peaks"])
    print("svg: %d panels, %d lines; peaks %s" % (
        sum(1 for t in texts if ": peak allocated " in t), len(lines), [p[0] for p in peaks]))
    for dev, _, _, op in peaks:
        if not any(t.startswith(dev + ": peak allocated ") and (", at " + op + " (") in t
                   for t in texts):
            ok = fail("svg: no panel for %s at %s" % (dev, op))
    if len(lines) < len(peaks):
        ok = fail("svg: %d lines for %d devices" % (len(lines), len(peaks)))
    return ok


def main():
    mode, a, summary, trace = sys.argv[1:5]
    ok = check_oracle(a, summary, trace) if mode == "oracle" else check_cuda(a, summary, trace)
    if len(sys.argv) > 5:
        ok = check_svg(sys.argv[5], summary) and ok
    print("ok" if ok else "FAILED")
    sys.exit(0 if ok else 1)


main()
