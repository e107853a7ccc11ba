#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Checks of an fvbpf GPU trace directory, and the GPU check's JSON report.

    gpu_report.py traces DIR [--torch RESULT.json] [--segments N]
        Analyse fvbpf's output DIR (trace_*.json, summary_*.json) and print
        the checks and numbers as JSON.  RESULT.json is torch_train.py
        --profile --result output (torch_kernels_per_step).

    gpu_report.py finalize WORK OUT
        Build OUT/gpu_check.json from what tests/gpu/check.sh left in WORK:
        kv/* (notes; *.json files hold JSON values), checks.tsv (name, 0/1,
        detail), baseline*.json, profile.json, attached.json (torch_train.py
        results) and trace/ (fvbpf output of the attached run), and copy one
        trace, its summaries and the manifest into OUT.

Only the standard library; Python 3.6+.
"""

import argparse
import collections
import glob
import json
import os
import re
import shutil
import statistics
import sys
import time

TRACE_RE = re.compile(
    r"^trace_(rank\d+|pid\d+)_segment(\d{4})_([A-Za-z0-9._-]+)\.json$")
# Runtime and driver kernel launches, with _ptsz/_ptds and _vN suffixes.
LAUNCH_RE = re.compile(
    r"^(cuda|cu)Launch(Cooperative)?Kernel(Ex|ExC)?(_v\d+)?(_pt(sz|ds))?$")
OK_RETURNS = ("cudaSuccess", "CUDA_SUCCESS", "ncclSuccess", 0, "0", None)
MAX_LIST = 20  # longest list of examples put into a detail

# Step time attached / not attached above this fails the overhead check.
DEFAULT_MAX_OVERHEAD = 1.15


def _key(v):
    """Correlation ids and flow ids as comparable keys (int or string)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return str(int(v))
    if isinstance(v, str):
        s = v.strip()
        try:
            return str(int(s, 0))
        except ValueError:
            return s or None
    return None


def _load(path):
    with open(path) as f:
        return json.load(f)


def _check(checks, name, ok, detail):
    checks[name] = {"pass": bool(ok), "detail": detail}


def analyse_segment(trace):
    """Numbers of one trace (the parsed JSON object)."""
    meta = trace.get("otherData") or {}
    events = [e for e in trace.get("traceEvents") or [] if isinstance(e, dict)]
    kernels = [e for e in events
               if e.get("ph") == "X" and str(e.get("cat", "")).lower() == "kernel"]
    calls = [e for e in events
             if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")]
    launches = [e for e in calls if LAUNCH_RE.match(str(e.get("name", "")))]
    kernel_corr = collections.Counter()
    for k in kernels:
        c = _key((k.get("args") or {}).get("correlation"))
        if c is not None:
            kernel_corr[c] += 1
    flow_s = {_key(e.get("id")) for e in events
              if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    flow_f = {_key(e.get("id")) for e in events
              if e.get("ph") == "f" and e.get("cat") == "ac2g"}

    bad_kernels = []
    for k in kernels:
        name = k.get("name")
        dur = k.get("dur")
        if not isinstance(name, str) or not name.strip() or \
                not isinstance(dur, (int, float)) or dur <= 0:
            bad_kernels.append({"name": name, "dur": dur,
                                "correlation": (k.get("args") or {}).get("correlation")})

    unjoined, failed, nested, no_flow = [], 0, 0, []
    joined = 0
    for e in launches:
        args = e.get("args") or {}
        if args.get("nested_in_call"):
            nested += 1
            continue
        if args.get("return", None) not in OK_RETURNS:
            failed += 1
            continue
        c = _key(args.get("correlation"))
        if c is None or c not in kernel_corr:
            unjoined.append({"name": e.get("name"), "kernel": args.get("kernel"),
                             "correlation": args.get("correlation"),
                             "ts": e.get("ts")})
            continue
        joined += 1
        if c not in flow_s or c not in flow_f:
            no_flow.append(c)
    launch_corr = {_key((e.get("args") or {}).get("correlation")) for e in launches}
    kernels_without_launch = sum(n for c, n in kernel_corr.items() if c not in launch_corr)
    kernels_without_corr = len(kernels) - sum(kernel_corr.values())
    return {
        "segment": meta.get("segment"),
        "incomplete": bool(meta.get("incomplete")),
        "started_before_attach": bool(meta.get("started_before_attach")),
        "duration_us": meta.get("duration_us"),
        "gpu_activity": meta.get("gpu_activity"),
        "gpu_clock": meta.get("gpu_clock"),
        "gpu_records_missing": meta.get("gpu_records_missing"),
        "cupti_dropped": meta.get("cupti_dropped"),
        "ringbuf_drops": meta.get("ringbuf_drops"),
        "kernels": len(kernels),
        "kernel_names": collections.Counter(k.get("name") for k in kernels),
        "kernel_device_us": sum(float(k.get("dur") or 0) for k in kernels),
        "bad_kernels": bad_kernels,
        "launches": len(launches),
        "launches_joined": joined,
        "launches_unjoined": unjoined,
        "launches_failed": failed,
        "launches_nested": nested,
        "launches_without_flow": no_flow,
        "kernels_without_launch": kernels_without_launch,
        "kernels_without_correlation": kernels_without_corr,
        "memcpy": sum(1 for e in events if e.get("cat") == "gpu_memcpy"),
        "memset": sum(1 for e in events if e.get("cat") == "gpu_memset"),
    }


def analyse_summary(summary):
    rows = [r for r in summary.get("rows") or [] if r.get("kind") == "kernel"]
    bad = [{"name": r.get("name"), "count": r.get("count"), "device_us": r.get("device_us")}
           for r in rows if not isinstance(r.get("device_us"), (int, float))
           or r.get("device_us") <= 0]
    return {"kernel_rows": len(rows),
            "kernel_row_count_sum": sum(int(r.get("count") or 0) for r in rows),
            "kernel_rows_without_device_time": bad}


def name_diff(fv_names, torch_names):
    """Kernel names whose counts differ (fvbpf minus torch), largest first."""
    diff = collections.Counter(fv_names)
    diff.subtract(collections.Counter(torch_names))
    items = [(n, d) for n, d in diff.items() if d]
    items.sort(key=lambda x: (-abs(x[1]), str(x[0])))
    return [{"name": n, "fvbpf_minus_torch": d} for n, d in items[:MAX_LIST]]


def analyse_traces(tdir, torch_result=None, want_segments=None):
    """Checks and numbers of fvbpf's output directory @tdir."""
    checks = collections.OrderedDict()
    fields = collections.OrderedDict()
    traces = sorted(p for p in glob.glob(os.path.join(tdir, "trace_*.json"))
                    if TRACE_RE.match(os.path.basename(p)))
    segs, errors = [], []
    for path in traces:
        base = os.path.basename(path)
        try:
            seg = analyse_segment(_load(path))
        except (OSError, ValueError) as exc:
            errors.append("%s: %s" % (base, exc))
            continue
        seg["file"] = base
        spath = os.path.join(tdir, "summary_" + base[len("trace_"):])
        try:
            seg["summary"] = analyse_summary(_load(spath))
        except (OSError, ValueError) as exc:
            seg["summary"] = None
            errors.append("%s: %s" % (os.path.basename(spath), exc))
        segs.append(seg)
    complete = [s for s in segs if not s["incomplete"] and not s["started_before_attach"]]
    fields["segments"] = len(complete)
    fields["segments_written"] = len(segs)
    fields["fvbpf_kernels_per_step"] = [s["kernels"] for s in complete]
    fields["fvbpf_launches_per_step"] = [s["launches"] for s in complete]
    fields["segment_duration_us"] = [s["duration_us"] for s in complete]
    fields["gpu_activity"] = sorted({str(s["gpu_activity"]) for s in segs})
    fields["gpu_clock"] = sorted({str(s["gpu_clock"]) for s in segs})
    if errors:
        fields["parse_errors"] = errors[:MAX_LIST]

    detail = "%d complete segments (%d written)" % (len(complete), len(segs))
    ok = bool(complete) and not errors
    if want_segments is not None:
        ok = ok and len(complete) == want_segments
        detail += ", %d wanted" % want_segments
    if errors:
        detail += "; unreadable: %s" % "; ".join(errors[:3])
    _check(checks, "segments_complete", ok, detail)
    if not complete:
        return checks, fields, segs

    acts = [s["gpu_activity"] for s in complete]
    _check(checks, "gpu_activity_cupti", all(a == "cupti" for a in acts),
           "otherData.gpu_activity: %s" % ", ".join(sorted({str(a) for a in acts})))

    bad = [dict(b, segment=s["segment"]) for s in complete for b in s["bad_kernels"]]
    empty = [s["segment"] for s in complete if s["kernels"] == 0]
    nk = sum(s["kernels"] for s in complete)
    _check(checks, "kernels_named_with_duration", nk > 0 and not bad and not empty,
           {"kernels": nk, "segments_without_kernels": empty[:MAX_LIST],
            "kernels_without_name_or_duration": len(bad), "examples": bad[:5]})

    no_launch = [s["segment"] for s in complete if s["launches"] == 0]
    _check(checks, "launches_traced", not no_launch,
           {"launches": sum(s["launches"] for s in complete),
            "segments_without_launches": no_launch[:MAX_LIST]})

    unj = [dict(u, segment=s["segment"]) for s in complete for u in s["launches_unjoined"]]
    joined = sum(s["launches_joined"] for s in complete)
    _check(checks, "launches_joined", joined > 0 and not unj,
           {"joined": joined, "unjoined": len(unj), "examples": unj[:5],
            "failed_launches_skipped": sum(s["launches_failed"] for s in complete),
            "nested_launches_skipped": sum(s["launches_nested"] for s in complete),
            "kernels_without_launch": sum(s["kernels_without_launch"] for s in complete),
            "kernels_without_correlation":
                sum(s["kernels_without_correlation"] for s in complete)})

    nf = sum(len(s["launches_without_flow"]) for s in complete)
    _check(checks, "launch_kernel_flows", joined > 0 and nf == 0,
           {"joined_launches": joined, "without_ac2g_flow_pair": nf})

    missing = [s["gpu_records_missing"] for s in complete]
    _check(checks, "gpu_records_missing_zero",
           all(isinstance(m, int) and m == 0 for m in missing),
           {"per_segment": missing if any(missing) or None in missing
            else "all 0"})
    dropped = [s["cupti_dropped"] for s in complete]
    _check(checks, "cupti_dropped_zero",
           all(isinstance(d, int) and d == 0 for d in dropped),
           {"per_segment": dropped if any(dropped) or None in dropped
            else "all 0"})

    sums = [s["summary"] for s in complete]
    nosum = [s["segment"] for s in complete if s["summary"] is None]
    badrows = [dict(r, segment=s["segment"]) for s in complete if s["summary"]
               for r in s["summary"]["kernel_rows_without_device_time"]]
    rows = sum(x["kernel_rows"] for x in sums if x)
    mism = [{"segment": s["segment"], "trace_kernels": s["kernels"],
             "summary_kernel_count": s["summary"]["kernel_row_count_sum"]}
            for s in complete if s["summary"]
            and s["summary"]["kernel_row_count_sum"] != s["kernels"]]
    _check(checks, "summary_kernel_device_time",
           rows > 0 and not badrows and not nosum,
           {"kernel_rows": rows, "rows_without_device_time": len(badrows),
            "examples": badrows[:5], "segments_without_summary": nosum,
            # Information: summary counts launches by name, the trace kernels.
            "count_differs_from_trace": mism[:5]})

    tk = (torch_result or {}).get("torch_kernels_per_step")
    fv = fields["fvbpf_kernels_per_step"]
    fields["torch_kernels_per_step"] = tk
    if isinstance(tk, int) and tk > 0:
        diffs = sorted({n - tk for n in fv})
        det = {"torch_kernels_per_step": tk, "fvbpf_kernels_per_step": fv,
               "differences": diffs,
               "torch_per_profiled_step": torch_result.get("torch_kernels_per_step_list")}
        tn = torch_result.get("torch_kernel_names")
        if tn:
            # The last complete segment against the last profiled step.
            det["name_diff_last_segment"] = name_diff(complete[-1]["kernel_names"], tn)
        _check(checks, "kernel_count_matches_torch", all(n == tk for n in fv), det)
    else:
        _check(checks, "kernel_count_matches_torch", False,
               "no torch.profiler kernel count (profile run failed or counted 0)")
    return checks, fields, segs


# --------------------------------------------------------------------------
# finalize

def _read_kv(work):
    kv = collections.OrderedDict()
    for path in sorted(glob.glob(os.path.join(work, "kv", "*"))):
        name = os.path.basename(path)
        try:
            with open(path, errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        if name.endswith(".json"):
            try:
                kv[name[:-5]] = json.loads(text)
            except ValueError:
                kv[name[:-5]] = text.strip()
        else:
            kv[name] = text.strip()
    return kv


def _read_checks(work):
    checks = collections.OrderedDict()
    try:
        with open(os.path.join(work, "checks.tsv"), errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t", 2)
                if len(parts) == 3 and parts[0]:
                    _check(checks, parts[0], parts[1] == "1", parts[2])
    except OSError:
        pass
    return checks


def _result(work, name):
    try:
        return _load(os.path.join(work, name + ".json"))
    except (OSError, ValueError):
        return None


def _copy_samples(tdir, out, segs):
    """One trace (the second complete segment, else the first), its
    summaries and the manifest; returns the names copied."""
    complete = [s for s in segs if not s["incomplete"] and not s["started_before_attach"]]
    pick = (complete[1:2] or complete[:1] or segs[:1])
    names = []
    if pick:
        base = pick[0]["file"]
        stem = base[len("trace_"):-len(".json")]
        names += [base, "summary_%s.json" % stem, "summary_%s.txt" % stem]
    names.append("manifest.json")
    copied = []
    for n in names:
        src = os.path.join(tdir, n)
        if os.path.isfile(src):
            try:
                shutil.copyfile(src, os.path.join(out, n))
                copied.append(n)
            except OSError:
                pass
    return copied


def finalize(work, out):
    kv = _read_kv(work)
    checks = _read_checks(work)
    rep = collections.OrderedDict()
    rep["status"] = None
    rep["reason"] = kv.pop("reason", None)
    rep["checks"] = checks

    base = [r for r in (_result(work, "baseline1"), _result(work, "baseline2")) if r]
    prof = _result(work, "profile")
    att = _result(work, "attached")

    walls = [t for r in base for t in r.get("step_ms_list") or []]
    cpus = [t for r in base for t in r.get("cpu_ms_list") or []]
    rep["step_ms_detached"] = statistics.median(walls) if walls else None
    rep["step_ms_detached_runs"] = [r.get("step_ms") for r in base]
    rep["step_ms_attached"] = (att or {}).get("step_ms")
    rep["cpu_ms_detached"] = statistics.median(cpus) if cpus else None
    rep["cpu_ms_attached"] = (att or {}).get("cpu_ms")
    rep["overhead_ratio"] = None
    if rep["step_ms_detached"] and rep["step_ms_attached"]:
        rep["overhead_ratio"] = round(rep["step_ms_attached"] / rep["step_ms_detached"], 4)
    rep["cpu_overhead_ratio"] = None
    if rep["cpu_ms_detached"] and rep["cpu_ms_attached"]:
        rep["cpu_overhead_ratio"] = round(rep["cpu_ms_attached"] / rep["cpu_ms_detached"], 4)
    rep["torch_kernels_per_step"] = (prof or {}).get("torch_kernels_per_step")
    rep["torch_kernels_per_profiled_step"] = (prof or {}).get("torch_kernels_per_step_list")

    tdir = os.path.join(work, "trace")
    segs = []
    if os.path.isdir(tdir) and glob.glob(os.path.join(tdir, "trace_*.json")):
        want = kv.get("segments_wanted")
        try:
            want = int(want) if want is not None else None
        except (TypeError, ValueError):
            want = None
        try:
            tchecks, tfields, segs = analyse_traces(tdir, prof, want)
            checks.update(tchecks)
            rep.update(tfields)
        except Exception as exc:  # never lose the report to a parser bug
            _check(checks, "trace_analysis", False, "analysis crashed: %r" % exc)
    elif kv.get("stage") == "done" and not kv.get("status"):
        _check(checks, "segments_complete", False,
               "fvbpf wrote no trace in the attached run")

    if rep["overhead_ratio"] is not None:
        try:
            limit = float(kv.get("max_overhead") or DEFAULT_MAX_OVERHEAD)
        except ValueError:
            limit = DEFAULT_MAX_OVERHEAD
        _check(checks, "step_time_overhead", rep["overhead_ratio"] <= limit,
               {"step_ms_attached": rep["step_ms_attached"],
                "step_ms_detached": rep["step_ms_detached"],
                "ratio": rep["overhead_ratio"], "limit": limit,
                "cpu_enqueue_ratio": rep["cpu_overhead_ratio"]})

    # What fvbpf itself says about its CUDA probes (e.g. an older kernel
    # without session uprobes traces regions only).
    try:
        man = _load(os.path.join(tdir, "manifest.json"))
        rep["manifest"] = {
            "loss": man.get("loss"),
            "warnings": (man.get("warnings") or [])[:MAX_LIST],
            "cuda": [p.get("cuda") for p in man.get("processes") or []],
            "gpu": [p.get("gpu") for p in man.get("processes") or []]}
    except (OSError, ValueError):
        pass
    m = re.match(r"(\d+)\.(\d+)", str(kv.get("kernel", "")))
    if m:
        kv["session_uprobes_expected"] = (int(m.group(1)), int(m.group(2))) >= (6, 13)

    rep["runs"] = {"baseline": base, "profile": prof, "attached": att}
    for r in [prof] if prof else []:
        r.pop("torch_kernel_names", None)  # already in the name diff
    started = kv.pop("started_epoch", None)
    try:
        rep["elapsed_s"] = round(time.time() - float(started), 1)
    except (TypeError, ValueError):
        rep["elapsed_s"] = None
    stage = kv.pop("stage", None)
    forced = kv.pop("status", None)
    if forced:
        rep["status"] = forced
    elif stage != "done":
        rep["status"] = "incomplete"
        rep["reason"] = rep["reason"] or "the script stopped during stage %s" % stage
    elif checks and all(c["pass"] for c in checks.values()):
        rep["status"] = "ok"
    else:
        rep["status"] = "fail"
    if rep["status"] == "fail" and not rep["reason"]:
        rep["reason"] = "failed checks: " + ", ".join(
            n for n, c in checks.items() if not c["pass"])
    rep["stage"] = stage
    rep["env"] = kv
    rep["files"] = ["gpu_check.json", "check.log"] + (
        _copy_samples(tdir, out, segs) if os.path.isdir(tdir) else [])

    path = os.path.join(out, "gpu_check.json")
    with open(path + ".tmp", "w") as f:
        json.dump(rep, f, indent=1, default=str)
        f.write("\n")
    os.replace(path + ".tmp", path)
    return rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd")
    t = sub.add_parser("traces")
    t.add_argument("dir")
    t.add_argument("--torch")
    t.add_argument("--segments", type=int)
    f = sub.add_parser("finalize")
    f.add_argument("work")
    f.add_argument("out")
    args = ap.parse_args()
    if args.cmd == "traces":
        torch_result = None
        if args.torch and os.path.exists(args.torch):
            torch_result = _load(args.torch)
        checks, fields, _ = analyse_traces(args.dir, torch_result, args.segments)
        json.dump({"checks": checks, **fields}, sys.stdout, indent=1, default=str)
        print()
        return 0 if all(c["pass"] for c in checks.values()) else 1
    if args.cmd == "finalize":
        rep = finalize(args.work, args.out)
        print("status=%s" % rep["status"])
        for name, c in rep["checks"].items():
            d = c["detail"]
            if not isinstance(d, str):
                d = json.dumps(d, default=str)
            print("%s %s: %s" % ("PASS" if c["pass"] else "FAIL", name,
                                 d if len(d) < 300 else d[:297] + "..."))
        return 0
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
