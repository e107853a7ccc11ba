# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Steps on the main thread and a side thread whose record_function scope
spans step ends, no fvbpf code: the main thread runs a step like
torch_mem.py's (record_function "mem_step", which delimits fvbpf's
segments, open 20 ms); three helper threads (a data thread's shape) each
open "side_scope" before the steps start and keep it open across several
of them while they run operators inside (allocations, mm, cat), so that
every segment holds operators whose enclosing scope began before the
segment: in that segment they have no parent.

  torch_side_thread.py run DIR STEPS   write pid=, wait for DIR/go, run
                                       STEPS steps (the side thread
                                       already in its scope), write
                                       DIR/done, wait for DIR/exit
"""
import os
import sys
import threading
import time

import torch

torch.set_num_threads(1)
torch.manual_seed(0)

w = torch.randn(64, 64)
x = torch.randn(32, 64)
stop = threading.Event()
SIDE_THREADS = 3
in_scope = threading.Barrier(SIDE_THREADS + 1)


def side():
    a = torch.randn(16, 16)
    first_done = False
    while not stop.is_set():
        # one scope across several steps (each step is about 50 ms apart)
        with torch.profiler.record_function("side_scope"):
            if not first_done:
                first_done = in_scope.wait() >= 0
            t_end = time.monotonic() + 0.4
            while time.monotonic() < t_end and not stop.is_set():
                b = torch.empty(1 << 12)          # an allocation at depth 1
                b.fill_(1.0)
                c = torch.cat([a @ a, a], dim=0)  # mm, cat: ops below ops
                del b, c
                time.sleep(0.001)


def step():
    with torch.profiler.record_function("mem_step"):
        scratch = torch.empty(1 << 16)
        scratch.fill_(1.0)
        h = torch.cat([x @ w, x], dim=1)
        # the side threads run (in their older scopes) while this step is open
        time.sleep(0.02)
        h = torch.cat([h, x], dim=1)
        del scratch, h


if len(sys.argv) != 4 or sys.argv[1] != "run":
    sys.exit("usage: torch_side_thread.py run DIR STEPS")
threads = [threading.Thread(target=side, name="side%d" % k, daemon=True)
           for k in range(SIDE_THREADS)]
for th in threads:
    th.start()
in_scope.wait()
from wl_steps import run_steps  # noqa: E402

try:
    run_steps(sys.argv[2], int(sys.argv[3]), step)
finally:
    stop.set()
    for th in threads:
        th.join()
