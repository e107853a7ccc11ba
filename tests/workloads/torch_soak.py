# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A live, multi-threaded PyTorch job for the soak test (tests/bats/soak.bats),
with no fvbpf code in it.

  torch_soak.py DIR

The main thread trains a small block with AdamW, one step per
`train_step()` call (a module-level function: `-r py:__main__:train_step`);
a side thread runs operators under a `record_function` scope that stays
open across many of the main thread's steps (the scope began before any
segment that cuts it: the case that crashed --profile-memory's tree).
A reference to `train_step` taken at start must stay the module's
attribute, pickle by reference and keep its kind, whatever attaches.

Protocol, all through files in DIR:
  DIR/ready          written at start: "pid"
  DIR/measure.K      asks for a measurement: the main thread's CPU time per
                     step (median of the next 60 steps) and the checks above,
                     answered in DIR/measured.K as key=value lines
  DIR/stop           ends the job (exit 0; any failure of its own: exit 1)
"""
import inspect
import os
import pickle
import sys
import threading
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)
D, T, B = 32, 8, 4
# Between steps: a step costs about 1 ms of CPU; paced so, the job takes
# about a tenth of a CPU (a third with 2 ms) through the minutes the soak
# runs beside other test files, and still steps a hundred times a second.
PACE_S = 0.008
MEASURE_STEPS = 60


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        with torch.profiler.record_function("soak_block"):
            x = x + self.fc2(F.gelu(self.fc1(self.ln(x))))
        return self.head(x.mean(dim=1))


model = Block()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(B, T, D)
y = torch.randint(0, 4, (B,))


def train_step():
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


side_errors = []
stop = threading.Event()


def side():
    """Operators under a scope that outlives many steps of the main thread."""
    a = torch.randn(16, 16)
    try:
        while not stop.is_set():
            with torch.profiler.record_function("soak_side_scope"):
                t_end = time.monotonic() + 0.2
                while time.monotonic() < t_end and not stop.is_set():
                    b = torch.mm(a, a).relu_()
                    a = b / (b.norm() + 1.0)
                    time.sleep(0.010)
    except Exception as e:  # pragma: no cover - reported by the job
        side_errors.append(repr(e))


def checks(ref):
    """The job as it must stay: the same function object, pickled by
    reference, still a plain function."""
    out = {}
    out["same_object"] = int(sys.modules["__main__"].train_step is ref)
    try:
        out["pickles"] = int(pickle.loads(pickle.dumps(ref)) is ref)
    except Exception:
        out["pickles"] = 0
    out["plain_function"] = int(inspect.isfunction(ref) and
                                not inspect.isgeneratorfunction(ref))
    out["side_alive"] = int(side_thread.is_alive())
    out["side_errors"] = len(side_errors)
    return out


def measure(d, k, ref):
    cpu = []
    for _ in range(MEASURE_STEPS):
        c0 = time.thread_time_ns()
        train_step()
        cpu.append(time.thread_time_ns() - c0)
        time.sleep(0.002)
    cpu.sort()
    out = checks(ref)
    out["cpu_us_per_step"] = "%.1f" % (cpu[len(cpu) // 2] / 1e3)
    tmp = os.path.join(d, "measured.%d.tmp" % k)
    with open(tmp, "w") as f:
        for key, val in out.items():
            f.write("%s=%s\n" % (key, val))
    os.rename(tmp, os.path.join(d, "measured.%d" % k))


def main():
    d = sys.argv[1]
    ref = train_step
    for _ in range(3):
        train_step()  # AdamW's state, before anything is measured
    global side_thread
    side_thread = threading.Thread(target=side, name="soak-side", daemon=True)
    side_thread.start()
    with open(os.path.join(d, "ready.tmp"), "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(os.path.join(d, "ready.tmp"), os.path.join(d, "ready"))
    print("pid=%d" % os.getpid(), flush=True)
    k = 0
    while not os.path.exists(os.path.join(d, "stop")):
        if os.path.exists(os.path.join(d, "measure.%d" % k)):
            measure(d, k, ref)
            k += 1
            continue
        train_step()
        time.sleep(PACE_S)
    stop.set()
    side_thread.join(5)
    bad = checks(ref)
    ok = bad["same_object"] and bad["pickles"] and bad["plain_function"] and not side_errors
    print("soak: %s" % " ".join("%s=%s" % kv for kv in bad.items()), flush=True)
    sys.exit(0 if ok else 1)


side_thread = None
if __name__ == "__main__":
    main()
