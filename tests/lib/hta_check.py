#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Run HolisticTraceAnalysis on fvbpf traces, as a user would on Kineto's.

    hta_check.py DIR [DIR2]

DIR holds one trace per rank (fvbpf's --layout hta writes such folders).
Prints one line per analysis, "NAME ok <size>" or "NAME FAIL <why>", and
"ranks=..." and "steps=..." first; DIR2 (another step) is compared with
TraceDiff.  Exit status 0 even when analyses fail: the test reads lines.
"""
import logging
import sys
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)


def size(r):
    if r is None:
        return "None"
    if hasattr(r, "shape"):
        return "x".join(str(x) for x in r.shape)
    if isinstance(r, (tuple, list)):
        return "(" + ",".join(size(x) for x in r) + ")"
    if isinstance(r, dict):
        return "{%d}" % len(r)
    return type(r).__name__


def nonempty(r):
    if r is None:
        return False
    if hasattr(r, "shape"):
        return r.shape[0] > 0
    if isinstance(r, (tuple, list)):
        return len(r) > 0 and all(nonempty(x) for x in r if x is not None)
    if isinstance(r, dict):
        return len(r) > 0 and any(nonempty(v) for v in r.values())
    return True


def main():
    from hta.trace_analysis import TraceAnalysis

    a = TraceAnalysis(trace_dir=sys.argv[1])
    ranks = sorted(a.t.traces.keys())
    print("ranks=%s" % ",".join(str(r) for r in ranks))
    steps = a.t.get_iterations() if hasattr(a.t, "get_iterations") else []
    print("steps=%s" % ",".join(str(s) for s in steps))
    checks = [
        ("temporal_breakdown", lambda: a.get_temporal_breakdown(visualize=False)),
        ("kernel_breakdown", lambda: a.get_gpu_kernel_breakdown(visualize=False)),
        ("idle_time", lambda: a.get_idle_time_breakdown(visualize=False)),
        ("launch_stats", lambda: a.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)),
        ("queue_length", lambda: a.get_queue_length_summary(ranks=ranks)),
        ("memory_bw", lambda: a.get_memory_bw_summary(ranks=ranks)),
        ("critical_path", lambda: a.critical_path_analysis(
            rank=ranks[0], annotation="ProfilerStep", instance_id=0)),
    ]
    for name, fn in checks:
        try:
            r = fn()
            print("%s %s %s" % (name, "ok" if nonempty(r) else "EMPTY", size(r)))
        except Exception as e:  # noqa: BLE001 -- reported, not raised
            print("%s FAIL %s: %s" % (name, type(e).__name__, str(e).splitlines()[0][:200]
                                      if str(e) else ""))
    if len(sys.argv) > 2:
        try:
            from hta.trace_diff import TraceDiff
            b = TraceAnalysis(trace_dir=sys.argv[2])
            r = TraceDiff.compare_traces(a.t, b.t)
            print("trace_diff %s %s" % ("ok" if nonempty(r) else "EMPTY", size(r)))
        except Exception as e:  # noqa: BLE001
            print("trace_diff FAIL %s: %s" % (type(e).__name__, str(e).splitlines()[0][:200]))


if __name__ == "__main__":
    main()
