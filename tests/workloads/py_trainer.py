#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Python test workload: a fake training loop marked with fvbpf regions.

The Python twin of the C trainer workload, with the same output, so that the
tests can attach fvbpf to either and compare its counts with the ones printed
here.  Only the standard library is needed; the fvbpf package is taken from
this source tree.

Output, one flushed line each:
    pid=<pid>
    lib=<path of libfvbpf.so, or none>
    counts train_one_step=N dataloader=N forward=N backward=N optimizer=N \
callbacks=N
    attached=<0|1>
and with --idle, attached=<0|1> again every 100 ms until SIGTERM/SIGINT.

Exit status: 0, or 2 when --wait-signal got no SIGUSR1 within 30 s.
"""

import argparse
import os
import signal
import sys
import time

# <repo>/tests/workloads/py_trainer.py -> <repo>/python
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from fvbpf import (attached, library_path, profile_region,  # noqa: E402
                   profiler_region)

SIGNAL_TIMEOUT_S = 120.0  # a busy machine can take a minute to start fvbpf
IDLE_PERIOD_S = 0.1

counts = dict.fromkeys(("train_one_step", "dataloader", "forward", "backward",
                        "optimizer", "callbacks"), 0)


def out(line):
    print(line, flush=True)


@profile_region("training_dataloader")
def load_batch(nap):
    counts["dataloader"] += 1
    time.sleep(nap)


class Optimizer:
    @profile_region("training_optimizer")
    def step(self, nap):
        counts["optimizer"] += 1
        time.sleep(nap)


def train_one_step(optimizer, step_s):
    nap = step_s / 6  # six inner regions share the step time
    with profiler_region("profiler_region_training_train_one_step"):
        counts["train_one_step"] += 1
        load_batch(nap)
        with profiler_region("Training_Forward"):  # odd case on purpose
            counts["forward"] += 1
            time.sleep(nap)
        with profiler_region("training_backward"):
            counts["backward"] += 1
            time.sleep(nap)
        optimizer.step(nap)
        with profiler_region("training_callbacks"):
            counts["callbacks"] += 1
            time.sleep(nap)
        with profiler_region("not_a_registered_region"):
            time.sleep(nap)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--wait-signal", action="store_true",
                    help="start the steps only once SIGUSR1 arrives")
    ap.add_argument("--step-ms", type=float, default=20.0)
    ap.add_argument("--wait-attached", action="store_true",
                    help="start the steps once fvbpf.attached() is true")
    ap.add_argument("--idle", action="store_true",
                    help="after the steps, report attached= every 100 ms "
                         "until SIGTERM/SIGINT")
    ap.add_argument("--hang-in-region", action="store_true",
                    help="after the steps, stay inside a step's forward "
                         "region until SIGTERM/SIGINT, then leave it")
    args = ap.parse_args()

    # Signal set-up comes before the pid line: whoever reads the pid may
    # signal at once.  SIGUSR1 stays blocked and is taken with sigtimedwait(),
    # so it is neither lost before the wait nor fatal after it.
    if args.wait_signal:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    stop = []
    if args.idle or args.hang_in_region:
        def on_stop(signum, frame):
            stop.append(signum)
        signal.signal(signal.SIGTERM, on_stop)
        signal.signal(signal.SIGINT, on_stop)

    out("pid=%d" % os.getpid())
    out("lib=%s" % (library_path() or "none"))

    if args.wait_signal and \
            signal.sigtimedwait({signal.SIGUSR1}, SIGNAL_TIMEOUT_S) is None:
        out("no signal")
        return 2

    if args.wait_attached:
        deadline = time.monotonic() + SIGNAL_TIMEOUT_S
        while not attached():
            if time.monotonic() > deadline:
                out("never attached")
                return 2
            time.sleep(0.01)
        out("saw attached")

    optimizer = Optimizer()
    for _ in range(args.steps):
        train_one_step(optimizer, args.step_ms / 1000.0)

    out("counts " + " ".join("%s=%d" % kv for kv in counts.items()))
    out("attached=%d" % attached())

    if args.hang_in_region:
        # fvbpf attaches while both regions are open: it must learn that
        # from the library's name stack when they end.
        with profiler_region("training_train_one_step"):
            with profiler_region("training_forward"):
                out("hanging inside a region")
                while not stop:
                    time.sleep(IDLE_PERIOD_S)
        out("attached=%d" % attached())
        return 0

    # time.sleep() resumes after a signal handler (PEP 475), so a stop
    # request is seen within one period.
    while args.idle and not stop:
        time.sleep(IDLE_PERIOD_S)
        if not stop:
            out("attached=%d" % attached())
    return 0


if __name__ == "__main__":
    sys.exit(main())
