# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""--with-stack on CUDA launches and region begins, no torch: libcudart's
cudaLaunchKernel called through ctypes (error 35 without a GPU, yet
entered) from a known line inside a fvbpf profiler_region opened at a
known line ("# @NAME" markers; tests/bats/pystack.bats reads them).

  py_launch.py CUDART STEPS   print pid=, wait for SIGUSR1, run STEPS
                              steps, print done, idle until SIGTERM
"""
import ctypes
import os
import signal
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))
from fvbpf import profiler_region  # noqa: E402


class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


rt = ctypes.CDLL(sys.argv[1])
rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.c_void_p, ctypes.c_size_t,
                                ctypes.c_void_p]


def launch():
    return rt.cudaLaunchKernel(0x1000, dim3(1, 1, 1), dim3(32, 1, 1), None, 0, None)  # @launch


def step():
    with profiler_region("training_forward"):  # @region
        launch()


go = []
signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
print("pid=%d" % os.getpid(), flush=True)
for _ in range(3000):
    if go:
        break
    time.sleep(0.01)
for _ in range(int(sys.argv[2])):
    step()
    time.sleep(0.02)
print("done", flush=True)
while True:
    time.sleep(0.1)
