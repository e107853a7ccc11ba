#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Synthetic fvbpf output directories, one per node, in fvbpf's own format.

    gen_rank_dirs.py OUTDIR --nodes K --ranks R --segments S [--offset-skew-ns X]

writes OUTDIR/node0 .. OUTDIR/node{K-1}, each with manifest.json and, per
rank and segment, trace_rank{N}_segment{NNNN}_{region}.json and
summary_rank{N}_segment{NNNN}_{region}.{txt,json}.  Ranks are global
(node k holds ranks k*R .. k*R+R-1).  OUTDIR/truth.json holds what a
reader should find: per rank the segment durations, which are incomplete,
mean/min/max of the complete ones, the slowest rank, per node the clock
offset (CLOCK_REALTIME - CLOCK_MONOTONIC, mean of start and end) and its
uncertainty, and the operator/kernel totals summed over complete segments.

Clocks: node k's CLOCK_MONOTONIC starts at its own base, and its recorded
offset is chosen so that the ranks step in lockstep in true wall time, plus
k * X (the skew: what the nodes' realtime clocks disagree by).  Every
segment is a step; one rank is slower than the rest (--slow-rank, +5 ms, or
--slow-ms); rank 1's last segment is incomplete (when S > 1).

Steps (issue 35): --late R:K makes rank R start K steps after the others
(its segment 0 is their segment K), --skip R:S leaves rank R without a
segment at step S (its later segments numbered on, as fvbpf numbers the
segments it writes), --uncounted R:S marks rank R's segment at step S
counted false ("fragment"; with --old-keys started_before_attach instead),
--step-keys gives every segment the step_key "pg0:<step>".  Segments carry
start_unix_us/end_unix_us, step_key, counted and not_counted_why, region
rows a "parent", unless --old-keys (directories written before them).
--sub-regions adds the FastVideo split of each step (dataloader 10 %,
forward 40 %, backward 35 %, optimizer 10 % of its time, forward holding a
nested region of 5 %).  truth.json then also holds, per step number as
fvbpf numbers them (counted segments only, and with --include-uncounted:
steps_all), each rank's segment, and per rank its sub-region means.
"""
import argparse
import json
import os
import sys

REGION = "training_train_one_step"
MONO0 = 1_000_000_000_000       # node 0's CLOCK_MONOTONIC at its first step (ns)
REAL0 = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
PERIOD = 50_000_000             # ns between steps
DRIFT = 2_000                   # offset_end - offset_start (ns)
SPAN_START, SPAN_END = 120, 180  # read spans (ns)


def us(ns):
    """ns as fvbpf writes µs: three decimals, exact."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return "%s%d.%03d" % (sign, ns // 1000, ns % 1000)


class Raw(float):
    """A float that json.dumps writes as the given text."""
    def __new__(cls, text):
        o = float.__new__(cls, float(text))
        o.text = text
        return o

    def __repr__(self):
        return self.text


def dumps(o):
    return _encode(o, "")


def _encode(o, ind):
    if isinstance(o, Raw):
        return o.text
    if isinstance(o, dict):
        if not o:
            return "{}"
        inner = ind + "  "
        return "{\n" + ",\n".join(inner + json.dumps(k, ensure_ascii=False) + ": " + _encode(v, inner)
                                  for k, v in o.items()) + "\n" + ind + "}"
    if isinstance(o, list):
        if not o:
            return "[]"
        inner = ind + "  "
        return "[\n" + ",\n".join(inner + _encode(v, inner) for v in o) + "\n" + ind + "]"
    return json.dumps(o, ensure_ascii=False)


def wallclock(real_ns):
    import time
    sec, frac = divmod(real_ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + ".%06dZ" % (frac // 1000)


SUBS = [("training_dataloader", REGION, 0.10), ("training_forward", REGION, 0.40),
        ("training_backward", REGION, 0.35), ("training_optimizer", REGION, 0.10),
        ("distillation_loss", "training_forward", 0.05)]


def pairs(arg):
    """["R:S", ...] -> {(R, S)}"""
    out = set()
    for a in arg or []:
        r, x = a.split(":")
        out.add((int(r), int(x)))
    return out


def rows_for(rank, seg, device, hostile):
    """Summary rows of one segment: (name, kind, cpu_ns, self_cpu_ns, dev_ns, count)."""
    d = 1 if device else 0
    rows = [
        ("aten::addmm", "cpu_op", 300_000 + rank * 1_000 + seg, 200_000, d * 900_000, 4),
        ("aten::relu", "cpu_op", 100_000 + rank * 500, 90_000, d * 100_000, 4),
        ("Optimizer.step#AdamW.step", "user_annotation", 400_000 + rank, 100_000, d * 300_000, 1),
        ("cudaLaunchKernel", "cuda_runtime", 50_000 + rank * 10, 50_000, 0, 12),
        ("ampere_sgemm_128x64_nn", "kernel", 60_000, 60_000, d * 800_000 + rank * 1_000, 8),
        ("relu_kernel", "kernel", 20_000, 20_000, d * 100_000, 4),
        ("Memcpy HtoD", "gpu_memcpy", 5_000, 5_000, d * 50_000, 2),
    ]
    if hostile:
        rows.append(("evil\x1b[2J\x1b[31mred\nforged line\x07", "cpu_op", 7_000, 7_000, d * 7_000, 1))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--ranks", type=int, default=4, help="ranks per node")
    ap.add_argument("--segments", type=int, default=3)
    ap.add_argument("--offset-skew-ns", type=int, default=0)
    ap.add_argument("--slow-rank", type=int, default=None, help="default: the last rank but one")
    ap.add_argument("--no-device", action="store_true", help="no device time in any row")
    ap.add_argument("--no-clock", action="store_true", help="old manifests: no \"clock\"")
    ap.add_argument("--restart", action="store_true", help="rank 0 restarted once (restart 1)")
    ap.add_argument("--hostile", action="store_true", help="control characters in names")
    ap.add_argument("--events", type=int, default=2, help="cpu_op+launch+kernel triples per trace")
    ap.add_argument("--repeat", type=int, default=1,
                    help="list each files[] entry this many times (a hostile manifest; truth.json "
                         "still counts each segment once)")
    ap.add_argument("--slow-ms", type=float, default=5.0, help="how much slower the slow rank is")
    ap.add_argument("--late", action="append", help="R:K rank R starts K steps later")
    ap.add_argument("--skip", action="append", help="R:S rank R has no segment at step S")
    ap.add_argument("--uncounted", action="append", help="R:S rank R's segment at step S does not count")
    ap.add_argument("--step-keys", action="store_true", help="step_key pg0:<step> on every segment")
    ap.add_argument("--old-keys", action="store_true", help="no issue-35 keys (older directories)")
    ap.add_argument("--sub-regions", action="store_true", help="FastVideo's sub-region rows")
    a = ap.parse_args()
    late = dict(pairs(a.late))
    skip, uncounted = pairs(a.skip), pairs(a.uncounted)
    members = {}  # (step, counted) -> {rank key: segment}

    nranks = a.nodes * a.ranks
    slow = a.slow_rank if a.slow_rank is not None else max(nranks - 2, 0)
    truth = {"region": REGION, "ranks": {}, "nodes": {}, "ops": {}, "slowest": None,
             "skew_ns": a.offset_skew_ns, "incomplete": 0, "segments": 0}
    for k in range(a.nodes):
        host = "node%d" % k + ("\x1b]0;pwn\x07" if a.hostile and k == 1 else "")
        d = os.path.join(a.outdir, "node%d" % k)
        os.makedirs(d, exist_ok=True)
        mono0 = MONO0 + k * 7_777_777_777
        # wall time of step s: REAL0 + s*PERIOD; recorded offset disagrees by k*X
        off = REAL0 - mono0 + k * a.offset_skew_ns
        off_s, off_e = off - DRIFT // 2, off + DRIFT // 2
        attach_mono = mono0 - 10_000_000
        clock = {"start": {"monotonic_ns": attach_mono, "realtime_ns": attach_mono + off_s,
                           "read_span_ns": SPAN_START},
                 "end": {"monotonic_ns": attach_mono + 10**10, "realtime_ns": attach_mono + 10**10 + off_e,
                         "read_span_ns": SPAN_END}}
        truth["nodes"][host] = {"dir": d, "offset_ns": off, "uncertainty_ns": DRIFT + SPAN_START + SPAN_END,
                                "mono0_ns": mono0}
        procs, files = [], []
        incarnations = [(k * a.ranks + r, 0) for r in range(a.ranks)]
        if a.restart and k == 0:
            incarnations.append((0, 1))
        for (rank, restart) in incarnations:
            pid = 10000 + rank + 500 * restart
            key = "%s/%d/%d" % (host, rank, restart)
            durs, inc = [], []
            procs.append({"pid": pid, "rank": rank, "rank_from_env": True, "files_named_by_pid": False,
                          "restart": restart, "rank_source": "env RANK", "ppid": 1,
                          "comm": "trainer", "command": "python train.py", "segments": a.segments,
                          "incomplete_segments": 0})
            steps = [x + late.get(rank, 0) for x in range(a.segments + sum(1 for (r, _) in skip if r == rank))
                     if (rank, x + late.get(rank, 0)) not in skip][:a.segments]
            subs = {}
            for s, step in enumerate(steps):
                incomplete = rank == 1 and restart == 0 and a.segments > 1 and s == a.segments - 1
                counted = (rank, step) not in uncounted or restart
                dur = 20_000_000 + rank * 100_000 + s * 10_000 + \
                    (int(a.slow_ms * 1_000_000) if rank == slow else 0) + restart * 1_000_000
                start = mono0 + step * PERIOD + rank * 1_000 + restart * 3 * PERIOD
                end = start + dur
                # wall time as the node's recorded clock says (its skew included)
                real_s, real_e = start + off, end + off
                members.setdefault((step + restart * 3, True), {})
                members.setdefault((step + restart * 3, False), {})[key] = s
                if counted:
                    members[(step + restart * 3, True)][key] = s
                tag = "rank%d%s_segment%04d_%s" % (rank, "_restart%d" % restart if restart else "", s, REGION)
                trace, sj, st = "trace_%s.json" % tag, "summary_%s.json" % tag, "summary_%s.txt" % tag
                entry = {"pid": pid, "rank": rank, "restart": restart, "region": REGION, "segment": s,
                         "incomplete": incomplete, "started_before_attach": False,
                         "trace": trace, "summary_txt": st, "summary_json": sj}
                step_keys = {}
                if a.old_keys:
                    entry["started_before_attach"] = not counted
                else:
                    step_keys = {"start_unix_us": Raw(us(real_s)), "end_unix_us": Raw(us(real_e)),
                                 "step_key": "pg0:%d" % (step + restart * 3) if a.step_keys else "",
                                 "counted": bool(counted),
                                 "not_counted_why": "" if counted else "fragment"}
                    entry.update(step_keys)
                files.append(entry)
                durs.append(dur)
                inc.append(incomplete)
                truth["segments"] += 1
                truth["incomplete"] += incomplete
                rows = rows_for(rank, s, not a.no_device, a.hostile)
                if not incomplete and counted:
                    for (name, kind, cpu, self_cpu, dev, cnt) in rows:
                        t = truth["ops"].setdefault(kind + "\x00" + name, {"name": name, "kind": kind,
                                                                            "cpu_ns": 0, "device_ns": 0,
                                                                            "count": 0})
                        t["cpu_ns"] += cpu
                        t["device_ns"] += dev
                        t["count"] += cnt
                meta = {"rank": rank, "pid": pid, "hostname": host, "command": "python train.py",
                        "region": REGION, "segment": s, "restart": restart,
                        "start_us": Raw(us(start)), "end_us": Raw(us(end)), "duration_us": Raw(us(dur)),
                        "start_wallclock": wallclock(start + off_s), "incomplete": incomplete,
                        "started_before_attach": bool(a.old_keys and not counted),
                        "clock": "CLOCK_MONOTONIC",
                        "device_time": "not collected" if a.no_device else "cupti"}
                meta.update(step_keys)
                parent = {} if a.old_keys else {"parent": ""}
                jrows = [dict({"name": REGION, "kind": "region", "shapes": "", "self_cpu_us": Raw(us(dur)),
                               "cpu_us": Raw(us(dur)), "self_device_us": Raw("0.000"),
                               "device_us": Raw("0.000"), "count": 1}, **parent)]
                for (name, par, frac) in (SUBS if a.sub_regions else []):
                    # the slow rank's dataloader takes its extra time
                    extra = int(a.slow_ms * 1_000_000) if rank == slow else 0
                    t = int((dur - extra) * frac) + (extra if name == "training_dataloader" else 0)
                    row = {"name": name, "kind": "region", "shapes": "", "self_cpu_us": Raw(us(t)),
                           "cpu_us": Raw(us(t)), "self_device_us": Raw("0.000"),
                           "device_us": Raw("0.000"), "count": 1}
                    if not a.old_keys:
                        row["parent"] = par
                    jrows.append(row)
                    if not incomplete and counted:
                        subs[name] = subs.get(name, 0) + t
                for (name, kind, cpu, self_cpu, dev, cnt) in rows:
                    jrows.append({"name": name, "kind": kind, "shapes": "", "self_cpu_us": Raw(us(self_cpu)),
                                  "cpu_us": Raw(us(cpu)), "self_device_us": Raw(us(dev)),
                                  "device_us": Raw(us(dev)), "count": cnt})
                with open(os.path.join(d, sj), "w") as f:
                    f.write(dumps({"metadata": meta, "rows": jrows}) + "\n")
                with open(os.path.join(d, st), "w") as f:
                    f.write("fvbpf segment %04d of rank %d (synthetic)\n" % (s, rank))
                write_trace(os.path.join(d, trace), meta, pid, start, end, a.events, host)
            counts = [(rank, st_) not in uncounted or restart for st_ in steps]
            complete = [x for x, i, c in zip(durs, inc, counts) if not i and c]
            truth["ranks"][key] = {"host": host, "rank": rank, "restart": restart, "segments": len(durs),
                                   "incomplete": sum(inc), "durations_ns": durs,
                                   "mean_ms": sum(complete) / len(complete) / 1e6 if complete else None,
                                   "min_ms": min(complete) / 1e6 if complete else None,
                                   "max_ms": max(complete) / 1e6 if complete else None,
                                   "uncounted": sum(1 for c in counts if not c),
                                   "split": {n: v / len(complete) / 1e6 for n, v in subs.items()}
                                   if complete else {}}
        manifest = {"tool": "fvbpf", "hostname": host, "started": wallclock(attach_mono + off_s),
                    "output_dir": d, "regions": [REGION], "regions_never_entered": [],
                    "processes": procs, "files": [f for f in files for _ in range(a.repeat)],
                    "loss": {"ringbuf_drops": 0}, "warnings": [], "warnings_suppressed": 0}
        if not a.no_clock:
            manifest["clock"] = clock
        with open(os.path.join(d, "manifest.json"), "w") as f:
            # a long hostile list: the stdlib's C encoder, in one line
            f.write((dumps(manifest) if a.repeat == 1 else json.dumps(manifest, ensure_ascii=False)) + "\n")
    means = {k: v["mean_ms"] for k, v in truth["ranks"].items() if v["mean_ms"] is not None}
    if means:
        sk = max(means, key=lambda k: means[k])
        vals = sorted(means.values())
        n = len(vals)
        med = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
        truth["slowest"] = {"key": sk, "mean_ms": means[sk], "median_ms": med, "over_ms": means[sk] - med}
    # steps as fvbpf numbers them: those with a segment, in time order
    for counted, name in ((True, "steps"), (False, "steps_all")):
        have = sorted(st_ for (st_, c) in members if c == counted and members[(st_, c)])
        truth[name] = [members[(st_, counted)] for st_ in have]
    truth["uncounted"] = sum(v["uncounted"] for v in truth["ranks"].values())
    with open(os.path.join(a.outdir, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    return 0


def write_trace(path, meta, pid, start, end, nevents, host):
    ev = []
    ev.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_name",
               "args": {"name": "rank %d: trainer (pid %d)" % (meta["rank"], pid)}})
    ev.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_labels",
               "args": {"labels": "segment %04d: %s" % (meta["segment"], REGION)}})
    ev.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_sort_index", "args": {"sort_index": meta["rank"]}})
    ev.append({"ph": "M", "pid": pid, "tid": pid, "name": "thread_name", "args": {"name": "trainer"}})
    ev.append({"ph": "X", "cat": "user_annotation", "name": "fvbpf.region::" + REGION, "pid": pid, "tid": pid,
               "ts": Raw(us(start)), "dur": Raw(us(end - start)), "args": {"region": REGION, "depth": 0}})
    step = (end - start) // (nevents + 1)
    for i in range(nevents):
        t = start + (i + 1) * step // 2 + i * step // 2
        corr = i + 1
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": pid, "tid": pid,
                   "ts": Raw(us(t)), "dur": Raw(us(step // 2)), "args": {"torch_depth": 0}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": pid,
                   "ts": Raw(us(t + 1000)), "dur": Raw(us(5000)), "args": {"correlation": corr}})
        ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": pid, "tid": pid,
                   "ts": Raw(us(t + 1000))})
        ev.append({"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7,
                   "ts": Raw(us(t + 9000)), "dur": Raw(us(30000)),
                   "args": {"correlation": corr, "device": 0, "stream": 7}})
        ev.append({"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": 7,
                   "ts": Raw(us(t + 9000))})
    ev.append({"ph": "M", "pid": 0, "tid": 0, "name": "process_name", "args": {"name": "GPU 0"}})
    ev.append({"ph": "M", "pid": 0, "tid": 0, "name": "process_sort_index", "args": {"sort_index": 1000000}})
    ev.append({"ph": "M", "pid": 0, "tid": 7, "name": "thread_name", "args": {"name": "stream 7"}})
    other = {"tool": "fvbpf", "version": "0.1.0", "rank": meta["rank"], "pid": pid, "hostname": host,
             "region": REGION, "segment": meta["segment"], "start_us": meta["start_us"],
             "end_us": meta["end_us"], "incomplete": meta["incomplete"], "clock": "CLOCK_MONOTONIC"}
    with open(path, "w") as f:
        f.write("{\n\"schemaVersion\":1,\n\"displayTimeUnit\":\"ns\",\n\"otherData\":" +
                _encode(other, "").replace("\n", "") + ",\n\"traceEvents\":[\n" +
                ",\n".join(_encode(e, "").replace("\n", "") for e in ev) + "\n]\n}\n")


if __name__ == "__main__":
    sys.exit(main())
