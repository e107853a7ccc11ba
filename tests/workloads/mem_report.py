# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""The --profile-memory probes without a GPU: call the wheel's real libc10.so
functions that fvbpf probes, with CUDA devices, known sizes and totals, and
hostile values, inside a marker region (training_train_one_step).

  mem_report.py LIBC10 DIR    print "pid=N", wait for DIR/go, make the calls
                              in one region, print "expect {...}" (what
                              fvbpf must report, computed from the calls
                              made), write DIR/done, wait for DIR/exit

Calls: c10::reportMemoryUsageToProfiler(ptr, alloc_size, total_allocated,
total_reserved, c10::Device) -- Device is {int8 type; int8 index} by value,
one integer register, so a uint16 type | index << 8 -- and
ProfiledCPUMemoryReporter::New/Delete on the process's real reporter
(c10::profiledCPUMemoryReporter()).  Without torch's profiler these only
take their early returns: nothing in the process changes.
"""
import ctypes
import json
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from fvbpf import profiler_region  # noqa: E402

MiB = 1 << 20
CUDA = 1
BOUND = 1 << 40   # fvbpf's MEM_BYTES_MAX
TOTAL_BOUND = 1 << 50

# (ptr, alloc_size, total_allocated, total_reserved, device index): CUDA
REPORTS = [
    (0x7f0000001000, 1 * MiB, 1 * MiB, 2 * MiB, 0),
    (0x7f0000200000, 3 * MiB, 4 * MiB, 6 * MiB, 0),
    (0x7f0000001000, -1 * MiB, 3 * MiB, 6 * MiB, 0),
    (0x7f1000000000, 512, 512, 2 * MiB, 1),
    # hostile: a "free" of -2^63, a size past any memory, a total that wrapped
    (0x7f0000003000, -(1 << 63), 1 << 63, 0, 0),
    (0x7f0000004000, 1 << 50, 1 * MiB, 2 * MiB, 0),
    (0x7f0000005000, 4096, (1 << 64) - 4096, 2 * MiB, 0),
]
# CPU: ("new", ptr, nbytes) / ("delete", ptr)
CPU = [
    ("new", 0x5a0000006000, 4096),
    ("delete", 0x5a0000006000),
    ("delete", 0x5a00deadbe00),        # a free of nothing seen
    ("new", 0x5a0000008000, 1 << 50),  # past any memory
    ("new", 0x5a0000007000, 100),      # live at the end of the segment
]


def expected():
    """What fvbpf must report, from the calls above and its stated bounds."""
    ok = [r for r in REPORTS if abs(r[1]) <= BOUND and r[2] <= TOTAL_BOUND and r[3] <= TOTAL_BOUND]
    bad = len(REPORTS) - len(ok)
    peaks = {}
    for _, size, alloc, res, idx in ok:
        p = peaks.setdefault("cuda:%d" % idx, [0, 0])
        p[0], p[1] = max(p[0], alloc), max(p[1], res)
    live, total, cpu_peak, cpu_events, unknown = {}, 0, 0, 0, 0
    for c in CPU:
        if c[0] == "new":
            if c[2] > BOUND:
                bad += 1
                continue
            live[c[1]] = c[2]
            total += c[2]
            cpu_events += 1
            cpu_peak = max(cpu_peak, total)
        elif c[1] in live:
            total -= live.pop(c[1])
            cpu_events += 1
        else:
            unknown += 1
    return {
        "memory_events": len(ok) + cpu_events,
        "memory_events_lost": bad,
        "memory_frees_unknown": unknown,
        "memory_peak_cpu_bytes": cpu_peak,
        "memory_peak_device_allocated_bytes": max(p[0] for p in peaks.values()),
        "memory_peak_device_reserved_bytes": max(p[1] for p in peaks.values()),
        "peaks": peaks,
        "cpu_live_at_end": sum(live.values()),
        "cuda_events": [[r[1], r[2], r[3], r[4], r[0]] for r in ok],
    }


def main():
    lib = ctypes.CDLL(sys.argv[1])
    d = sys.argv[2]
    report = lib._ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE
    report.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64,
                       ctypes.c_uint16]
    report.restype = None
    reporter = lib._ZN3c1025profiledCPUMemoryReporterEv
    reporter.restype = ctypes.c_void_p
    new = lib._ZN3c1025ProfiledCPUMemoryReporter3NewEPvm
    new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    delete = lib._ZN3c1025ProfiledCPUMemoryReporter6DeleteEPv
    delete.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    me = reporter()
    print("pid=%d" % os.getpid(), flush=True)
    while not os.path.exists(os.path.join(d, "go")):
        time.sleep(0.05)
    with profiler_region("training_train_one_step"):
        for ptr, size, alloc, res, idx in REPORTS:
            report(ptr, size, alloc % (1 << 64), res, CUDA | (idx << 8))
        for c in CPU:
            if c[0] == "new":
                new(me, c[1], c[2])
            else:
                delete(me, c[1])
    print("expect " + json.dumps(expected(), sort_keys=True), flush=True)
    open(os.path.join(d, "done"), "w").close()
    for _ in range(2400):
        if os.path.exists(os.path.join(d, "exit")):
            break
        time.sleep(0.05)


main()
