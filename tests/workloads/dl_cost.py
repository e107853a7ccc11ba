# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""`make bench` section 18's job (issue 38): a CPU trainer with 2
persistent DataLoader workers whose samples cost a fixed small amount of
CPU each, no fvbpf code in it.

  dl_cost.py DIR COUNT

prints "pid=N workers=P,Q" once the workers run.  Phase k (1, 2, ...)
starts when DIR/go.k exists: COUNT batches of B samples, STEP batches a
step inside record_function("train_step") (`--step-by train_step` cuts
a segment per step), then DIR/res.k holds "WORKER_US TRAINER_US": the
workers' CPU time per batch (all their threads, from
/proc/PID/task/*/schedstat, ns) and the trainer's wall time per batch.
It exits when DIR/stop exists.
"""
import os
import sys
import time

import torch
from torch.autograd.profiler import record_function
from torch.utils.data import DataLoader, Dataset

B = 8
STEP = 50


class Cheap(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.full((64,), float(i))
        return x * 2.0 + 1.0


def worker_init(_):
    torch.set_num_threads(1)


def cpu_ns(pid):
    total = 0
    base = "/proc/%d/task" % pid
    for tid in os.listdir(base):
        try:
            with open("%s/%s/schedstat" % (base, tid)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # a thread that just left
    return total


def main():
    out, count = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(1)
    loader = DataLoader(Cheap(count * B), batch_size=B, num_workers=2, persistent_workers=True,
                        worker_init_fn=worker_init)
    it = iter(loader)
    next(it)
    pids = [w.pid for w in it._workers]
    print("pid=%d workers=%s" % (os.getpid(), ",".join(map(str, pids))), flush=True)
    k = 0
    while not os.path.exists(os.path.join(out, "stop")):
        go = os.path.join(out, "go.%d" % (k + 1))
        if not os.path.exists(go):
            time.sleep(0.02)
            continue
        k += 1
        w0 = sum(cpu_ns(p) for p in pids)
        t0 = time.perf_counter()
        done = 0
        while done < count:
            with record_function("train_step"):
                for _ in range(STEP):
                    try:
                        batch = next(it)
                    except StopIteration:
                        it = iter(loader)
                        batch = next(it)
                    batch.sum()
                    done += 1
        t1 = time.perf_counter()
        w1 = sum(cpu_ns(p) for p in pids)
        tmp = os.path.join(out, "res.%d.tmp" % k)
        with open(tmp, "w") as f:
            f.write("%.3f %.3f\n" % ((w1 - w0) / 1e3 / count, (t1 - t0) * 1e6 / count))
        os.rename(tmp, os.path.join(out, "res.%d" % k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
