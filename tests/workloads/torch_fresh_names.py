# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Steps in which every record_function scope has a name never seen
before, no fvbpf code: each step (record_function "step") opens SCOPES
scopes named "scope<N>-<padding>" (N counts up over the whole run, the
padding makes each name about 90 bytes, under the 96 fvbpf reads), each
around one small operator.  A job that makes up names without end: what
fvbpf keeps of them must stay within --max-memory.

  torch_fresh_names.py run DIR STEPS SCOPES   write pid=, wait for DIR/go,
                                              run STEPS steps, write
                                              DIR/done, wait for DIR/exit
"""
import sys

import torch

torch.set_num_threads(1)
x = torch.ones(4)
PAD = "x" * 72
count = 0


def step(scopes):
    global count
    with torch.profiler.record_function("step"):
        for _ in range(scopes):
            with torch.profiler.record_function("scope%d-%s" % (count, PAD)):
                torch.add(x, 1)
            count += 1


if len(sys.argv) != 5 or sys.argv[1] != "run":
    sys.exit("usage: torch_fresh_names.py run DIR STEPS SCOPES")
from wl_steps import run_steps  # noqa: E402

n = int(sys.argv[4])
run_steps(sys.argv[2], int(sys.argv[3]), lambda: step(n))
