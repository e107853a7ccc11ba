# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""The cost of fvbpf's collective records (make bench section 17): gloo
all-reduces of one float, timed on the calling thread, in phases the
bench starts one at a time while fvbpf is attached or not.

  torchrun --nproc-per-node 2 coll_cost.py DIR COUNT

Rank R writes DIR/rank.R (its pid) once the group is up; then for
N = 1, 2, ...: waits for DIR/go.N, runs COUNT all-reduces, and rank 0
writes DIR/res.N: the median microseconds of one all-reduce (the call
and its wait). DIR/stop ends it.
"""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist


def main():
    d, count = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.ones(1)
    for _ in range(50):  # the group's connections made before any phase
        dist.all_reduce(x)
    with open(os.path.join(d, "rank.%d.tmp" % rank), "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(os.path.join(d, "rank.%d.tmp" % rank), os.path.join(d, "rank.%d" % rank))
    n = 1
    while not os.path.exists(os.path.join(d, "stop")):
        if not os.path.exists(os.path.join(d, "go.%d" % n)):
            time.sleep(0.005)
            continue
        t = []
        for _ in range(count):
            t0 = time.perf_counter_ns()
            dist.all_reduce(x)
            t.append(time.perf_counter_ns() - t0)
        dist.barrier()
        if rank == 0:
            with open(os.path.join(d, "res.%d.tmp" % n), "w") as f:
                f.write("%.2f\n" % (statistics.median(t) / 1e3))
            os.rename(os.path.join(d, "res.%d.tmp" % n), os.path.join(d, "res.%d" % n))
        n += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
