# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""NCCL collectives with known arguments, no torch: the CUDA wheel's
libnccl called through ctypes inside a fvbpf profiler_region (without a
GPU each call returns ncclInvalidArgument at once, its NULL communicator
refused, yet it is entered: tests/bats/collectives.bats).

  py_nccl.py LIBNCCL STEPS   print pid=, wait for SIGUSR1, run STEPS
                             steps, print done with the return codes,
                             idle until SIGTERM

Each step: ncclAllReduce of 1000 float32 (sum), ncclAllGather of 256
int64, ncclReduceScatter of 64 bfloat16 (max), ncclBroadcast of 10
float64 from root 0, ncclSend of 5 int8 to peer 1.
"""
import ctypes
import os
import signal
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))
from fvbpf import profiler_region  # noqa: E402

nccl = ctypes.CDLL(sys.argv[1])
P, N = ctypes.c_void_p, ctypes.c_size_t
SEND, RECV = P(0x1000), P(0x2000)


def step():
    with profiler_region("training_forward"):
        return [nccl.ncclAllReduce(SEND, RECV, N(1000), 7, 0, None, None),
                nccl.ncclAllGather(SEND, RECV, N(256), 4, None, None),
                nccl.ncclReduceScatter(SEND, RECV, N(64), 9, 2, None, None),
                nccl.ncclBroadcast(SEND, RECV, N(10), 8, 0, None, None),
                nccl.ncclSend(SEND, N(5), 0, 1, None, None)]


go = []
signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
print("pid=%d" % os.getpid(), flush=True)
for _ in range(3000):
    if go:
        break
    time.sleep(0.01)
rets = set()
for _ in range(int(sys.argv[2])):
    rets.update(step())
    time.sleep(0.02)
print("done rets=%s" % ",".join(map(str, sorted(rets))), flush=True)
while True:
    time.sleep(0.1)
