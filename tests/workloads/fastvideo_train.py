# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A CPU training loop that uses the released FastVideo's own region
profiler (fastvideo/profiler.py from the fastvideo 0.2.1 wheel, on
PYTHONPATH without the package's heavy __init__) in its three call styles,
and no fvbpf code at all:

- ``@profile_region("profiler_region_training_train_one_step")`` on a
  pipeline method (the pipeline keeps ``self.profiler_controller``),
- ``self.profiler_controller.region("profiler_region_training_forward")``,
- module-level ``profiler_region("profiler_region_training_backward")``.

  fastvideo_train.py DIR [options]
    prints "pid=N" once set up, then runs steps until DIR/stop exists (or
    --steps), and prints "done steps=N" at the end.
  --steps N        stop after N steps
  --trace-dir D    turn FastVideo's own torch profiler on (needs
                   FASTVIDEO_TORCH_PROFILE_REGIONS) and stop it at the end
  --import-late    import fastvideo.profiler only once DIR/import exists
                   (steps before that run without regions)
  --block-sleep S  after DIR/ready, block the main thread S seconds in
                   time.sleep() first
  --block-c S      ... in a C call (libc sleep through ctypes), first
  --workers N      a DataLoader with N fork workers feeds the steps (each
                   item fetched inside profiler_region("..._dataloader"))
  --unknown        also enter a region FastVideo does not know
  --py-step        also call step_marker() (a plain function) once a step,
                   for -r py:__main__:step_marker
"""
import os
import sys
import time


def arg(name, default=None, conv=str):
    if name in sys.argv:
        i = sys.argv.index(name)
        return conv(sys.argv[i + 1])
    return default


DIR = sys.argv[1]
STEPS = arg("--steps", 0, int)
TRACE_DIR = arg("--trace-dir")
WORKERS = arg("--workers", 0, int)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.utils.data  # noqa: E402

torch.set_num_threads(1)
torch.manual_seed(0)


def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.01)


def step_marker():
    return 1


class Pipeline:
    def __init__(self, fv):
        self.fv = fv
        # FastVideo's pipelines keep a controller, disabled unless a trace
        # directory is given.
        self.profiler_controller = fv.get_or_create_profiler(TRACE_DIR)
        self.model = nn.Sequential(nn.Linear(24, 40), nn.ReLU(), nn.Linear(40, 8))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)

    def train_one_step(self, x):
        with self.profiler_controller.region("profiler_region_training_forward"):
            loss = self.model(x).square().mean()
        with self.fv.profiler_region("profiler_region_training_backward"):
            loss.backward()
        if "--unknown" in sys.argv:
            with self.profiler_controller.region("profiler_region_not_registered"):
                torch.zeros(4).add_(1)
        self.opt.step()
        self.opt.zero_grad()
        if "--py-step" in sys.argv:
            step_marker()
        return loss


def decorate(fv):
    # Decorated at class level, as FastVideo's pipelines are.
    Pipeline.train_one_step = fv.profile_region(
        "profiler_region_training_train_one_step")(Pipeline.train_one_step)


class Batches(torch.utils.data.Dataset):
    """Each item fetched inside a FastVideo region, in the worker: a forked
    child runs the wrapped profiler code too."""

    def __init__(self, fv):
        self.fv = fv
        self.data = torch.randn(64, 24)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        with self.fv.profiler_region("profiler_region_training_dataloader"):
            return self.data[i]


def batches(fv):
    if WORKERS:
        from torch.utils.data import DataLoader
        data = Batches(fv)
        while True:
            for x in DataLoader(data, batch_size=8, num_workers=WORKERS,
                                multiprocessing_context="fork"):
                yield x
    x = torch.randn(8, 24)
    while True:
        yield x


def main():
    fv = None
    if "--import-late" not in sys.argv:
        import fastvideo.profiler as fv
        decorate(fv)
    print("pid=%d" % os.getpid(), flush=True)
    if arg("--block-sleep"):
        print("blocking", flush=True)
        time.sleep(arg("--block-sleep", 0, float))
    if arg("--block-c"):
        import ctypes
        print("blocking", flush=True)
        ctypes.CDLL(None).sleep(int(arg("--block-c", 0, float)))
    print("stepping", flush=True)
    pipe = None
    done = 0
    for x in batches(fv):
        if fv is None:
            if os.path.exists(os.path.join(DIR, "import")):
                import fastvideo.profiler as fv
                decorate(fv)
            else:
                time.sleep(0.01)
                continue
        if pipe is None:
            pipe = Pipeline(fv)
        pipe.train_one_step(x)
        done += 1
        if (STEPS and done >= STEPS) or os.path.exists(os.path.join(DIR, "stop")):
            break
    if pipe is not None and TRACE_DIR:
        pipe.profiler_controller.stop()
    print("done steps=%d" % done, flush=True)


if __name__ == "__main__":
    main()
