# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Check fvbpf's summary rows under --with-stack --group-by-stack N against
torch.profiler's key_averages(group_by_stack_n=N + 1) of the same step
(tests/workloads/torch_stack.py oracle_groups N+1 prints it).

  pystack_groups_check.py ORACLE.json N OUTDIR

torch counts the C function it was called through ("<built-in method add
of type object at 0x...>") as a stack entry of its own; fvbpf reads
Python frames only.  So the oracle groups by N + 1 entries, and its
"<...>" entries are dropped, leaving N Python frames.  Frames compare as
(file's base name, first line, function's last name): torch names a
function by co_name, fvbpf by co_qualname; a resumed generator torch
names by the line it resumed at, so for gen() the line is left out.
For each (aten op, N frames) group, fvbpf's count in every
summary_*.json of OUTDIR (one step each) must be torch's.  fvbpf's rows
torch has no group for must be the worker threads' (torch.profiler does
not see threads started before it).  user_annotation rows are left out:
fvbpf gives a record_function scope no stack of its own.
"""
import collections
import glob
import json
import os
import re
import sys


def norm(frame):
    m = re.match(r"^(.*)\((\d+)\): (.*)$", frame)
    assert m, "not file(line): function: %r" % frame
    fn = m.group(3).split(".")[-1]
    line = "*" if fn == "gen" else m.group(2)
    return "%s(%s): %s" % (os.path.basename(m.group(1)), line, fn)


def main():
    oracle = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
    n, outdir = int(sys.argv[2]), sys.argv[3]
    want = collections.Counter()
    for name, stack, count in oracle:
        if not name.startswith("aten::"):
            continue
        py = tuple(norm(f) for f in stack if not f.startswith("<"))[:n]
        want[(name, py)] += count
    fails, nseg, ngroups = [], 0, 0
    summaries = sorted(glob.glob(os.path.join(outdir, "summary_*.json")))
    assert summaries, "no summaries in " + outdir
    for path in summaries:
        rows = json.load(open(path))["rows"]
        got = collections.Counter()
        for r in rows:
            if r["kind"] != "cpu_op" or not r["name"].startswith("aten::"):
                continue
            assert "stack" in r, "%s: a row without \"stack\"" % path
            assert len(r["stack"]) <= n, r
            got[(r["name"], tuple(norm(f) for f in r["stack"]))] += r["count"]
        seg = os.path.basename(path)
        for key in sorted(set(want) | set(got)):
            if key not in want and any(f.endswith(": run") for f in key[1]):
                continue  # a worker thread's: torch.profiler does not see it
            if want.get(key) != got.get(key):
                fails.append("%s: %s %s: fvbpf %s, torch %s" % (seg, key[0], list(key[1]),
                                                                 got.get(key), want.get(key)))
            ngroups += 1
        nseg += 1
    floor = sorted(c for (name, fr), c in want.items() if name == "aten::floor")
    if floor != ([1, 2] if n > 1 else [3]):  # shared() from two callers
        fails.append("oracle: aten::floor groups %s, want %s" % (floor, [1, 2] if n > 1 else [3]))
    for f in fails:
        print("FAIL", f)
    print("segments=%d groups=%d torch_groups=%d fails=%d" % (nseg, ngroups, len(want), len(fails)))
    sys.exit(1 if fails or len(want) < 10 else 0)


main()
