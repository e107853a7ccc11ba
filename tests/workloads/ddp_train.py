# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A data-parallel training job on the CPU, run by torchrun with the gloo
backend, with no fvbpf code in it (tests/bats/job_steps.bats, make bench),
or by Slurm's srun (tests/bats/slurm.bats).

  torchrun --nproc-per-node N ddp_train.py DIR [--steps S] [--sleep-ms MS]
                                          [--late-rank R --late-ms D] [--subgroup]
  srun -n N python ddp_train.py DIR [--steps S] [--sleep-ms MS] [--tag T]

Under torchrun the rank and world size come from RANK and WORLD_SIZE;
under srun, which sets neither, from SLURM_PROCID and SLURM_NTASKS, and the
ranks meet through a file store in DIR (no port to agree on).  --tag T
does nothing but sit in the command line (a test tells tasks apart by it).
--late-rank R --late-ms D: rank R sleeps D ms before each backward, so
that the others wait for it in the gradient all-reduce (a known
straggler: tests/bats/collectives.bats).  --subgroup: ranks 0 and 1 also
all-reduce a 1000-element tensor in a group of their own after each step.

Each rank trains a small block under DistributedDataParallel (one gradient
all-reduce a step), one step every MS milliseconds (default 20), until
DIR/stop exists or S steps ran (0: no bound).  Rank R writes DIR/rank.R
("pid step") once it has run its first step, and keeps DIR/steps.R (the
steps it finished) current about every 100 ms.  The ranks stay in step by
their all-reduce: step k of every rank is the same training step.
"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

torch.set_num_threads(1)
D, T, B = 32, 8, 4


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        x = x + self.fc2(F.gelu(self.fc1(self.ln(x))))
        return self.head(x.mean(dim=1))


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main():
    d = sys.argv[1]
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 0
    sleep_s = (float(sys.argv[sys.argv.index("--sleep-ms") + 1]) if "--sleep-ms" in sys.argv
               else 20.0) / 1e3
    if "RANK" in os.environ:
        dist.init_process_group("gloo")
    else:
        # srun: the launcher's own variables, as the job's code would read
        # them; nothing is set in os.environ (fvbpf reads the environment
        # the process was started with)
        dist.init_process_group("gloo", init_method="file://" + os.path.join(d, "store"),
                                rank=int(os.environ["SLURM_PROCID"]),
                                world_size=int(os.environ["SLURM_NTASKS"]))
    rank = dist.get_rank()
    torch.manual_seed(rank)
    late_rank = int(arg("--late-rank", "-1"))
    late_s = float(arg("--late-ms", "0")) / 1e3
    sub = dist.new_group([0, 1], group_desc="pair") if "--subgroup" in sys.argv else None
    side = torch.ones(1000)
    model = DDP(Block())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(B, T, D)
    y = torch.randint(0, 4, (B,))
    n, last = 0, 0.0
    stop = torch.zeros(1)
    while True:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        if rank == late_rank:
            time.sleep(late_s)
        loss.backward()
        opt.step()
        if sub is not None and rank < 2:
            dist.all_reduce(side, group=sub)
        n += 1
        if n == 1:
            write(os.path.join(d, "rank.%d" % rank), "%d %d\n" % (os.getpid(), n))
        now = time.monotonic()
        if now - last > 0.1:
            write(os.path.join(d, "steps.%d" % rank), "%d\n" % n)
            last = now
        # every rank leaves at the same step: rank 0 decides, all hear it
        stop[0] = 1.0 if (rank == 0 and (os.path.exists(os.path.join(d, "stop")) or
                                         (steps and n >= steps))) else 0.0
        dist.all_reduce(stop)
        if stop[0] > 0:
            break
        time.sleep(sleep_s)
    write(os.path.join(d, "steps.%d" % rank), "%d\n" % n)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
