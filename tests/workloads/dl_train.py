# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A CPU trainer whose DataLoader workers' batches take a known time
(issue 38), no fvbpf code in it.

A map-style dataset of SAMPLES samples, batch size B, sequential sampler:
batch k holds samples k*B .. k*B+B-1 and, with N workers and the default
in-order loading, worker k % N loads it.  The first sample of every batch
that worker --slow-worker loads sleeps --slow-ms in __getitem__; every
other sample costs a few microseconds.  Each step runs a few operators
inside record_function("train_step"), so `--step-by train_step` cuts a
segment per step, the trainer's wait for the batch (DataLoader's
__next__) inside it.

  dl_train.py [--workers N] [--persistent] [--pin-memory] [--epochs E]
              [--batches K] [--slow-worker W] [--slow-ms MS]
              [--start-method fork|spawn|forkserver] DIR

prints "pid=N", then "workers=P,Q" (their pids in fork order),
"pin_memory_thread=0|1" and "loader running" once the first batch
arrived (its workers are forked by then); under torchrun (RANK set) it
also writes DIR/rank.R, "PID WORKER_PIDS", then.  It runs E epochs of K
batches (E=0: until DIR/stop exists, looked at after each epoch), prints
"epochs=E batches=M workers_bad=X" and exits 0.  workers_bad counts
workers of ended epochs whose exit code was not 0 (a worker crashed by a
probe makes the DataLoader raise first).
"""
import argparse
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info

torch.set_num_threads(1)
B = 4


class Timed(Dataset):
    def __init__(self, n, slow_worker, slow_ms, workers):
        self.n = n
        self.slow_worker = slow_worker
        self.slow_s = slow_ms / 1000.0
        self.workers = workers

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        batch = i // B
        if (self.workers and i % B == 0 and batch % self.workers == self.slow_worker
                and get_worker_info() is not None):
            time.sleep(self.slow_s)
        return torch.full((8,), float(i))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--persistent", action="store_true")
    ap.add_argument("--pin-memory", action="store_true")
    ap.add_argument("--epochs", type=int, default=0)
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--slow-worker", type=int, default=1)
    ap.add_argument("--slow-ms", type=float, default=60.0)
    ap.add_argument("--start-method", default="fork", choices=("fork", "spawn", "forkserver"))
    ap.add_argument("dir")
    a = ap.parse_args()

    ds = Timed(a.batches * B, a.slow_worker, a.slow_ms, a.workers)
    kw = {}
    if a.workers:
        kw = dict(persistent_workers=a.persistent, multiprocessing_context=a.start_method)
    dl = DataLoader(ds, batch_size=B, num_workers=a.workers, pin_memory=a.pin_memory, **kw)
    print("pid=%d" % os.getpid(), flush=True)
    w = torch.zeros(8)
    said = False
    epochs = batches = bad = 0
    stop = os.path.join(a.dir, "stop")
    while a.epochs == 0 or epochs < a.epochs:
        it = iter(dl)
        while True:
            # the step holds the trainer's wait for its batch (__next__)
            with torch.profiler.record_function("train_step"):
                x = next(it, None)
                if x is None:
                    break
                w = w + x.sum(0) * 0.001
            batches += 1
            if not said:
                pids = [p.pid for p in getattr(it, "_workers", [])]
                print("workers=%s" % ",".join(map(str, pids)), flush=True)
                # torch runs no pin-memory thread without an accelerator
                pin = getattr(it, "_pin_memory_thread", None) is not None
                print("pin_memory_thread=%d" % pin, flush=True)
                if "RANK" in os.environ:
                    # under torchrun: DIR/rank.R says "PID WORKER_PIDS"
                    rf = os.path.join(a.dir, "rank.%s" % os.environ["RANK"])
                    with open(rf + ".tmp", "w") as f:
                        f.write("%d %s\n" % (os.getpid(), ",".join(map(str, pids))))
                    os.rename(rf + ".tmp", rf)
                print("loader running", flush=True)
                said = True
        if not a.persistent:
            for p in getattr(it, "_workers", []):
                p.join(10)
                bad += p.exitcode not in (0, None)
        del it
        epochs += 1
        if a.epochs == 0 and os.path.exists(stop):
            break
    print("epochs=%d batches=%d workers_bad=%d" % (epochs, batches, bad), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
