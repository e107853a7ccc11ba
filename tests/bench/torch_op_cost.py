# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Per-op cost: time N calls of torch.add on tiny tensors (one at::_ops
entry each: add.Tensor), in rounds, printing ns per call per round.

  torch_op_cost.py DIR N ROUNDS [K=shapes|K=plain,...]

Writes pid=... then waits for DIR/go before each round k (DIR/go.k), so
the caller can attach or change fvbpf between rounds.  Each round runs
inside record_function("bench_round") (a scope -r torch:bench_round can
make a segment of), after one unmeasured warm-up scope.  The optional
fourth argument runs round K under torch.profiler (CPU activity) in this
process, with record_shapes=True (shapes) or without (plain).

A round's figure is the median over CHUNKS equal chunks of the calls of
this thread's CPU time per call: on 2 vCPUs shared with other work, the
clock of a whole round swung the section's ratios by 2x from run to run
(waiting for a vCPU moved it; it does not move CPU time, which counts the
uprobe traps, as they run in this thread's kernel time).
"""
import os
import statistics
import sys
import time

import torch

torch.set_num_threads(1)
CHUNKS = 10
d, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
profiled = dict(kv.split("=") for kv in sys.argv[4].split(",")) if len(sys.argv) > 4 else {}
a = torch.ones(4)
b = torch.ones(4)
for _ in range(n // CHUNKS):  # the first round (A) ran slower without it
    torch.add(a, b)
print("pid=%d" % os.getpid(), flush=True)
for k in range(rounds):
    while not os.path.exists(os.path.join(d, "go.%d" % k)):
        time.sleep(0.02)
    prof = None
    if str(k) in profiled:
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CPU],
                       record_shapes=profiled[str(k)] == "shapes")
        prof.__enter__()
    with torch.profiler.record_function("bench_round"):
        torch.add(a, b)  # the first occurrence: fvbpf learns the name
    per_call = []
    with torch.profiler.record_function("bench_round"):
        for c in range(CHUNKS):
            m = n // CHUNKS + (1 if c < n % CHUNKS else 0)
            t0 = time.thread_time_ns()
            for _ in range(m):
                torch.add(a, b)
            per_call.append((time.thread_time_ns() - t0) / m)
    if prof is not None:
        prof.__exit__(None, None, None)
    print("round %d ns_per_op %.1f" % (k, statistics.median(per_call)), flush=True)
    open(os.path.join(d, "done.%d" % k), "w").close()
