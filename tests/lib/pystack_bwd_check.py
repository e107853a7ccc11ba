# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Check fvbpf --with-stack's backward attribution on
tests/workloads/torch_backward.py against torch.profiler(with_stack=True)
on the same step (the oracle JSON the workload prints: per backward node,
the forward op torch's forward-backward flow links it to, and torch's
frames around that forward op) and against the workload's source.

  pystack_bwd_check.py ORACLE.json WORKLOAD.py OUTDIR

Per segment trace, per backward node of the oracle:
- the node is there once, with "Sequence number" and a "Fwd thread id"
  above 0, as its evaluate_function slice;
- the forward op with that number in fvbpf's trace (the last begun with
  "Fwd thread id" 0, as torch pairs them) has torch's forward op's name;
- the node's "Python stack (forward)" is that forward op's "Python stack",
  its frames are torch's frames around the forward op, the frame in the
  workload is on the forward op's marker line, and "Python line (forward)"
  names the innermost frame;
- the folded file puts the node's time under that marker line.
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pystack_check import frames_differ, report  # noqa: E402

# which marker line calls each forward op (the workload's source)
MARK = {"aten::mm": "matmul", "aten::relu": "relu", "aten::t": "linear",
        "aten::addmm": "linear", "aten::mul": "loss", "aten::sum": "loss"}
EVAL = "autograd::engine::evaluate_function: "


def markers(src):
    return {m.group(1): i for i, line in enumerate(open(src), 1)
            for m in [re.search(r"# @op:(\w+)$", line)] if m}


def check_node(o, ops, stacks, lines, base, fails):
    name = o["node"]
    nodes = [e for e in ops if e["name"] == name]
    evals = [e for e in ops if e["name"] == EVAL + name]
    if len(nodes) != 1 or len(evals) != 1:
        fails.append("%s: %d nodes, %d evaluate_function" % (name, len(nodes), len(evals)))
        return
    node, a = nodes[0], nodes[0]["args"]
    seq = a.get("Sequence number")
    if seq is None or not a.get("Fwd thread id", 0) > 0:
        fails.append("%s: sequence number %s, forward thread %s" % (name, seq, a.get("Fwd thread id")))
        return
    ea = evals[0]["args"]
    if ea.get("Sequence number") != seq or ea.get("Python stack (forward)") != a.get("Python stack (forward)"):
        fails.append("%s: its evaluate_function says %s" % (name, ea))
    fwd = [e for e in ops if e["args"].get("Sequence number") == seq and
           e["args"].get("Fwd thread id") == 0 and e["ts"] <= node["ts"]]
    if not fwd:
        fails.append("%s: no forward op with sequence number %d" % (name, seq))
        return
    fwd = max(fwd, key=lambda e: (e["ts"], -e["dur"]))
    if fwd["name"] != o["forward"]:
        fails.append("%s: forward op %s, torch %s" % (name, fwd["name"], o["forward"]))
        return
    sid = a.get("Python stack (forward)")
    if sid is None or sid != fwd["args"].get("Python stack"):
        fails.append("%s: forward stack %s, its forward op's %s" % (name, sid, fwd["args"].get("Python stack")))
        return
    ours = stacks[str(sid)]
    if frames_differ(name, ours, o["frames"], fails):
        return
    mine = [f for f in ours if f["file"].endswith(base)]
    want = lines[MARK[o["forward"]]]
    if not mine or mine[0]["line"] != want:
        fails.append("%s: line %s, the source says %d" % (name, mine[:1], want))
    f0 = ours[0]
    label = "%s (%s:%d)" % (f0["function"], os.path.basename(f0["file"]), f0["line"])
    if not a.get("Python line (forward)", "").startswith(f0["function"] + " (") or \
            not a["Python line (forward)"].endswith(":%d)" % f0["line"]):
        fails.append("%s: Python line (forward) %s, want %s" % (name, a.get("Python line (forward)"), label))


def main():
    oracle = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
    src, outdir = sys.argv[2], sys.argv[3]
    lines, base = markers(src), os.path.basename(src)
    fails, nodes = [], 0
    assert len(oracle) >= 6, oracle
    traces = sorted(glob.glob(os.path.join(outdir, "trace_*.json")))
    assert traces, "no traces in " + outdir
    for tr in traces:
        doc = json.load(open(tr))
        ops = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
        for o in oracle:
            check_node(o, ops, doc.get("pythonStacks", {}), lines, base, fails)
            nodes += 1
        seg = re.search(r"trace_(.*)\.json$", os.path.basename(tr)).group(1)
        text = open(os.path.join(outdir, "stacks_%s.folded" % seg)).read()
        for o in oracle:
            needle = r"%s:%d\);(\S[^;]*;)*%s%s;%s[; ]" % (re.escape(base), lines[MARK[o["forward"]]],
                                                          re.escape(EVAL), o["node"], o["node"])
            if not re.search(needle, text):
                fails.append("%s: folded file has %s not under line %d" % (seg, o["node"], lines[MARK[o["forward"]]]))
    report(fails, "segments=%d nodes=%d" % (len(traces), nodes))


if __name__ == "__main__":
    main()
