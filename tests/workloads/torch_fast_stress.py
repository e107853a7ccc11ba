# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Segments every few ms for the operator fast path, with threads coming
and going and forks: no fvbpf code in it (the library comes by LD_PRELOAD).

  torch_fast_stress.py DIR SECONDS

Writes pid=..., waits for DIR/go, then for SECONDS repeats one iteration
and prints "iterations=N threads=T forks=F bad=B" and writes DIR/done:

  with record_function("fast_seg"):     # -r torch:fast_seg: a segment
      3 x torch.add                      # exactly 3 aten::add in each
      every 2nd: a new thread runs 2 x torch.mul, joined (exactly 2 on
                 another thread; over the run far more threads than the
                 library has rings: a dead thread's ring is reused)
      every 25th: os.fork(); the child runs 5 x torch.add in a fast_seg
                 scope of its own and exits 0; the parent waits (inside
                 its segment: a child writing into its parent's rings
                 would show as more than 3 adds there)
  torch.sub outside any scope             # never in a segment
  sleep 3 ms

B counts children that did not exit with 0.
"""
import os
import sys
import threading
import time

import torch

torch.set_num_threads(1)
d, seconds = sys.argv[1], float(sys.argv[2])
a = torch.ones(4)
b = torch.ones(4)
print("pid=%d" % os.getpid(), flush=True)
while not os.path.exists(os.path.join(d, "go")):
    time.sleep(0.02)


def muls():
    torch.mul(a, b)
    torch.mul(a, b)


it = threads = forks = bad = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    with torch.profiler.record_function("fast_seg"):
        torch.add(a, b)
        torch.add(a, b)
        torch.add(a, b)
        if it % 2 == 1:
            th = threading.Thread(target=muls)
            th.start()
            th.join()
            threads += 1
        if it % 25 == 24:
            pid = os.fork()
            if pid == 0:
                with torch.profiler.record_function("fast_seg"):
                    for _ in range(5):
                        torch.add(a, b)
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            forks += 1
            bad += status != 0
    torch.sub(a, b)
    it += 1
    time.sleep(0.003)
print("iterations=%d threads=%d forks=%d bad=%d" % (it, threads, forks, bad), flush=True)
open(os.path.join(d, "done"), "w").close()
