#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""GPU check workload: a small deterministic PyTorch training loop on CUDA.

Used by tests/gpu/check.sh on a machine with a GPU.  A fixed-shape MLP
(fp32, TF32 off, fixed batch held on the GPU, SGD with momentum) so that
every step after warm-up launches exactly the same kernels.  Each step ends
with torch.cuda.synchronize() inside the step, so all its kernels finish
inside the step (and inside the fvbpf segment when attached).

Modes (combinable where it makes sense):
    --markers      wrap each step in fvbpf.profiler_region(
                   "training_train_one_step") and the forward pass in
                   "training_forward" (backward and optimizer get their own
                   FastVideo regions too, which check.sh does not enable)
    --wait-signal  print pid=, warm up, print "ready", wait for SIGUSR1,
                   run the measured steps, print the results, then linger
                   until a second SIGUSR1 (or --linger-s) so that an attached
                   fvbpf can collect the last GPU records before exit
    --profile      torch.profiler (CPU+CUDA) around --profile-steps measured
                   steps, in this process only (never together with fvbpf:
                   CUPTI allows one subscriber); counts CUDA kernels per step
                   from the exported Chrome trace (cat == "kernel")

Output, one flushed line each:
    pid=<pid>
    torch=<version> cuda=<version> device=<name>
    ready
    step_ms=<median wall time of a measured step, ms>
    cpu_ms=<median host enqueue time of a measured step (before the
            synchronize), ms>
    torch_kernels_per_step=<n>            (--profile)
    torch_kernels_per_step_list=<n,n,n>   (--profile)
and --result PATH writes all of it as JSON (per-step times, per-name kernel
counts of one profiled step).

Exit status: 0; 2 when --wait-signal got no SIGUSR1 within --signal-timeout;
3 when CUDA is not available; 4 when --markers is given and the fvbpf
library could not be loaded.
"""

import argparse
import collections
import json
import os
import signal
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# Regions: the step and forward are what check.sh traces; backward and
# optimizer are real FastVideo regions it leaves disabled (ignored by fvbpf);
# "training_validation" wraps the priming steps after the signal (also not
# traced: it only lets the in-process agent wake up before the measured
# steps).
STEP_REGION = "training_train_one_step"
FORWARD_REGION = "training_forward"
BACKWARD_REGION = "training_backward"
OPTIMIZER_REGION = "training_optimizer"
PRIME_REGION = "training_validation"


def out(line):
    print(line, flush=True)


class _NoRegion:
    def __init__(self, _name=None):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def build(args, torch):
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda", 0)
    layers = []
    width = args.width
    for i in range(args.layers):
        layers.append(torch.nn.Linear(width, width))
        if i + 1 < args.layers:
            layers.append(torch.nn.GELU())
    model = torch.nn.Sequential(*layers).to(dev)
    # Fixed batch, generated once: no host-to-device copy inside a step.
    x = torch.randn(args.batch, width, device=dev)
    y = torch.randn(args.batch, width, device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    return model, x, y, opt


def make_step(torch, model, x, y, opt, region):
    mse = torch.nn.functional.mse_loss

    def step(outer=STEP_REGION):
        """One training step; returns (wall_s, host_enqueue_s).

        A priming step (outer != STEP_REGION) has no inner regions: the
        traced "training_forward" would open a segment of its own there."""
        inner = region if outer == STEP_REGION else _NoRegion
        t0 = time.perf_counter()
        with region(outer):
            with inner(FORWARD_REGION):
                loss = mse(model(x), y)
            with inner(BACKWARD_REGION):
                loss.backward()
            with inner(OPTIMIZER_REGION):
                opt.step()
                opt.zero_grad(set_to_none=True)
            t1 = time.perf_counter()
            # Inside the step region: its kernels complete inside it.
            torch.cuda.synchronize()
        t2 = time.perf_counter()
        return t2 - t0, t1 - t0
    return step


def count_profiled_kernels(trace_path, nsteps):
    """Per-step kernel counts and per-name counts from a Kineto Chrome trace.

    Kernels are events with cat "kernel" (any case).  Each is given to the
    step whose record_function range ("fvbpf_gpu_check_step_<i>") holds the
    CPU call with the same correlation id; failing that, the range that holds
    the kernel's own start (steps synchronize, so kernels run inside them).
    Kineto writes all timestamps on one (CPU) time base.
    """
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace.get("traceEvents", trace if isinstance(trace, list) else [])
    ranges = {}
    kernels = []
    cpu_by_corr = {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        name = e.get("name", "")
        args = e.get("args") or {}
        if cat == "user_annotation" and \
                name.startswith("fvbpf_gpu_check_step_"):
            # The CPU range (Kineto also draws a "gpu_user_annotation" of
            # the same name over the step's kernels: not that one).
            i = int(name.rsplit("_", 1)[1])
            ranges[i] = (float(e["ts"]), float(e["ts"]) + float(e["dur"]))
        elif cat == "kernel":
            kernels.append(e)
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            cpu_by_corr[args["correlation"]] = float(e["ts"])

    def which(ts):
        for i, (a, b) in ranges.items():
            if a <= ts <= b:
                return i
        return None

    per_step = collections.Counter()
    names = collections.defaultdict(collections.Counter)
    unassigned = 0
    for k in kernels:
        corr = (k.get("args") or {}).get("correlation")
        i = which(cpu_by_corr[corr]) if corr in cpu_by_corr else None
        if i is None:
            i = which(float(k["ts"]))
        if i is None:
            unassigned += 1
            continue
        per_step[i] += 1
        names[i][k.get("name", "")] += 1
    counts = [per_step.get(i, 0) for i in range(nsteps)]
    return {
        "counts": counts,
        "total_kernels": len(kernels),
        "unassigned_kernels": unassigned,
        "step_ranges_found": len(ranges),
        "names_of_step": {str(i): dict(names[i]) for i in range(nsteps)},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20, help="measured steps")
    ap.add_argument("--warmup", type=int, default=5,
                    help="unmeasured steps before (allocator, cuBLAS, ...)")
    ap.add_argument("--prime", type=int, default=3,
                    help="unmeasured steps right before the measured ones, "
                         "inside the untraced region %s" % PRIME_REGION)
    ap.add_argument("--prime-sleep-s", type=float, default=0.0,
                    help="sleep this long after the signal, before the "
                         "priming steps (lets an in-process agent that "
                         "wakes asynchronously start CUPTI first)")
    ap.add_argument("--markers", action="store_true")
    ap.add_argument("--wait-signal", action="store_true")
    ap.add_argument("--signal-timeout", type=float, default=120.0)
    ap.add_argument("--linger-s", type=float, default=30.0,
                    help="with --wait-signal: after the steps, wait this "
                         "long for a second SIGUSR1 before exiting")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--profile-steps", type=int, default=3)
    ap.add_argument("--profile-trace", default=None,
                    help="where to export the torch.profiler Chrome trace "
                         "(default: a temporary file, removed)")
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--result", default=None, help="write results as JSON")
    args = ap.parse_args()

    # Signal set-up comes before the pid line: whoever reads it may signal at
    # once.  SIGUSR1 stays blocked (in every thread torch starts later too)
    # and is taken with sigtimedwait(); SIGTERM keeps its default action.
    if args.wait_signal:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    out("pid=%d" % os.getpid())

    result = {"pid": os.getpid(), "argv": sys.argv[1:], "mode": {
        "markers": args.markers, "profile": args.profile,
        "wait_signal": args.wait_signal}}

    def finish(code):
        if args.result:
            result["exit"] = code
            with open(args.result + ".tmp", "w") as f:
                json.dump(result, f, indent=1)
            os.replace(args.result + ".tmp", args.result)
        return code

    region = _NoRegion
    if args.markers:
        sys.path.insert(0, os.path.join(REPO, "python"))
        import fvbpf
        lib = fvbpf.library_path()
        out("lib=%s" % (lib or "none"))
        result["fvbpf_lib"] = lib
        if not lib:
            out("error: fvbpf library not loaded (set FVBPF_LIB)")
            return finish(4)
        region = fvbpf.profiler_region

    import torch
    result["torch"] = torch.__version__
    result["torch_cuda"] = torch.version.cuda
    if not torch.cuda.is_available():
        out("error: CUDA not available to torch %s" % torch.__version__)
        return finish(3)
    result["device"] = torch.cuda.get_device_name(0)
    out("torch=%s cuda=%s device=%s" % (torch.__version__, torch.version.cuda,
                                        result["device"].replace(" ", "_")))
    result["shape"] = {"width": args.width, "layers": args.layers,
                       "batch": args.batch}

    model, x, y, opt = build(args, torch)
    step = make_step(torch, model, x, y, opt, region)
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()

    if args.wait_signal:
        out("ready")
        if signal.sigtimedwait({signal.SIGUSR1}, args.signal_timeout) is None:
            out("no signal")
            return finish(2)

    if args.prime_sleep_s > 0:
        time.sleep(args.prime_sleep_s)
    prime = [step(PRIME_REGION)[0] * 1e3 for _ in range(args.prime)]
    result["prime_step_ms"] = prime

    if args.profile:
        from torch.profiler import ProfilerActivity, profile, record_function
        path = args.profile_trace
        tmp = None
        if not path:
            fd, tmp = tempfile.mkstemp(prefix="torch_trace_", suffix=".json")
            os.close(fd)
            path = tmp
        times = []
        with profile(activities=[ProfilerActivity.CPU,
                                 ProfilerActivity.CUDA]) as prof:
            for i in range(args.profile_steps):
                with record_function("fvbpf_gpu_check_step_%d" % i):
                    times.append(step())
            torch.cuda.synchronize()
        prof.export_chrome_trace(path)
        prof_res = count_profiled_kernels(path, args.profile_steps)
        if tmp:
            os.unlink(tmp)
        counts = prof_res["counts"]
        # The steady state: the last step (the first one profiled can carry
        # one-time work); all of them are reported.
        per_step = counts[-1] if counts else 0
        result["torch_kernels_per_step"] = per_step
        result["torch_kernels_per_step_list"] = counts
        result["torch_kernel_names"] = prof_res["names_of_step"].get(
            str(len(counts) - 1), {})
        result["profile"] = {k: v for k, v in prof_res.items()
                             if k != "names_of_step"}
        result["profiled_step_ms"] = [t[0] * 1e3 for t in times]
        out("torch_kernels_per_step=%d" % per_step)
        out("torch_kernels_per_step_list=%s" % ",".join(map(str, counts)))

    walls, hosts = [], []
    for _ in range(args.steps):
        w, h = step()
        walls.append(w * 1e3)
        hosts.append(h * 1e3)
    result["step_ms_list"] = walls
    result["cpu_ms_list"] = hosts
    if walls:
        result["step_ms"] = statistics.median(walls)
        result["cpu_ms"] = statistics.median(hosts)
        out("step_ms=%.4f" % result["step_ms"])
        out("cpu_ms=%.4f" % result["cpu_ms"])
    if args.markers:
        import fvbpf
        result["attached_after_steps"] = fvbpf.attached()
        out("attached=%d" % fvbpf.attached())
    finish(0)

    if args.wait_signal and args.linger_s > 0:
        out("lingering")
        signal.sigtimedwait({signal.SIGUSR1}, args.linger_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
