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
import atexit
import json
import multiprocessing
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


# How many batches of the current epoch the main process has taken, in
# memory the fork workers share; batch J's worker waits for J.  At exit
# every waiting worker is let go, or the DataLoader's shutdown would wait
# out its join timeout (5 s) for each.
received = multiprocessing.RawValue("i", 0)
MAIN_PID = os.getpid()
atexit.register(lambda: setattr(received, "value", 1 << 30))


class InOrder(Dataset):
    """The samples of TensorDataset, but batch J of an epoch leaves its
    worker only after the main process has taken batch J-1, so each step
    unpickles exactly its own batch: racing workers would move those ops
    from one step to another, and per-step counts would vary.  A delay
    alone (30*J ms here once) is not an order: on a loaded machine the
    second worker starts late and batch 2 overtakes batch 1."""

    def __init__(self, *tensors):
        self.tensors = tensors

    def __len__(self):
        return len(self.tensors[0])

    def __getitem__(self, i):
        if i % B == 0:
            want = (i // B) % EPOCH
            deadline = time.monotonic() + 120
            while received.value < want:
                if os.getppid() != MAIN_PID:
                    raise RuntimeError("batch %d: the main process is gone" % want)
                if time.monotonic() > deadline:
                    raise RuntimeError("batch %d: the main process took no batch %d" % (want, want - 1))
                time.sleep(0.002)
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
        received.value = 0  # before iter() forks this epoch's workers
        it = iter(loader)
        first = True
        for xy in it:
            received.value += 1
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
if mode == "fwdbwd":
    # torch.profiler's forward->backward links of one step, as
    # {"FORWARD_OP -> BACKWARD_NODE": count}
    import collections
    import tempfile
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    with tempfile.NamedTemporaryFile(suffix=".json") as tf:
        prof.export_chrome_trace(tf.name)
        ev = json.load(open(tf.name))["traceEvents"]
    at = {(e["tid"], e["ts"]): e["name"] for e in ev if e.get("ph") == "X"}
    ends = {}
    for e in ev:
        if e.get("cat") == "fwdbwd":
            ends.setdefault(e["id"], {})[e["ph"]] = at.get((e["tid"], e["ts"]), "?")
    pairs = collections.Counter("%s -> %s" % (v["s"], v["f"]) for v in ends.values()
                                if "s" in v and "f" in v)
    print(json.dumps(pairs, sort_keys=True))
elif mode == "oracle":
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
        times, cpu = [], []
        for _ in range(steps):
            t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
            step()
            cpu.append(time.thread_time_ns() - c0)
            times.append(time.perf_counter_ns() - t0)
        if prof is not None:
            prof.__exit__(None, None, None)
        times.sort()
        cpu.sort()
        print("round %d ms_per_step %.3f" % (k, times[len(times) // 2] / 1e6), flush=True)
        # the step's own CPU time (user + system, this thread): what the job
        # pays in its thread, without the time it waited for a CPU
        print("round %d cpu_ms_per_step %.3f" % (k, cpu[len(cpu) // 2] / 1e6), flush=True)
        open(os.path.join(d, "done.%d" % k), "w").close()
elif mode == "ab":
    # Blocks in turn, for ratios that the VM's drift cannot move: ROUNDS
    # rounds, each waiting for DIR/go.K, whose content names what its B
    # blocks run ("prof": torch.profiler (CPU) around the block, entered and
    # left outside the timing, "profstack" the same with with_stack=True;
    # "scope": each step in record_function
    # "bench_in" (a segment when fvbpf gates on it); A blocks run each step
    # in record_function "bench_out", B's without a gate); PAIRS pairs of
    # BLOCK steps.  Each block's figure is the median of its steps; a round
    # prints the median over pairs of B/A and of A, wall clock and the
    # thread's own CPU time.  Rounds other than "scope" then print what an
    # empty record_function scope costs the thread ("scopecost": only that).
    from torch.profiler import ProfilerActivity, profile, record_function

    d, rounds, pairs, block = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    print("pid=%d" % os.getpid(), flush=True)

    def run_block(name, kind):
        wall, cpu = [], []
        prof = kind in ("prof", "profstack")
        if prof:
            p = profile(activities=[ProfilerActivity.CPU], with_stack=kind == "profstack")
            p.__enter__()
        for _ in range(block):
            t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
            with record_function(name):
                step()
            cpu.append(time.thread_time_ns() - c0)
            wall.append(time.perf_counter_ns() - t0)
        if prof:
            p.__exit__(None, None, None)
        return sorted(wall)[block // 2], sorted(cpu)[block // 2]

    def med(v):
        v = sorted(v)
        return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2

    def ab_pairs(k, kind):
        a, b = [], []
        for i in range(pairs):
            # ABBA order: a block's position in the pair does not favour either
            if i % 2:
                b.append(run_block("bench_in", kind))
                a.append(run_block("bench_out", ""))
            else:
                a.append(run_block("bench_out", ""))
                b.append(run_block("bench_in", kind))
        for j, what in ((0, "wall"), (1, "cpu")):
            print("round %d %s a_ms %.4f ratio %.4f" % (
                k, what, med([x[j] for x in a]) / 1e6, med([y[j] / x[j] for x, y in zip(a, b)])),
                flush=True)

    def scope_cost(k):
        # what one empty record_function scope costs this thread now (its
        # probes, when fvbpf is attached): the median of 5 runs of 2000
        sc = []
        for _ in range(5):
            c0 = time.thread_time_ns()
            for _ in range(2000):
                with record_function("bench_noop"):
                    pass
            sc.append((time.thread_time_ns() - c0) / 2000)
        print("round %d scope_ns %.0f" % (k, med(sc)), flush=True)

    for k in range(rounds):
        go = os.path.join(d, "go.%d" % k)
        while not os.path.exists(go):
            time.sleep(0.02)
        kind = open(go).read().strip()
        if kind != "scopecost":
            ab_pairs(k, kind)
        if kind != "scope":
            scope_cost(k)
        open(os.path.join(d, "done.%d" % k), "w").close()
else:
    sys.exit("usage: torch_train.py [--workers N] oracle | run DIR STEPS | "
             "time DIR ROUNDS STEPS [PROFILE_ROUND] | ab DIR ROUNDS PAIRS BLOCK")
