# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A data-parallel job on the CPU for `fvbpf dump` (tests/bats/dump.bats,
make bench), run by torchrun with the gloo backend, no fvbpf code in it.

  torchrun --nproc-per-node N dump_job.py DIR [--hang-rank R [--hang-after K]]
           [--sleep-ms MS]

Each rank trains a small block and averages its gradients with one
dist.all_reduce per parameter a step (a collective the Python stack shows),
then steps an SGD optimizer (which `fvbpf attach`'s default --step-by cuts
on), one step every MS milliseconds (default 20), until DIR/stop exists.
Rank R writes DIR/rank.R ("pid") after its first step and appends the
CLOCK_MONOTONIC nanoseconds at which each step ended to DIR/times.R.
With --hang-rank R, rank R stops after K steps (without --hang-after: at
the first step after DIR/hang exists) in stall_here() (the line marked
HANG-LINE below) until DIR/go_on exists: the other ranks wait in
all_reduce for it.  It writes DIR/stalled once it is there.
"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

torch.set_num_threads(1)


def arg(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def stall_here(d):
    write(os.path.join(d, "stalled"), "%d\n" % os.getpid())
    go_on = os.path.join(d, "go_on")
    # one line of C builtins only: a dump that catches the loop anywhere
    # finds stall_here innermost at this line (os.path.exists is Python:
    # a dump on a loaded machine found rank 1 in genericpath's exists)
    while not os.access(go_on, os.F_OK): time.sleep(0.05)  # HANG-LINE


def average_gradients(model, world):
    for p in model.parameters():
        dist.all_reduce(p.grad)  # ALL-REDUCE-LINE
        p.grad /= world


def main():
    d = sys.argv[1]
    hang_rank, hang_after = arg("--hang-rank", -1), arg("--hang-after", -1)
    sleep_s = arg("--sleep-ms", 20.0) / 1e3
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    x, y = torch.randn(8, 16), torch.randn(8, 4)
    stop = torch.zeros(1)
    n = 0
    with open(os.path.join(d, "times.%d" % rank), "a") as times:
        while True:
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            if rank == hang_rank and (n == hang_after if hang_after >= 0 else
                                      os.path.exists(os.path.join(d, "hang"))):
                stall_here(d)
            average_gradients(model, world)
            opt.step()
            n += 1
            times.write("%d\n" % time.monotonic_ns())
            times.flush()
            if n == 1:
                write(os.path.join(d, "rank.%d" % rank), "%d\n" % os.getpid())
            # every rank leaves at the same step: rank 0 decides, all hear it
            stop[0] = 1.0 if rank == 0 and os.path.exists(os.path.join(d, "stop")) else 0.0
            dist.all_reduce(stop)
            if stop[0] > 0:
                break
            time.sleep(sleep_s)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
