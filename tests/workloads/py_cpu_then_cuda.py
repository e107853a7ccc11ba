#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A CPU-only marked job that loads libcudart later, on SIGUSR1.

    py_cpu_then_cuda.py LIBCUDART

Prints pid=, "saw attached" once fvbpf traces it, "cupti=0|1" (libcupti in
its maps) just before loading, "loaded" after ctypes loaded LIBCUDART, then
runs marked steps until SIGTERM.  The fvbpf agent must load no CUPTI while
the job has no CUDA, and must activate once it has.
"""
import os
import signal
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

import ctypes  # noqa: E402

import fvbpf  # noqa: E402

go, stop = [], []
signal.signal(signal.SIGUSR1, lambda *_: go.append(1))
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))


def out(line):
    print(line, flush=True)


def step():
    with fvbpf.profiler_region("training_train_one_step"):
        time.sleep(0.005)


def mapped(name):
    with open("/proc/self/maps") as f:
        return int(any(name in line for line in f))


out(f"pid={os.getpid()}")
while not fvbpf.attached() and not stop:
    time.sleep(0.01)
out("saw attached")
while not go and not stop:
    step()
out(f"cupti={mapped('libcupti')}")
ctypes.CDLL(sys.argv[1])
out("loaded")
while not stop:
    step()
out("done")
