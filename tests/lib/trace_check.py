#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Independent checker of an fvbpf output directory, used by the BATS tests.

It parses every trace and summary, checks the rules of design.md (file names,
strict nesting per thread track, slices inside their segment, summaries that
agree with the traces, manifest) and prints counts that the tests compare
with what the workload says it did:

    segments=5 incomplete=0
    region training_forward=5
    ...
Exit status 1 and "error: ..." lines when a rule is broken.
"""
import collections
import glob
import gzip
import json
import os
import re
import sys

# Four digits at least: segment 10000 is "segment10000".
NAME_RE = re.compile(r"^trace_(rank\d+(?:_restart\d+)?|pid\d+)_segment(\d{4,})_([A-Za-z0-9._-]+?)\.json(?:\.gz)?$")
EPS = 0.0015  # us: three decimals on each side


def check_nesting(events, errors, fname):
    tracks = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            tracks[(e["pid"], e["tid"])].append(e)
    for key, evs in tracks.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            # Leave the parents that ended before this slice starts (an
            # empty slice at its parent's very end is still inside it).
            while stack and (e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - EPS and e["dur"] > 0 or
                             e["ts"] > stack[-1]["ts"] + stack[-1]["dur"] + EPS):
                stack.pop()
            if stack:
                p = stack[-1]
                if e["ts"] + e["dur"] > p["ts"] + p["dur"] + EPS:
                    errors.append("%s: %s overlaps %s on tid %s" % (fname, e["name"], p["name"], key[1]))
                if e["args"].get("depth") is not None and p["args"].get("depth") is not None and \
                        e["args"]["depth"] != p["args"]["depth"] + 1:
                    errors.append("%s: depth of %s is %s inside %s at depth %s" %
                                  (fname, e["name"], e["args"]["depth"], p["name"], p["args"]["depth"]))
            elif e["args"].get("depth", 0) != 0:
                errors.append("%s: %s at depth %s has no parent" % (fname, e["name"], e["args"]["depth"]))
            stack.append(e)
    return len(tracks)


def check_drops(manifest, drops_in_traces, errors):
    """Every drop is charged once: to a written segment or between segments,
    and per process they add up to BPF's counters."""
    procs = manifest.get("processes", [])
    total = sum(p.get("ringbuf_drops", 0) for p in procs)
    between = sum(p.get("drops_between_segments", 0) for p in procs)
    bpf_total = manifest.get("loss", {}).get("ringbuf_drops")
    print("drops_total=%d drops_between=%d drops_bpf=%s" % (total, between, bpf_total))
    if bpf_total is not None and total != bpf_total:
        errors.append("processes' drops add up to %d, BPF counted %d" % (total, bpf_total))
    if manifest.get("loss", {}).get("write_errors", 0) == 0 and drops_in_traces + between != total:
        errors.append("drops in traces (%d) + between segments (%d) != total %d" %
                      (drops_in_traces, between, total))


class TraceResult:
    """What one trace (and its summaries) gave: main() adds them up."""

    def __init__(self):
        self.errors = []
        self.who = None
        self.segments = self.incomplete = self.lost_end = self.drops = self.max_threads = 0
        self.max_segment_us = 0.0
        self.regions = collections.Counter()
        self.apis = collections.Counter()
        self.kernels = collections.Counter()
        self.arg_values = collections.defaultdict(set)


def check_trace(outdir, path):
    res = TraceResult()
    fname = os.path.basename(path)
    m = NAME_RE.match(fname)
    if not m:
        res.errors.append("bad trace file name " + fname)
        return res
    who, seq, region = m.groups()
    res.who = who
    try:
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            trace = json.load(f)
    except (ValueError, OSError) as exc:
        res.errors.append("%s does not parse: %s" % (fname, exc))
        return res
    meta = trace.get("otherData", {})
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        res.errors.append(fname + ": no traceEvents")
        return res
    for key in ("rank", "pid", "hostname", "command", "region", "segment", "start_us",
                "end_us", "incomplete", "ringbuf_drops", "clock"):
        if key not in meta:
            res.errors.append("%s: metadata lacks %s" % (fname, key))
    if meta.get("segment") != int(seq):
        res.errors.append("%s: segment %s in metadata" % (fname, meta.get("segment")))
    if meta.get("region") != region:
        res.errors.append("%s: region %s in metadata" % (fname, meta.get("region")))
    res.segments = 1
    res.incomplete = int(bool(meta.get("incomplete")))
    if meta.get("lost_end"):
        res.lost_end = 1
        if not meta.get("incomplete"):
            res.errors.append("%s: lost its end yet is not marked incomplete" % fname)
    if isinstance(meta.get("ringbuf_drops"), int):
        res.drops = meta["ringbuf_drops"]
    if isinstance(meta.get("start_us"), (int, float)) and isinstance(meta.get("end_us"), (int, float)):
        res.max_segment_us = meta["end_us"] - meta["start_us"]
    names = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    if not names:
        res.errors.append(fname + ": no thread names")
    slices = [e for e in events if e.get("ph") == "X"]
    count = collections.Counter()
    for e in slices:
        if e.get("cat") != "user_annotation" or not e["name"].startswith("fvbpf.region::"):
            continue
        count[e["name"][len("fvbpf.region::"):]] += 1
        if e["ts"] < meta["start_us"] - EPS or e["ts"] + e["dur"] > meta["end_us"] + EPS:
            res.errors.append("%s: %s lies outside its segment" % (fname, e["name"]))
    api_count = collections.Counter()
    kernel_count = collections.Counter()
    for e in slices:
        if e.get("cat") not in ("cuda_runtime", "cuda_driver", "nccl"):
            continue
        if "return" not in e["args"]:
            res.errors.append("%s: %s without a return value" % (fname, e["name"]))
        if e["ts"] < meta["start_us"] - EPS or e["ts"] + e["dur"] > meta["end_us"] + EPS:
            res.errors.append("%s: call %s lies outside its segment" % (fname, e["name"]))
        if e["args"].get("nested_in_call"):
            continue
        api_count[e["name"]] += 1
        if "kernel" in e["args"]:
            kernel_count[e["args"]["kernel"]] += 1
        for key in ("bytes", "grid", "block", "shared_memory", "stream", "kind", "kernel", "return"):
            if key in e["args"]:
                res.arg_values["%s.%s" % (e["name"], key)].add(json.dumps(e["args"][key], separators=(",", ":")))
    res.apis = api_count
    res.kernels = kernel_count
    outer = [e for e in slices if e["ts"] <= meta["start_us"] + EPS and e["args"].get("depth") == 0]
    if not any(e["args"]["region"] == region for e in outer):
        res.errors.append("%s: segment does not start with its region %s" % (fname, region))
    res.regions = count
    res.max_threads = check_nesting(events, res.errors, fname)
    # The summaries must agree with the trace.
    base = fname[len("trace_"):-len(".json.gz" if fname.endswith(".gz") else ".json")]
    spath = os.path.join(outdir, "summary_" + base + ".json")
    tpath = os.path.join(outdir, "summary_" + base + ".txt")
    if not os.path.exists(tpath):
        res.errors.append("missing " + os.path.basename(tpath))
    else:
        with open(tpath) as f:
            text = f.read()
        # a region's rows: one per region it lies in ("in PARENT"), summed
        for name, n in count.items():
            got = sum(int(m) for m in re.findall(r"^%s\s+(\d+)\s.*%%\s+region\b" % re.escape(name),
                                                 text, re.M))
            if got != n:
                res.errors.append("%s: no row '%s %d'" % (os.path.basename(tpath), name, n))
    try:
        with open(spath) as f:
            summary = json.load(f)
    except (OSError, ValueError) as exc:
        res.errors.append("summary %s: %s" % (os.path.basename(spath), exc))
        return res
    rows = {(r["kind"], r["name"]): r for r in summary["rows"]}
    for kind, counts in (("kernel", kernel_count),):
        for name, n in counts.items():
            r = rows.get((kind, name))
            if not r or r["count"] != n:
                res.errors.append("%s: %s row %s count %s, trace has %d" %
                              (os.path.basename(spath), kind, name, r and r["count"], n))
    for name, n in api_count.items():
        r = [x for (k, nm), x in rows.items() if nm == name and k.startswith(("cuda", "nccl"))]
        if not r or r[0]["count"] != n:
            res.errors.append("%s: call row %s count %s, trace has %d" %
                          (os.path.basename(spath), name, r and r[0]["count"], n))
    # a region has a row per region it lies in (its "parent"): summed
    regrows = collections.defaultdict(list)
    for r in summary["rows"]:
        if r["kind"] == "region":
            regrows[r["name"]].append(r)
    for name, n in count.items():
        rs = regrows.get(name, [])
        if sum(r["count"] for r in rs) != n:
            res.errors.append("%s: row %s count %s, trace has %d" % (os.path.basename(spath), name,
                                                               [r["count"] for r in rs], n))
        for r in rs:
            for key in ("shapes", "self_cpu_us", "cpu_us", "self_device_us", "device_us", "parent"):
                if key not in r:
                    res.errors.append("%s: row %s lacks %s" % (os.path.basename(spath), name, key))
            if r["self_cpu_us"] > r["cpu_us"] + EPS:
                res.errors.append("%s: self time above total for %s" % (os.path.basename(spath), name))
    return res


def check_traces(outdir, traces):
    """Each trace checked apart: in 2+ processes where there are many (a
    flood's hundreds of megabytes), in the order given either way."""
    jobs = min(os.cpu_count() or 1, 4)
    if len(traces) < 64 or jobs < 2:
        return [check_trace(outdir, p) for p in traces]
    import multiprocessing
    with multiprocessing.Pool(jobs) as pool:
        return pool.starmap(check_trace, [(outdir, p) for p in traces], chunksize=8)


def main():
    outdir = sys.argv[1]
    errors = []
    regions = collections.Counter()
    apis = collections.Counter()
    kernels = collections.Counter()
    arg_values = collections.defaultdict(set)
    segments = incomplete = lost_end = 0
    drops_in_traces = 0
    max_segment_us = 0.0
    max_threads = 0
    per_who = collections.Counter()
    # --format json or json.gz (gzip-compressed, the same JSON)
    traces = sorted(glob.glob(os.path.join(outdir, "trace_*.json")) +
                    glob.glob(os.path.join(outdir, "trace_*.json.gz")))
    for res in check_traces(outdir, traces):
        errors.extend(res.errors)
        if res.who is not None:
            per_who[res.who] += 1
        segments += res.segments
        incomplete += res.incomplete
        lost_end += res.lost_end
        drops_in_traces += res.drops
        max_segment_us = max(max_segment_us, res.max_segment_us)
        max_threads = max(max_threads, res.max_threads)
        regions.update(res.regions)
        apis.update(res.apis)
        kernels.update(res.kernels)
        for k, v in res.arg_values.items():
            arg_values[k] |= v
    for path in glob.glob(os.path.join(outdir, "*")):
        base = os.path.basename(path)
        if base.startswith(".") and ".tmp." in base:
            errors.append("temporary file left behind: " + base)
    mpath = os.path.join(outdir, "manifest.json")
    if os.path.exists(mpath):
        with open(mpath) as f:
            manifest = json.load(f)
        listed = {x["trace"] for x in manifest["files"]}
        present = {os.path.basename(p) for p in traces}
        if listed != present:
            errors.append("manifest lists %s, directory has %s" % (sorted(listed), sorted(present)))
        print("manifest_warnings=%d" % len(manifest["warnings"]))
        check_drops(manifest, drops_in_traces, errors)
        print("never_entered=%s" % ",".join(manifest["regions_never_entered"]))
    print("segments=%d incomplete=%d" % (segments, incomplete))
    print("lost_end=%d" % lost_end)
    print("drops_in_traces=%d" % drops_in_traces)
    print("max_segment_us=%.3f" % max_segment_us)
    for who, n in sorted(per_who.items()):
        print("who %s=%d" % (who, n))
    for name, n in sorted(regions.items()):
        print("region %s=%d" % (name, n))
    for name, n in sorted(apis.items()):
        print("api %s=%d" % (name, n))
    for name, n in sorted(kernels.items()):
        print("kernel %s=%d" % (name, n))
    for key, vals in sorted(arg_values.items()):
        print("arg %s=%s" % (key, "|".join(sorted(vals))))
    print("max_threads=%d" % max_threads)
    for e in errors:
        print("error: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
