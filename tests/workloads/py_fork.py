#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A traced Python job that forks the ways Python jobs do.

    py_fork.py MODE      MODE: os_fork | multiprocessing | dataloader

It waits until fvbpf.attached(), runs marked steps, then starts children
that run marked steps themselves and report whether fvbpf.attached() was
true in them (it must not be: a forked child is not traced):
  os_fork          four os.fork() children
  multiprocessing  a multiprocessing Pool of 2 (fork start method), 8 tasks
  dataloader       a torch DataLoader, num_workers=2, fork start method,
                   two epochs (a new pair of workers each)
Prints "children=N bad=M" (M: children that died, failed or were traced)
and "done".  The parent keeps running marked steps throughout.
"""

import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

import fvbpf  # noqa: E402


def out(line):
    print(line, flush=True)


def steps(n):
    for _ in range(n):
        with fvbpf.profiler_region("training_train_one_step"):
            with fvbpf.profiler_region("training_forward"):
                pass


def child_work(_i=0):
    """Marked steps in a child; 0 if it ran them untraced."""
    steps(50)
    return 1 if fvbpf.attached() else 0


def run_os_fork():
    pids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            os._exit(child_work())
        pids.append(pid)
    bad = 0
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status):
            out(f"child {pid} status {status:#x}")
            bad += 1
    return len(pids), bad


def run_multiprocessing():
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        results = pool.map(child_work, range(8))
    return len(results), sum(1 for r in results if r)


class _Traced:
    """A dataset whose items report, from the worker, whether it is traced."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        steps(10)
        return (os.getpid(), 1 if fvbpf.attached() else 0)


def run_dataloader():
    import torch.utils.data as tud
    loader = tud.DataLoader(_Traced(), batch_size=2, num_workers=2,
                            multiprocessing_context="fork",
                            collate_fn=lambda b: b)
    workers, bad = set(), 0
    for _epoch in range(2):
        for batch in loader:
            steps(1)
            for pid, traced in batch:
                workers.add(pid)
                bad += traced
    return len(workers), bad


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "os_fork"
    out(f"pid={os.getpid()}")
    deadline = time.monotonic() + 30
    while not fvbpf.attached():
        if time.monotonic() > deadline:
            out("never attached")
            return 1
        steps(1)
        time.sleep(0.01)
    steps(20)
    run = {"os_fork": run_os_fork, "multiprocessing": run_multiprocessing,
           "dataloader": run_dataloader}[mode]
    n, bad = run()
    steps(5)
    out(f"children={n} bad={bad}")
    out("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
