#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Independent checker of a --children/--match output directory.

  job_check.py OUTDIR WHO=N [WHO=REGION:STEPS ...]

WHO is a file-name prefix ("rank0", "rank1_restart1").  WHO=N: exactly N
complete segments and no incomplete one.  WHO=step:STEPS: a --step-by
worker (torch_train.py) that ran STEPS steps after two warm-up steps:
each complete segment holds exactly one optimizer step scope, there are
STEPS-2 to STEPS+1 of them (the first step fvbpf sees teaches it the
pattern, its end opens a segment if the gate is in place by then, and the
warm-ups may come before or after the attach), and the one open at its
exit is incomplete.
Also checks the manifest: every file listed exists, files of a rank and
restart belong to one process.  Prints lines the test asserts:
    ranks 0,1,1,2,3 restarts 0,0,1,0,0
    launcher listed: True
    forked copies of rank 2: 4
    rank sources: RANK
Exit 1 with "error: ..." lines on a mismatch.
"""
import collections
import json
import os
import re
import sys

NAME = re.compile(r"^trace_(rank\d+(?:_restart\d+)?|pid\d+)_segment(\d{4,})_(.+)\.json$")


def main():
    out = sys.argv[1]
    want = dict(a.split("=", 1) for a in sys.argv[2:])
    errors = []
    m = json.load(open(os.path.join(out, "manifest.json")))
    per = collections.defaultdict(lambda: [0, 0])
    traces = [f for f in os.listdir(out) if f.startswith("trace_")]
    listed = {os.path.basename(f["trace"]) for f in m["files"]}
    if set(traces) != listed:
        errors.append("trace files %s, manifest lists %s" % (sorted(traces), sorted(listed)))
    for fname in traces:
        g = NAME.match(fname)
        if not g:
            errors.append("bad name " + fname)
            continue
        trace = json.load(open(os.path.join(out, fname)))
        meta = trace["otherData"]
        per[g.group(1)][1 if meta["incomplete"] else 0] += 1
        if g.group(3) == "step" and not meta["incomplete"]:
            opt = [e for e in trace["traceEvents"] if e.get("ph") == "X"
                   and e["name"].startswith("Optimizer.step#")]
            if len(opt) != 1:
                errors.append("%s: %d optimizer steps" % (fname, len(opt)))
    for who, n in want.items():
        complete, incomplete = per.get(who, [0, 0])
        if n.startswith("step:"):
            steps = int(n[5:])
            exp = (complete if steps - 2 <= complete <= steps + 1 else steps - 2, 1)
        else:
            exp = (int(n), 0)
        if (complete, incomplete) != exp:
            errors.append("%s: %d complete, %d incomplete segments; expected %d, %d"
                          % (who, complete, incomplete, exp[0], exp[1]))
    extra = set(per) - set(want)
    if extra:
        errors.append("segments of unexpected processes: %s" % sorted(extra))
    # one process per rank and restart, files and processes agreeing
    procs = sorted(m["processes"], key=lambda p: (p["rank"], p["restart"]))
    pid_of = {(p["rank"], p["restart"]): p["pid"] for p in procs if p["rank_from_env"]}
    for f in m["files"]:
        if pid_of.get((f["rank"], f["restart"]), f["pid"]) != f["pid"]:
            errors.append("%s: pid %d, the manifest's rank %d restart %d is pid %d"
                          % (f["trace"], f["pid"], f["rank"], f["restart"],
                             pid_of[(f["rank"], f["restart"])]))
    envp = [p for p in procs if p["rank_from_env"]]
    print("ranks %s restarts %s" % (",".join(str(p["rank"]) for p in envp),
                                     ",".join(str(p["restart"]) for p in envp)))
    print("rank sources: %s" % ",".join(sorted({p["rank_source"] for p in envp})))
    fol = m.get("followed", {}).get("processes", [])
    given = [p for p in fol if p["origin"] == "given"]
    print("launcher listed: %s" % bool(given and not given[0]["traced"]))
    for p in envp:
        copies = [q for q in fol if q["ppid"] == p["pid"] and "forked from a traced" in q["status"]]
        if copies:
            print("forked copies of rank %d: %d" % (p["rank"], len(copies)))
    for e in errors:
        print("error: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
