# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A small model with a backward per step, its forward operators called
from known lines (marker comments "# @op:NAME"), for --with-stack's
attribution of backward nodes to their forward line.

  torch_backward.py oracle         one step under torch.profiler
        (with_stack=True); prints JSON: per backward node torch links to a
        forward op (its forward-backward flow), the node's name, the forward
        op's name and the Python frames torch saw around that forward op,
        innermost first (file, first line, function)
  torch_backward.py run DIR STEPS  print pid=, wait for DIR/go, run STEPS
        steps (record_function "bwd_step" each), write DIR/done
"""
import json
import os
import sys
import tempfile

import torch

torch.set_num_threads(1)
torch.manual_seed(0)
w1 = torch.randn(8, 8, requires_grad=True)
lin = torch.nn.Linear(8, 8)


def layer(x):
    y = torch.matmul(x, w1)  # @op:matmul
    return torch.relu(y)  # @op:relu


def head(h):
    z = lin(h)  # @op:linear
    return torch.sum(z * 2)  # @op:loss


def step():
    loss = head(layer(torch.ones(4, 8)))
    loss.backward()


def named_step():
    with torch.profiler.record_function("bwd_step"):
        step()


for _ in range(2):
    named_step()


def frames_around(ev, py):
    """torch's python_function slices around @ev on its thread, innermost
    first, as [file, first_line, function] ("nn.Module" for a module)."""
    out = []
    around = [p for p in py if p["tid"] == ev["tid"] and p["ts"] <= ev["ts"] and
              ev["ts"] + ev["dur"] <= p["ts"] + p["dur"]]
    for p in sorted(around, key=lambda p: p["dur"]):
        if p["name"].startswith("nn.Module: "):
            out.append(["nn.Module", 0, p["name"]])
        elif ".py(" in p["name"] and not p["name"].startswith("<"):
            loc, fn = p["name"].split(": ", 1)
            f, line = loc.rsplit("(", 1)
            out.append([f, int(line.rstrip(")")), fn])
    return out


def oracle():
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
        named_step()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.json")
        prof.export_chrome_trace(path)
        events = json.load(open(path))["traceEvents"]
    ops = {(e["tid"], e["ts"]): e for e in events
           if e.get("ph") == "X" and e.get("cat") == "cpu_op"}
    py = [e for e in events if e.get("ph") == "X" and e.get("cat") == "python_function"]
    flows = {}
    for e in events:
        if e.get("cat") == "fwdbwd":
            flows.setdefault(e["id"], {})[e["ph"]] = ops.get((e["tid"], e["ts"]))
    out = []
    for f in flows.values():
        fwd, node = f.get("s"), f.get("f")
        if fwd and node:
            out.append({"node": node["name"], "seq": node["args"]["Sequence number"],
                        "forward": fwd["name"], "frames": frames_around(fwd, py)})
    print(json.dumps(out))


mode = sys.argv[1] if len(sys.argv) > 1 else "oracle"
if mode == "oracle":
    oracle()
elif mode == "run":
    from wl_steps import run_steps

    run_steps(sys.argv[2], int(sys.argv[3]), named_step)
else:
    sys.exit("usage: torch_backward.py oracle | run DIR STEPS")
