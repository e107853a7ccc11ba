#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Check fvbpf's torch.cuda.memory._snapshot() export with PyTorch's own
reader (run with a torch interpreter).

  mem_snapshot_check.py SNAPSHOT.json TRACE.json

torch.cuda._memory_viz.trace() (the text form of the allocator trace) and
trace_plot() (the memory viewer's page) must take the file; each device's
list must hold, in order, an "alloc" per allocation and a "free_requested"
and "free_completed" per free of the trace's [memory] events of that device
(CUDA index, the CPU after the highest CUDA index), with their addresses
and sizes.  Prints what it compared; exits 1 on a mismatch.
"""
import json
import re
import sys

import torch.cuda._memory_viz as viz


def main():
    snap = json.load(open(sys.argv[1]))
    ev = [e["args"] for e in json.load(open(sys.argv[2]))["traceEvents"]
          if e.get("name") == "[memory]"]
    max_cuda = max([a["Device Id"] for a in ev if a["Device Type"] == 1], default=-1)
    want = [[] for _ in range(max_cuda + 2)]
    for a in ev:
        dev = a["Device Id"] if a["Device Type"] == 1 else max_cuda + 1
        if a["Bytes"] > 0:
            want[dev].append(("alloc", a["Addr"], a["Bytes"]))
        elif a["Bytes"] < 0:
            want[dev].append(("free_requested", a["Addr"], -a["Bytes"]))
            want[dev].append(("free_completed", a["Addr"], -a["Bytes"]))
    got = [[(e["action"], e["addr"], e["size"]) for e in d] for d in snap["device_traces"]]
    text = viz.trace(snap)
    html = viz.trace_plot(snap)
    counts = [int(n) for n in re.findall(r"^(\d+) entries$", text, re.M)]
    print("device lists %s, [memory] events per list %s, torch's trace() entries %s, "
          "trace_plot() %d bytes" % ([len(d) for d in got], [len(d) for d in want], counts,
                                     len(html)))
    ok = got == want and counts == [len(d) for d in got if d] and "snapshot.pickle" in html
    if not ok:
        print("MISMATCH")
    sys.exit(0 if ok else 1)


main()
