#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""fvbpf killed at random points of `attach --inject`: every target survives.

Rounds of PARALLEL busy targets (inject_target --mode tick --count 150
--threads 16), each with its own `fvbpf attach --inject`, killed with a
random one of SIGKILL, SIGTERM, SIGINT a random 5-70 ms after it started.
Every target must exit 0 after exactly its ticks.  After each round, once
no new process named fvbpf-inject is left (bounded wait), no copy of the
library made for these targets may remain in /dev/shm.

Prints one line per kill and the seed (FVBPF_KILL_SEED replays a run);
exit status 1 on any failure, with the reasons.
"""
import argparse
import glob
import os
import random
import signal
import subprocess
import sys
import threading
import time

SIGS = [("KILL", signal.SIGKILL), ("TERM", signal.SIGTERM), ("INT", signal.SIGINT)]
TICKS = 150


def comm_pids(name):
    out = set()
    for d in glob.glob("/proc/[0-9]*"):
        try:
            with open(d + "/comm") as f:
                if f.read().strip() == name:
                    out.add(int(d[6:]))
        except OSError:
            pass
    return out


def shm_copies():
    return set(glob.glob("/dev/shm/.fvbpf-inject-*.so"))


def wait_line(path, prefix, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith(prefix):
                        return line.strip()
        except OSError:
            pass
        time.sleep(0.005)
    return None


def ticks_ok(path):
    lines = [l.rstrip("\n") for l in open(path)]
    ticks = [l for l in lines if l.startswith("tick")]
    if ticks != ["tick %d" % i for i in range(TICKS)]:
        odd = next((t for i, t in enumerate(ticks) if t != "tick %d" % i), None)
        return "ticks differ: %d lines, first odd %r" % (len(ticks), odd)
    if "done ticks=%d sigusr1=0 errors=0" % TICKS not in lines:
        return "no done line"
    if "threads ok 16" not in lines:
        return "no 'threads ok 16'"
    bad = [l for l in lines if "ERROR" in l]
    if bad:
        return "errors: %r" % bad
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fvbpf", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--parallel", type=int, default=3)
    ap.add_argument("--min-ms", type=float, default=5)
    ap.add_argument("--max-ms", type=float, default=70)
    a = ap.parse_args()

    seed = int(os.environ.get("FVBPF_KILL_SEED") or time.time_ns() % 1000000007)
    rng = random.Random(seed)
    print("seed %d (FVBPF_KILL_SEED=%d replays it)" % (seed, seed))
    os.makedirs(a.dir, exist_ok=True)
    helpers_before = comm_pids("fvbpf-inject")
    shm_before = shm_copies()
    failures = []
    kills = 0
    t_start = time.monotonic()

    for rnd in range(a.rounds):
        pairs = []
        for k in range(a.parallel):
            log = os.path.join(a.dir, "target-%d-%d.log" % (rnd, k))
            t = subprocess.Popen([a.target, "--mode", "tick", "--count", str(TICKS),
                                  "--threads", "16"], stdout=open(log, "w"),
                                 stderr=subprocess.STDOUT)
            pairs.append({"log": log, "target": t})
        for p in pairs:
            line = wait_line(p["log"], "pid=", 30)
            if not line:
                failures.append("round %d: a target printed no pid" % rnd)
                p["pid"] = None
                continue
            p["pid"] = int(line[4:])
        # fvbpf for each, each killed by its own thread at its own random
        # time after it started (exec'd)
        def run_pair(p, out):
            p["fv"] = subprocess.Popen([a.fvbpf, "attach", "--inject", "-p", str(p["pid"]),
                                        "--window", "0.2", "-d", "2", "-o", out],
                                       stdout=subprocess.DEVNULL, stderr=open(p["err"], "w"))
            t0 = time.monotonic()
            time.sleep(p["delay"])
            p["late_ms"] = (time.monotonic() - t0) * 1000
            try:
                p["fv"].send_signal(p["sig"][1])
            except ProcessLookupError:
                pass

        threads = []
        for k, p in enumerate(pairs):
            if not p["pid"]:
                continue
            out = os.path.join(a.dir, "fvbpf-%d-%d" % (rnd, k))
            p["err"] = out + ".err"
            p["sig"] = rng.choice(SIGS)
            p["delay"] = rng.uniform(a.min_ms, a.max_ms) / 1000.0
            th = threading.Thread(target=run_pair, args=(p, out))
            th.start()
            threads.append(th)
        for th in threads:
            th.join()
            kills += 1
        for k, p in enumerate(pairs):
            if not p.get("fv"):
                continue
            try:
                fvrc = p["fv"].wait(timeout=30)
            except subprocess.TimeoutExpired:
                p["fv"].kill()
                fvrc = p["fv"].wait()
                failures.append("round %d pair %d: fvbpf still ran 30 s after SIG%s" %
                                (rnd, k, p["sig"][0]))
            p["fvrc"] = fvrc
        for k, p in enumerate(pairs):
            try:
                rc = p["target"].wait(timeout=60)
            except subprocess.TimeoutExpired:
                p["target"].kill()
                rc = p["target"].wait()
                failures.append("round %d pair %d: target %s hung (killed after 60 s)" %
                                (rnd, k, p.get("pid")))
            why = None
            if rc != 0:
                why = "target exit status %d%s" % (rc, " (SIGSEGV)" if rc == -11 else "")
            else:
                why = ticks_ok(p["log"])
            if p.get("fv"):
                print("round %d pair %d: SIG%s at %.1f ms (asked %.1f), fvbpf %s, target %s: %s" %
                      (rnd, k, p["sig"][0], p["late_ms"], p["delay"] * 1000, p["fvrc"], rc,
                       why or "ok"))
            if why:
                err = ""
                try:
                    err = open(p["err"]).read().strip().replace("\n", " | ")[:400]
                except OSError:
                    pass
                failures.append("round %d pair %d (SIG%s after %.1f ms): %s; fvbpf said: %s" %
                                (rnd, k, p["sig"][0], p["late_ms"], why, err))
        # the helpers that finish an injection fvbpf left: bounded wait
        end = time.monotonic() + 30
        while comm_pids("fvbpf-inject") - helpers_before and time.monotonic() < end:
            time.sleep(0.02)
        left = comm_pids("fvbpf-inject") - helpers_before
        if left:
            failures.append("round %d: fvbpf-inject still running 30 s on: %s" %
                            (rnd, sorted(left)))
        pids = {p["pid"] for p in pairs if p.get("pid")}
        stale = sorted(f for f in shm_copies() - shm_before
                       if int(os.path.basename(f).split("-")[2]) in pids)
        if stale:
            failures.append("round %d: library copies left in /dev/shm: %s" % (rnd, stale))
            for f in stale:
                try:
                    os.unlink(f)  # the next rounds see only their own
                except OSError:
                    pass

    print("%d kills in %.1f s" % (kills, time.monotonic() - t_start))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
