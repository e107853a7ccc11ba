# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Threads for `fvbpf dump` to find (tests/bats/dump.bats), CPython 3.10+,
no torch, no fvbpf code:

  python3 dump_threads.py [--hostile | --regions] [--workers]

- the main thread sleeps in blocked_main() (the line marked MAIN-LINE);
- a Python thread named "py_waiter" waits on an Event in waiter() (the
  line marked WAITER-LINE);
- a native thread named "native_sleeper", started by pthread_create on
  libc's sleep() through ctypes, sleeps with no Python thread state;
- --hostile: the main thread's innermost function and its file are named
  with an escape sequence, a forged "fvbpf:" line, a bidi override and a
  C1 control (the code object renamed, as a job could).
- --regions: the main thread blocks inside two functions decorated with
  fvbpf's @profile_region (the package of this source tree: python/),
  "training_train_one_step" around "training_forward".
- --workers: a forked worker and a spawned one (multiprocessing), each
  sleeping in worker_sleep(); their PIDs in the "workers=" line.
Prints "pid=PID" once all three are in place, then runs until killed.
"""
import ctypes
import ctypes.util
import os
import sys
import threading
import time


def waiter(ev, named):
    # Python names no OS thread before 3.14: the kernel's name, for the test
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.prctl(15, b"py_waiter")  # PR_SET_NAME
    named.set()
    ev.wait()  # WAITER-LINE


def native_sleeper():
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    tid = ctypes.c_ulong()
    sleep = ctypes.cast(libc.sleep, ctypes.c_void_p)
    if libc.pthread_create(ctypes.byref(tid), None, sleep, ctypes.c_void_p(100000)):
        raise OSError("pthread_create failed")
    libc.pthread_setname_np(tid, b"native_sleeper")


def blocked_main():
    while True:
        time.sleep(1000)  # MAIN-LINE


HOSTILE_NAME = "evil\x1b[2J\nfvbpf: forged\u202e\x9b"
HOSTILE_FILE = "/tmp/\x1b]0;title\x07bad\u202e.py"


def hostile(fn):
    code = fn.__code__
    kw = {"co_name": HOSTILE_NAME, "co_filename": HOSTILE_FILE}
    if sys.version_info >= (3, 11):
        kw["co_qualname"] = HOSTILE_NAME
    fn.__code__ = code.replace(**kw)
    return fn


def in_regions():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "python"))
    import fvbpf

    @fvbpf.profile_region("training_forward")
    def forward():
        blocked_main()

    @fvbpf.profile_region("training_train_one_step")
    def step():
        forward()

    return step


def worker_sleep():
    time.sleep(100000)


def start_workers():
    import multiprocessing
    procs = [multiprocessing.get_context(m).Process(target=worker_sleep, daemon=True)
             for m in ("fork", "spawn")]
    for p in procs:
        p.start()
    print("workers=%s" % ",".join(str(p.pid) for p in procs), flush=True)


def main():
    ev, named = threading.Event(), threading.Event()
    threading.Thread(target=waiter, args=(ev, named), name="py_waiter", daemon=True).start()
    # find_library runs ldconfig in a child: named, the child is gone (a dump
    # that found it listed it as exited, a warning before the verdict)
    named.wait()
    native_sleeper()
    run = hostile(blocked_main) if "--hostile" in sys.argv else blocked_main
    if "--regions" in sys.argv:
        run = in_regions()
    if "--workers" in sys.argv:
        start_workers()
    print("pid=%d" % os.getpid(), flush=True)
    run()


if __name__ == "__main__":
    main()
