#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Check a segment of tests/workloads/torch_side_thread.py traced with
--profile-memory --with-stack: operators of a thread whose scope began
before the segment are roots, charged to no call of another thread.

  side_thread_check.py SUMMARY.json TRACE.json STACKS.folded

The oracle is the segment's own trace: its torch calls' slices, nested per thread by time, and its [memory] events.
  - the scenario happened: operators on a thread other than the one of the
    segment's scope, outside every slice of their thread in the segment;
  - every row's cpu_memory_usage (cpu_op, user_annotation) equals the sum
    of the [memory] bytes inside its slices on their threads;
  - mem_step's self CPU (summary) equals its duration less its direct
    children on its own thread, and the folded stacks give the scope that
    same self time (in ns).
Prints what it compared; exits 1 on a mismatch.
"""
import collections
import json
import sys

KINDS = ("cpu_op", "user_annotation")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    summary, trace, folded = sys.argv[1:4]
    rows = json.load(open(summary))["rows"]
    ev = json.load(open(trace))["traceEvents"]
    # torch's calls (not the region's slice nor ProfilerStep#N over the same span)
    slices = [e for e in ev if e.get("ph") == "X" and e.get("cat") in KINDS and
              "torch_depth" in e.get("args", {})]
    mem = [e for e in ev if e.get("name") == "[memory]"]
    by_tid = collections.defaultdict(list)
    for s in slices:
        by_tid[s["tid"]].append(s)
    scope = [s for s in slices if s["name"] == "mem_step" and s["cat"] == "user_annotation"]
    if len(scope) != 1:
        fail("%d mem_step scopes in the segment" % len(scope))
    scope = scope[0]

    def inside(e, s):
        return s["ts"] - 0.0005 <= e["ts"] <= s["ts"] + s["dur"] + 0.0005

    def roots(tid):
        """Slices of @tid enclosed by no other slice of @tid."""
        lst = by_tid[tid]
        return [s for s in lst if not any(o is not s and inside(s, o) and
                                          (o["ts"], -o["dur"]) < (s["ts"], -s["dur"])
                                          for o in lst)]

    side = [s for tid, lst in by_tid.items() if tid != scope["tid"] for s in roots(tid)]
    if not side:
        fail("no operator of another thread in the segment: the scenario did not happen")
    print("side-thread root slices: %d (%s)" %
          (len(side), ", ".join(sorted(set(s["name"] for s in side)))))

    # cpu_memory_usage per name: the bytes of [memory] events inside its slices
    want = collections.Counter()
    for s in slices:
        want[s["name"]] += sum(m["args"]["Bytes"] for m in mem
                               if m["tid"] == s["tid"] and inside(m, s))
    checked = 0
    for r in rows:
        if r["kind"] not in KINDS:
            continue
        if r["cpu_memory_usage"] != want[r["name"]]:
            fail("%s: cpu_memory_usage %d, the trace's events inside its slices sum to %d" %
                 (r["name"], r["cpu_memory_usage"], want[r["name"]]))
        checked += 1
    print("cpu_memory_usage of %d rows equal to the trace's events" % checked)

    # mem_step's self time: its duration less its direct children on its thread
    kids = [s for s in by_tid[scope["tid"]] if s is not scope and inside(s, scope)]
    direct = [s for s in kids if not any(o is not s and inside(s, o) and
                                         (o["ts"], -o["dur"]) < (s["ts"], -s["dur"])
                                         for o in kids)]
    self_us = scope["dur"] - sum(s["dur"] for s in direct)
    row = [r for r in rows if r["name"] == "mem_step" and r["kind"] == "user_annotation"][0]
    if abs(row["self_cpu_us"] - self_us) > 0.002 * (len(direct) + 1):
        fail("mem_step self CPU %.3f us in the summary, %.3f us by its trace" %
             (row["self_cpu_us"], self_us))
    fold = [int(line.rsplit(" ", 1)[1]) for line in open(folded)
            if line.rsplit(" ", 1)[0].split(";")[-1] == "mem_step"]
    if len(fold) != 1 or abs(fold[0] - self_us * 1000) > 2 * (len(direct) + 1):
        fail("mem_step in the folded stacks: %s ns, %.0f ns by its trace" % (fold, self_us * 1000))
    print("mem_step self CPU %.3f us (%d direct children): summary and folded stacks agree" %
          (self_us, len(direct)))


if __name__ == "__main__":
    main()
