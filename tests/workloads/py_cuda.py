#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Python test workload: fvbpf regions around real libcudart calls.

The Python twin of the C workload cuda_trainer: libcudart.so.13 is loaded
with ctypes and called inside the regions, so that the tests can attach
fvbpf and compare the CUDA calls in its segments with the counts printed
here.  Without a GPU every call returns 35 (cudaErrorInsufficientDriver) but
is entered, which is what fvbpf's probes see.  Only the standard library is
needed; the fvbpf package is taken from this source tree.

Each step:
    training_train_one_step
      training_forward
        cudaMalloc(1048576) cudaMemcpy(4096, host to device) cudaMemset(7, 2048)
      cudaDeviceSynchronize cudaFree
Outside every region, before the first step and after each step: one of each.

libcudart is --cudart PATH, else $CUDA_HOME/lib64/libcudart.so.13, else
/usr/local/cuda/lib64/libcudart.so.13.

Output, one flushed line each:
    pid=<pid>
    lib=<path of libfvbpf.so, or none>
    cudart=<path of libcudart>
    (with --wait-signal: "no signal" and exit 2 if no SIGUSR1 within 30 s)
    args malloc=1048576 memcpy=4096 memset=2048
    ret=<what the first cudaMalloc returned: 35 without a GPU>
    counts steps=N cudaMalloc=N cudaMemcpy=N cudaMemset=N \
cudaDeviceSynchronize=N cudaFree=N
    outside cudaMalloc=N cudaMemcpy=N cudaMemset=N cudaDeviceSynchronize=N \
cudaFree=N
    attached=<0|1>
and with --idle, attached=<0|1> again every 100 ms until SIGTERM/SIGINT.

Exit status: 0; 2 when --wait-signal got no SIGUSR1 within 30 s; 3 when
libcudart cannot be loaded ("cudart=none ...").
"""

import argparse
import ctypes
import os
import signal
import sys
import time

# <repo>/tests/workloads/py_cuda.py -> <repo>/python
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from fvbpf import attached, library_path, profiler_region  # noqa: E402

SIGNAL_TIMEOUT_S = 30.0
IDLE_PERIOD_S = 0.1

MALLOC_BYTES = 1 << 20
MEMCPY_BYTES = 4096
MEMSET_BYTES = 2048
CUDA_MEMCPY_HOST_TO_DEVICE = 1
CUDA_SUCCESS = 0

APIS = ("cudaMalloc", "cudaMemcpy", "cudaMemset", "cudaDeviceSynchronize",
        "cudaFree")

inside = dict.fromkeys(APIS, 0)
outside = dict.fromkeys(APIS, 0)


def out(line):
    print(line, flush=True)


def default_cudart():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    return os.path.join(home, "lib64", "libcudart.so.13")


class Runtime:
    """The few libcudart calls, each counted in the table it is given."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        vp, sz, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
        protos = {
            "cudaMalloc": [ctypes.POINTER(vp), sz],
            "cudaMemcpy": [vp, vp, sz, i],
            "cudaMemset": [vp, i, sz],
            "cudaDeviceSynchronize": [],
            "cudaFree": [vp],
        }
        self.fn = {}
        for name, argtypes in protos.items():
            f = getattr(lib, name)
            f.argtypes = argtypes
            f.restype = ctypes.c_int
            self.fn[name] = f
        self.host = ctypes.create_string_buffer(MEMCPY_BYTES)
        self.first_ret = None

    def call(self, table, name, *args):
        table[name] += 1
        return self.fn[name](*args)

    def alloc(self, table):
        ptr = ctypes.c_void_p()
        ret = self.call(table, "cudaMalloc", ctypes.byref(ptr), MALLOC_BYTES)
        if self.first_ret is None:
            self.first_ret = ret
        return ptr if ret == CUDA_SUCCESS else ctypes.c_void_p()

    def copy_set(self, table, ptr):
        self.call(table, "cudaMemcpy", ptr, self.host, MEMCPY_BYTES,
                  CUDA_MEMCPY_HOST_TO_DEVICE)
        self.call(table, "cudaMemset", ptr, 7, MEMSET_BYTES)

    def sync_free(self, table, ptr):
        self.call(table, "cudaDeviceSynchronize")
        self.call(table, "cudaFree", ptr)

    def all_calls(self, table):
        ptr = self.alloc(table)
        self.copy_set(table, ptr)
        self.sync_free(table, ptr)


def train_one_step(rt, step_s):
    with profiler_region("training_train_one_step"):
        with profiler_region("training_forward"):
            ptr = rt.alloc(inside)
            rt.copy_set(inside, ptr)
            time.sleep(step_s)
        rt.sync_free(inside, ptr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--wait-signal", action="store_true",
                    help="start the calls only once SIGUSR1 arrives")
    ap.add_argument("--step-ms", type=float, default=10.0)
    ap.add_argument("--cudart", default=default_cudart(),
                    help="path of libcudart.so.13")
    ap.add_argument("--idle", action="store_true",
                    help="after the steps, report attached= every 100 ms "
                         "until SIGTERM/SIGINT")
    args = ap.parse_args()

    # As in py_trainer.py: signal set-up before the pid line, SIGUSR1 kept
    # blocked and taken with sigtimedwait().
    if args.wait_signal:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    stop = []
    if args.idle:
        def on_stop(signum, frame):
            stop.append(signum)
        signal.signal(signal.SIGTERM, on_stop)
        signal.signal(signal.SIGINT, on_stop)

    out("pid=%d" % os.getpid())
    out("lib=%s" % (library_path() or "none"))
    try:
        rt = Runtime(args.cudart)
    except (OSError, AttributeError) as e:
        out("cudart=none %s" % e)
        return 3
    out("cudart=%s" % args.cudart)

    if args.wait_signal and \
            signal.sigtimedwait({signal.SIGUSR1}, SIGNAL_TIMEOUT_S) is None:
        out("no signal")
        return 2

    rt.all_calls(outside)
    out("args malloc=%d memcpy=%d memset=%d"
        % (MALLOC_BYTES, MEMCPY_BYTES, MEMSET_BYTES))
    out("ret=%d" % rt.first_ret)

    steps = 0
    for _ in range(args.steps):
        train_one_step(rt, args.step_ms / 1000.0)
        steps += 1
        rt.all_calls(outside)

    out("counts steps=%d " % steps
        + " ".join("%s=%d" % (k, inside[k]) for k in APIS))
    out("outside " + " ".join("%s=%d" % (k, outside[k]) for k in APIS))
    out("attached=%d" % attached())

    while args.idle and not stop:
        time.sleep(IDLE_PERIOD_S)
        if not stop:
            out("attached=%d" % attached())
    return 0


if __name__ == "__main__":
    sys.exit(main())
