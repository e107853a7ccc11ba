# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A small deterministic CPU training step for --profile-memory, no fvbpf
code: a 1 MiB scratch tensor (aten::empty), linear (addmm), mm, cat,
relu (clamp_min) and its backward (threshold_backward), inside a
record_function scope "mem_step" that delimits fvbpf's segments.

  torch_mem.py oracle           one step under torch.profiler(profile_memory=True):
                                prints {name: [count, cpu_memory_usage,
                                self_cpu_memory_usage]} of key_averages, then
                                {memory_events, peak, mib_events} of Kineto's
                                [memory] events in its exported trace (peak:
                                the largest Total Allocated)
  torch_mem.py run DIR STEPS    write the pid, wait for DIR/go, run STEPS
                                steps, write DIR/done, wait for DIR/exit
  torch_mem.py time DIR ROUNDS STEPS [K:cpu,K:mem]
                                ROUNDS timed rounds (make bench), each after
                                DIR/go.K, printing the median step time;
                                round K under torch.profiler (CPU), with
                                profile_memory for "mem"
  torch_mem.py alloc DIR ROUNDS N [K:cpu,K:mem]
                                the same with N torch.empty(1024) a round,
                                ns per call
"""
import json
import os
import sys
import time

import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
w = torch.randn(64, 64, requires_grad=True)
x = torch.randn(32, 64)
y = torch.randint(0, 10, (32,))


def step():
    with torch.profiler.record_function("mem_step"):
        scratch = torch.empty(1 << 18)  # 1 MiB of float32
        scratch.fill_(1.0)
        h = torch.cat([x @ w, x], dim=1)  # mm, cat
        loss = nn.functional.cross_entropy(model(h[:, :64]), y)
        model.zero_grad(set_to_none=True)
        w.grad = None
        loss.backward()
        del scratch


for _ in range(3):
    step()

mode = sys.argv[1] if len(sys.argv) > 1 else "oracle"
if mode == "oracle":
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    rows = {e.key: [e.count, e.cpu_memory_usage, e.self_cpu_memory_usage]
            for e in prof.key_averages()}
    print(json.dumps(rows, sort_keys=True))
    # Kineto's own [memory] events, from its exported trace
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "torch_mem_%d.json" % os.getpid())
    prof.export_chrome_trace(path)
    mem = [e["args"] for e in json.load(open(path))["traceEvents"] if e.get("name") == "[memory]"]
    os.unlink(path)
    print(json.dumps({"memory_events": len(mem),
                      "peak": max(m["Total Allocated"] for m in mem),
                      "mib_events": sum(1 for m in mem if m["Bytes"] == 1 << 20)}))
elif mode == "run":
    from wl_steps import run_steps

    run_steps(sys.argv[2], int(sys.argv[3]), step)
elif mode in ("time", "alloc"):
    # ROUNDS rounds, each after DIR/go.K; PROFILE "K:cpu,K:mem" runs round K
    # under torch.profiler (CPU), without or with profile_memory.  time:
    # STEPS steps a round, the median step; alloc: N torch.empty(1024) (one
    # aten::empty, one allocation and its free) inside record_function
    # ("mem_step"), after one unmeasured scope, ns per call.
    d, rounds, n = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    prof_rounds = dict(x.split(":") for x in sys.argv[5].split(",")) if len(sys.argv) > 5 else {}
    print("pid=%d" % os.getpid(), flush=True)
    for k in range(rounds):
        while not os.path.exists(os.path.join(d, "go.%d" % k)):
            time.sleep(0.02)
        prof = None
        if str(k) in prof_rounds:
            from torch.profiler import ProfilerActivity, profile

            prof = profile(activities=[ProfilerActivity.CPU],
                           profile_memory=prof_rounds[str(k)] == "mem")
            prof.__enter__()
        if mode == "time":
            times = []
            for _ in range(n):
                t0 = time.perf_counter_ns()
                step()
                times.append(time.perf_counter_ns() - t0)
            times.sort()
            result = "ms_per_step %.3f" % (times[len(times) // 2] / 1e6)
        else:
            with torch.profiler.record_function("mem_step"):
                torch.empty(1024)
            with torch.profiler.record_function("mem_step"):
                t0 = time.perf_counter_ns()
                for _ in range(n):
                    torch.empty(1024)
                t1 = time.perf_counter_ns()
            result = "ns_per_alloc %.1f" % ((t1 - t0) / n)
        if prof is not None:
            prof.__exit__(None, None, None)
        print("round %d %s" % (k, result), flush=True)
        open(os.path.join(d, "done.%d" % k), "w").close()
else:
    sys.exit("usage: torch_mem.py oracle | run DIR STEPS | time DIR ROUNDS STEPS [K:cpu,K:mem] | "
             "alloc DIR ROUNDS N [K:cpu,K:mem]")
