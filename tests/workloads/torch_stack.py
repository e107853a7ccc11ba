# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Torch operators called from known lines through known kinds of Python
functions (plain, nested, lambda, method, decorated, generator, an
nn.Module, one function from two callers), for --with-stack.  Each operator
line carries a marker comment "# @op:NAME": the checker reads the lines
from this file.  Two worker
threads run their own operators inside each step ("threads" argument).

  torch_stack.py [threads] oracle          one step under torch.profiler
        (with_stack=True); prints JSON: per operator, in order, its thread
        and the Python frames torch saw around it (file, line, function)
  torch_stack.py [threads] oracle_groups N   the same step under
        torch.profiler(with_stack=True, verbose: FunctionEvent.stack filled);
        prints JSON: key_averages(group_by_stack_n=N) as [name, stack, count]
  torch_stack.py [threads] run DIR STEPS   print pid=, wait for DIR/go, run
        STEPS steps (record_function "stack_step" each), write DIR/done
  torch_stack.py time DIR ROUNDS STEPS     as torch_train.py time: rounds of
        steps; round 1 under torch.profiler(with_stack=True) in process
"""
import functools
import json
import os
import sys
import threading
import time

import torch

torch.set_num_threads(1)
THREADS = len(sys.argv) > 1 and sys.argv[1] == "threads"
if THREADS:
    del sys.argv[1]
x = torch.ones(8)


def deco(fn):
    @functools.wraps(fn)
    def wrapper(*a):
        return fn(*a)
    return wrapper


def plain(t):
    return torch.add(t, 1)  # @op:plain


def outer(t):
    def inner(u):
        return torch.mul(u, 3)  # @op:inner
    return inner(t)


scale = lambda t: torch.div(t, 2)  # @op:lambda


class Model:
    def method(self, t):
        return torch.sub(t, 5)  # @op:method


@deco
def decorated(t):
    return torch.neg(t)  # @op:decorated


def gen(t):
    yield torch.exp(t)  # @op:generator
    yield torch.abs(t)  # @op:generator2


def shared(t):
    return torch.floor(t)


def via_a(t):  # shared() from two callers: --group-by-stack 2 tells them apart
    return shared(t)


def via_b(t):
    return shared(t)


lin = torch.nn.Linear(8, 8)
m = Model()


def thread_a_work(t):
    return torch.sin(t)  # @op:thread_a


def thread_b_work(t):
    return torch.cos(t)  # @op:thread_b


class Worker(threading.Thread):
    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.go, self.done = fn, threading.Event(), threading.Event()

    def run(self):
        while True:
            self.go.wait()
            self.go.clear()
            with torch.no_grad():
                self.fn(x)
            self.done.set()


workers = [Worker(thread_a_work), Worker(thread_b_work)] if THREADS else []
for w in workers:
    w.start()


def step():
    with torch.no_grad():
        plain(x)
        outer(x)
        scale(x)
        m.method(x)
        decorated(x)
        for _ in gen(x):
            pass
        lin(x)
        via_a(x)
        via_b(x)
        via_b(x)
    for w in workers:
        w.go.set()
    for w in workers:
        w.done.wait()
        w.done.clear()


def named_step():
    with torch.profiler.record_function("stack_step"):
        step()


for _ in range(2):
    named_step()


def torch_frames(prof):
    """Per outermost aten op, in order: its thread (torch's index) and the
    python_function events torch put around it, innermost first."""
    out = []
    for e in prof.events():
        if not e.name.startswith("aten::"):
            continue
        frames, p, outermost = [], e.cpu_parent, True
        while p is not None:
            if p.name.startswith("aten::"):
                outermost = False
                break
            if p.name.startswith("nn.Module: "):  # torch's name for Module.__call__
                frames.append(["nn.Module", 0, p.name])
            elif ".py(" in p.name and not p.name.startswith("<"):
                loc, fn = p.name.split(": ", 1)
                f, line = loc.rsplit("(", 1)
                frames.append([f, int(line.rstrip(")")), fn])
            p = p.cpu_parent
        if outermost:
            out.append({"op": e.name, "thread": e.thread, "frames": frames})
    return out


mode = sys.argv[1] if len(sys.argv) > 1 else "oracle"
if mode == "oracle":
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
        named_step()
    print(json.dumps(torch_frames(prof)))
elif mode == "oracle_groups":
    from torch._C._profiler import _ExperimentalConfig
    from torch.profiler import ProfilerActivity, profile

    # verbose: torch fills each event's stack only then (KinetoEvent's python_stack)
    with profile(activities=[ProfilerActivity.CPU], with_stack=True,
                 experimental_config=_ExperimentalConfig(verbose=True)) as prof:
        named_step()
    print(json.dumps([[a.key, a.stack, a.count]
                      for a in prof.key_averages(group_by_stack_n=int(sys.argv[2]))]))
elif mode == "run":
    from wl_steps import run_steps

    run_steps(sys.argv[2], int(sys.argv[3]), named_step,
              "tids=%s" % ",".join(str(w.native_id) for w in workers))
elif mode == "time":
    d, rounds, steps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    prof_round = int(sys.argv[5]) if len(sys.argv) > 5 else -1
    print("pid=%d" % os.getpid(), flush=True)
    for k in range(rounds):
        while not os.path.exists(os.path.join(d, "go.%d" % k)):
            time.sleep(0.02)
        prof = None
        if k == prof_round:
            from torch.profiler import ProfilerActivity, profile

            prof = profile(activities=[ProfilerActivity.CPU], with_stack=True)
            prof.__enter__()
        times = []
        for _ in range(steps):
            t0 = time.perf_counter_ns()
            named_step()
            times.append(time.perf_counter_ns() - t0)
        if prof is not None:
            prof.__exit__(None, None, None)
        times.sort()
        print("round %d ms_per_step %.3f" % (k, times[len(times) // 2] / 1e6), flush=True)
        open(os.path.join(d, "done.%d" % k), "w").close()
else:
    sys.exit("usage: torch_stack.py [threads] oracle | oracle_groups N | run DIR STEPS | time DIR ROUNDS STEPS")
