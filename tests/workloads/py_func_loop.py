# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A plain Python loop with no markers and no torch, for -r py:MODULE:QUALNAME.

  py_func_loop.py DIR N
    prints "pid=P", then idles in Python (sleeping 10 ms at a time) until
    DIR/go exists, then calls Trainer.training_step exactly N times (and the
    module function helper() 2N times, a static and a class method once
    each), prints "done calls=N" and exits.  --subinterp (after N): create a
    sub-interpreter first.
"""
import os
import sys
import time


def helper(i):
    return i * 2


class Trainer:
    def training_step(self, i):
        # Nested: helper() calls inside the step are not segments of their own.
        return helper(i) + helper(i + 1)

    @staticmethod
    def static_step():
        return 0

    @classmethod
    def class_step(cls):
        return cls.__name__


def main():
    run_dir, n = sys.argv[1], int(sys.argv[2])
    if "--subinterp" in sys.argv:
        # A second interpreter in the process: the shim refuses it.
        try:
            import _interpreters as si
        except ImportError:
            import _xxsubinterpreters as si
        global SUB
        SUB = si.create()  # kept: an unreferenced one is destroyed at once
    print("pid=%d" % os.getpid(), flush=True)
    while not os.path.exists(os.path.join(run_dir, "go")):
        time.sleep(0.01)
    t = Trainer()
    total = 0
    for i in range(n):
        total += t.training_step(i)
    Trainer.static_step()
    Trainer.class_step()
    print("done calls=%d total=%d" % (n, total), flush=True)


if __name__ == "__main__":
    main()
