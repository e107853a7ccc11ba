# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""The "run DIR STEPS" mode of the torch workloads, for a BATS test: print
pid=, wait for DIR/go, run STEPS steps 50 ms apart, write DIR/done, then
stay (up to two minutes) until DIR/exit, so that fvbpf can detach first."""
import os
import time


def run_steps(d, steps, step, *lines):
    """@lines: more lines to print after pid= (before the wait)."""
    print("pid=%d" % os.getpid(), flush=True)
    for line in lines:
        print(line, flush=True)
    while not os.path.exists(os.path.join(d, "go")):
        time.sleep(0.05)
    for _ in range(steps):
        step()
        time.sleep(0.05)
    open(os.path.join(d, "done"), "w").close()
    for _ in range(2400):
        if os.path.exists(os.path.join(d, "exit")):
            break
        time.sleep(0.05)
