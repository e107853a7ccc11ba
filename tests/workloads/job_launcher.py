#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A torchrun-like launcher for the process-tree tests: starts rank workers
with RANK/LOCAL_RANK/WORLD_SIZE in their environment, as torchrun does.

  job_launcher.py DIR [--torch PY] [--steps N] [--no-late] [--no-restart]
                      [--count K --idle]

  rank 0: the C marker trainer; rank 1: the Python marker trainer,
  restarted once after it exits (as elastic launch restarts a worker);
  rank 2: torch_train.py (no markers) under PY with a fork DataLoader of
  2 workers, when --torch is given; rank 3: the C marker trainer, started
  2 s after DIR/go appears (the test writes it once fvbpf traces the job).
  Marker workers start their N steps once fvbpf.attached() is true, so the
  steps they print are the ones fvbpf sees.  Each worker's output goes to
  DIR/rank<R>[.restart<K>].log.  Exit status: 0 when every worker exited 0.

  --count K --idle: K idle C marker workers (RANK 0..K-1) that stay until
  DIR/exit appears (for the process limit test).

  --markers N: the launcher itself maps the fvbpf markers (as torchrun maps
  libtorch_cpu) and, once fvbpf is attached, runs N training_train_one_step
  regions of its own, then prints "launcher steps=N".  It has no RANK.
"""
import argparse
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("BUILD", os.path.join(REPO, "build"))
if not os.path.isabs(BUILD):
    BUILD = os.path.join(REPO, BUILD)
C_TRAINER = os.path.join(BUILD, "tests", "marker_trainer")
PY_TRAINER = os.path.join(HERE, "py_trainer.py")
TORCH_TRAIN = os.path.join(HERE, "torch_train.py")


def wait_file(path, timeout):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def start(d, rank, argv, restart=0, world=4):
    env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
               LOCAL_WORLD_SIZE=str(world), GROUP_RANK="0")
    name = "rank%d%s.log" % (rank, ".restart%d" % restart if restart else "")
    log = open(os.path.join(d, name), "w")
    return subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)


def launcher_steps(n):
    """--markers N: the launcher's own regions, in a thread, once attached."""
    sys.path.insert(0, os.path.join(REPO, "python"))
    import fvbpf

    def run():
        deadline = time.monotonic() + 60
        while not fvbpf.attached():
            if time.monotonic() > deadline:
                print("launcher never attached", flush=True)
                return
            time.sleep(0.01)
        for _ in range(n):
            with fvbpf.profiler_region("profiler_region_training_train_one_step"):
                time.sleep(0.02)
        print("launcher steps=%d" % n, flush=True)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--torch")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--no-late", action="store_true")
    ap.add_argument("--no-restart", action="store_true")
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--idle", action="store_true")
    ap.add_argument("--tag", help="ignored: a string for --match to find")
    ap.add_argument("--markers", type=int, default=0)
    a = ap.parse_args()
    d = a.dir
    own = launcher_steps(a.markers) if a.markers else None
    print("pid=%d" % os.getpid(), flush=True)
    steps = ["--steps", str(a.steps), "--step-ms", "20", "--wait-attached"]
    if a.count:
        procs = [start(d, r, [C_TRAINER, "--steps", "1", "--step-ms", "1", "--idle"],
                       world=a.count) for r in range(a.count)]
        print("started=%d" % len(procs), flush=True)
        wait_file(os.path.join(d, "exit"), 600)
        for p in procs:
            p.terminate()
        bad = sum(1 for p in procs if p.wait() not in (0, -15))
        print("bad=%d" % bad, flush=True)
        return 1 if bad else 0
    procs = [start(d, 0, [C_TRAINER] + steps),
             start(d, 1, [sys.executable, PY_TRAINER] + steps)]
    if a.torch:
        td = os.path.join(d, "torch")
        os.makedirs(td, exist_ok=True)
        procs.append(start(d, 2, [a.torch, TORCH_TRAIN, "--workers", "2", "run", td,
                                  str(a.steps + 4)]))
    statuses = []
    late = None
    restarted = a.no_restart
    go_seen = False
    while procs or late is None:
        if not go_seen and os.path.exists(os.path.join(d, "go")):
            go_seen = True
            go_at = time.monotonic()
        if late is None and (a.no_late or (go_seen and time.monotonic() - go_at >= 2)):
            late = True
            if not a.no_late:
                procs.append(start(d, 3, [C_TRAINER] + steps))
        for p in list(procs):
            if p.poll() is None:
                continue
            procs.remove(p)
            statuses.append(p.returncode)
            # rank 1 dies after its steps: elastic launch starts it again
            if not restarted and p.args[0] == sys.executable and p.args[1] == PY_TRAINER:
                restarted = True
                procs.append(start(d, 1, [sys.executable, PY_TRAINER] + steps, restart=1))
        time.sleep(0.02)
    if own:
        own.join(60)
    print("statuses=%s" % ",".join(map(str, statuses)), flush=True)
    return 0 if all(s == 0 for s in statuses) else 1


if __name__ == "__main__":
    sys.exit(main())
