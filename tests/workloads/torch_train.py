# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A small CPU training loop with no fvbpf code: a transformer-like block,
AdamW, a DataLoader (num_workers=0), deterministic.

  --workers N (first argument, any mode): a DataLoader with N workers
  (fork start method) over EPOCH batches, so that a new set of workers is
  forked every EPOCH steps; the oracle profiles the same loop.  The run
  mode then prints "epoch_starts=I,J,..." (the run steps that began an
  epoch: their fetch ended one and forked the next workers) and
  "workers=N bad=M" (M: workers whose exit code was not 0).

  torch_train.py oracle           profile one steady step with torch.profiler
                                  (CPU) and print key_averages counts as JSON
  torch_train.py run DIR STEPS    write DIR/ready (the pid), wait for DIR/go,
                                  run STEPS steps, write DIR/done, exit
"""
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, TensorDataset

torch.set_num_threads(1)
torch.manual_seed(0)
D, T, B, H = 64, 16, 8, 4
# TORCH_TRAIN_D=512: wider layers, fewer operators per ms (make bench)
D = int(os.environ.get("TORCH_TRAIN_D", D))
EPOCH = 4  # batches per epoch with --workers

WORKERS = 0
if len(sys.argv) > 2 and sys.argv[1] == "--workers":
    WORKERS = int(sys.argv[2])
    del sys.argv[1:3]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.ln2 = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 4 * D)
        self.fc2 = nn.Linear(4 * D, D)
        self.head = nn.Linear(D, 10)

    def forward(self, x):
        b, t, d = x.shape
        with torch.profiler.record_function("user_attention"):
            q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
            q = q.view(b, t, H, d // H).transpose(1, 2)
            k = k.view(b, t, H, d // H).transpose(1, 2)
            v = v.view(b, t, H, d // H).transpose(1, 2)
            att = torch.softmax(q @ k.transpose(-2, -1) / (d // H) ** 0.5, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return self.head(x.mean(dim=1))


model = Block()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
worker_exits = []   # exit codes of the workers of finished epochs
epoch_started = []  # per step: did its fetch begin an epoch?


class InOrder(Dataset):
    """The samples of TensorDataset, but batch J of an epoch comes out of
    its worker 30*J ms late, so batches reach the main process in order and
    each step unpickles exactly its own (racing workers would move those
    ops from one step to another, and per-step counts would vary)."""

    def __init__(self, *tensors):
        self.tensors = tensors

    def __len__(self):
        return len(self.tensors[0])

    def __getitem__(self, i):
        if i % B == 0:
            time.sleep(0.03 * ((i // B) % EPOCH))
        return tuple(t[i] for t in self.tensors)


def batches():
    """Batches for ever: one epoch after another, as a training loop's
    `for epoch: for x, y in loader` does (new workers each epoch)."""
    n = B * (EPOCH if WORKERS else 2000)
    ds = (InOrder if WORKERS else TensorDataset)(torch.randn(n, T, D),
                                                 torch.randint(0, 10, (n,)))
    kw = dict(num_workers=WORKERS, multiprocessing_context="fork") if WORKERS else {}
    loader = DataLoader(ds, batch_size=B, **kw)
    while True:
        it = iter(loader)
        first = True
        for xy in it:
            yield xy, first
            first = False
        # exhausted: the iterator has joined its workers
        worker_exits.extend(w.exitcode for w in getattr(it, "_workers", []))


data = batches()


def step():
    (x, y), first = next(data)
    epoch_started.append(first)
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()


for _ in range(2):
    step()  # AdamW creates its state on the first step

mode = sys.argv[1] if len(sys.argv) > 1 else "oracle"
if mode == "oracle":
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    print(json.dumps({e.key: e.count for e in prof.key_averages()}, sort_keys=True))
elif mode == "run":
    d, steps = sys.argv[2], int(sys.argv[3])
    print("pid=%d" % os.getpid(), flush=True)
    while not os.path.exists(os.path.join(d, "go")):
        time.sleep(0.05)
    base = len(epoch_started)
    for _ in range(steps):
        step()
        time.sleep(0.05)
    if WORKERS:
        starts = [i - base for i in range(base, len(epoch_started)) if epoch_started[i]]
        print("epoch_starts=%s" % ",".join(map(str, starts)), flush=True)
        print("workers=%d bad=%d" % (len(worker_exits), sum(1 for c in worker_exits if c != 0)),
              flush=True)
    open(os.path.join(d, "done"), "w").close()
    # stay (idle, no ops) until DIR/exit or two minutes, for checks on the live process
    for _ in range(2400):
        if os.path.exists(os.path.join(d, "exit")):
            break
        time.sleep(0.05)
elif mode == "time":
    # ROUNDS rounds of STEPS steps, each waiting for DIR/go.K; round
    # PROFILE_ROUND (if given) runs under torch.profiler (CPU) in process.
    d, rounds, steps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    prof_round = int(sys.argv[5]) if len(sys.argv) > 5 else -1
    print("pid=%d" % os.getpid(), flush=True)
    for k in range(rounds):
        while not os.path.exists(os.path.join(d, "go.%d" % k)):
            time.sleep(0.02)
        prof = None
        if k == prof_round:
            from torch.profiler import ProfilerActivity, profile

            # TORCH_TRAIN_WITH_STACK=1: as FastVideo's WITH_STACK (bench 13)
            prof = profile(activities=[ProfilerActivity.CPU],
                           with_stack=os.environ.get("TORCH_TRAIN_WITH_STACK") == "1")
            prof.__enter__()
        times = []
        for _ in range(steps):
            t0 = time.perf_counter_ns()
            step()
            times.append(time.perf_counter_ns() - t0)
        if prof is not None:
            prof.__exit__(None, None, None)
        times.sort()
        print("round %d ms_per_step %.3f" % (k, times[len(times) // 2] / 1e6), flush=True)
        open(os.path.join(d, "done.%d" % k), "w").close()
else:
    sys.exit("usage: torch_train.py [--workers N] oracle | run DIR STEPS | "
             "time DIR ROUNDS STEPS [PROFILE_ROUND]")
