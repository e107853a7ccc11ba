# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A CUDA job with neither fvbpf markers nor torch: calls the toolkit's
libcudart (cudaMalloc, error 35 without a GPU, yet entered) every
10 ms until killed.  Prints pid= first."""
import ctypes
import os
import sys
import time

rt = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "/usr/local/cuda/lib64/libcudart.so.13")
p = ctypes.c_void_p()
print("pid=%d" % os.getpid(), flush=True)
while True:
    rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(4096))
    time.sleep(0.01)
