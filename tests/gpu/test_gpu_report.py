#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Self-test of tests/gpu/gpu_report.py and torch_train.py's trace counting,
on synthetic fvbpf and Kineto output (no GPU, no torch, no root needed):

    python3 tests/gpu/test_gpu_report.py
"""

import copy
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gpu_report  # noqa: E402
import torch_train  # noqa: E402  (imports no torch at module level)

KERNELS = ["void at::native::elementwise_kernel<128, 4>(int)",
           "sm90_xmma_gemm_f32f32_tn_n",
           "void at::native::vectorized_elementwise_kernel<4>(int)"]


def segment(seq, kernels=KERNELS, start=1000.0):
    """A trace as fvbpf writes it with the CUPTI agent: per kernel a
    cudaLaunchKernel slice (correlation), a GPU slice and an ac2g flow."""
    ev = [{"ph": "M", "pid": 7, "tid": 7, "name": "thread_name",
           "args": {"name": "python3"}},
          {"ph": "X", "cat": "user_annotation", "pid": 7, "tid": 7,
           "name": "fvbpf.region::training_train_one_step", "ts": start,
           "dur": 500.0, "args": {"depth": 0,
                                  "region": "training_train_one_step"}}]
    rows = {}
    for i, k in enumerate(kernels):
        corr = seq * 100 + i + 1
        ts = start + 10 + i * 20
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                   "pid": 7, "tid": 7, "ts": ts, "dur": 4.0,
                   "args": {"correlation": corr, "kernel": k,
                            "return": "cudaSuccess", "depth": 1}})
        ev.append({"ph": "s", "cat": "ac2g", "id": corr, "pid": 7, "tid": 7,
                   "ts": ts, "name": "ac2g"})
        ev.append({"ph": "X", "cat": "kernel", "name": k, "pid": 0,
                   "tid": 7, "ts": ts + 5, "dur": 12.5,
                   "args": {"correlation": corr, "grid": [1, 1, 1],
                            "block": [128, 1, 1],
                            "registers_per_thread": 32, "shared_memory": 0}})
        ev.append({"ph": "f", "bp": "e", "cat": "ac2g", "id": corr, "pid": 0,
                   "tid": 7, "ts": ts + 5, "name": "ac2g"})
        r = rows.setdefault(k, {"name": k, "kind": "kernel", "count": 0,
                                "cpu_us": 0.0, "device_us": 0.0,
                                "self_device_us": 0.0})
        r["count"] += 1
        r["cpu_us"] += 4.0
        r["device_us"] += 12.5
        r["self_device_us"] += 12.5
    meta = {"segment": seq, "region": "training_train_one_step",
            "incomplete": False, "started_before_attach": False,
            "start_us": start, "end_us": start + 500, "duration_us": 500.0,
            "gpu_activity": "cupti", "gpu_clock": "monotonic-callback",
            "gpu_records_missing": 0, "cupti_dropped": 0, "ringbuf_drops": 0}
    summary = {"metadata": dict(meta), "rows": list(rows.values()) + [
        {"name": "training_train_one_step", "kind": "region", "count": 1,
         "cpu_us": 500.0, "device_us": 0.0, "self_device_us": 0.0}]}
    return {"traceEvents": ev, "otherData": meta}, summary


def write_dir(d, segs):
    for trace, summary in segs:
        stem = "rank0_segment%04d_training_train_one_step" % trace["otherData"]["segment"]
        with open(os.path.join(d, "trace_%s.json" % stem), "w") as f:
            json.dump(trace, f)
        with open(os.path.join(d, "summary_%s.json" % stem), "w") as f:
            json.dump(summary, f)
        with open(os.path.join(d, "summary_%s.txt" % stem), "w") as f:
            f.write("table\n")
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump({"files": []}, f)


TORCH = {"torch_kernels_per_step": 3, "torch_kernels_per_step_list": [3, 3, 3],
         "torch_kernel_names": {k: 1 for k in KERNELS}}


class Report(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="gpu_report_test.")
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def run_checks(self, segs, torch=TORCH, want=None):
        write_dir(self.d, segs)
        checks, fields, _ = gpu_report.analyse_traces(self.d, torch, want)
        return checks, fields

    def failing(self, checks):
        return sorted(n for n, c in checks.items() if not c["pass"])

    def test_all_good(self):
        checks, fields = self.run_checks([segment(i) for i in range(3)], want=3)
        self.assertEqual(self.failing(checks), [])
        self.assertEqual(fields["fvbpf_kernels_per_step"], [3, 3, 3])
        self.assertEqual(fields["segments"], 3)
        self.assertEqual(fields["gpu_clock"], ["monotonic-callback"])

    def test_segments_wanted(self):
        checks, _ = self.run_checks([segment(i) for i in range(2)], want=3)
        self.assertEqual(self.failing(checks), ["segments_complete"])

    def test_incomplete_and_before_attach_not_counted(self):
        a, b, c = segment(0), segment(1), segment(2)
        a[0]["otherData"]["started_before_attach"] = True
        c[0]["otherData"]["incomplete"] = True
        c[0]["traceEvents"] = [e for e in c[0]["traceEvents"] if e.get("cat") != "kernel"]
        checks, fields = self.run_checks([a, b, c])
        self.assertEqual(fields["segments"], 1)
        self.assertEqual(fields["segments_written"], 3)
        self.assertEqual(self.failing(checks), [])

    def test_bad_kernel(self):
        t, s = segment(0)
        next(e for e in t["traceEvents"] if e.get("cat") == "kernel")["dur"] = 0
        [e for e in t["traceEvents"] if e.get("cat") == "kernel"][1]["name"] = ""
        checks, _ = self.run_checks([(t, s)])
        self.assertEqual(self.failing(checks), ["kernels_named_with_duration"])
        self.assertEqual(checks["kernels_named_with_duration"]["detail"]
                         ["kernels_without_name_or_duration"], 2)

    def test_unjoined_launch(self):
        t, s = segment(0)
        # The kernel record of one launch never came: no kernel, no flow end.
        t["traceEvents"] = [e for e in t["traceEvents"] if not (
            e.get("cat") in ("kernel", "ac2g") and e.get("id", (e.get("args") or {}).get("correlation")) == 2)]
        t["otherData"]["gpu_records_missing"] = 1
        checks, _ = self.run_checks([(t, s)])
        self.assertEqual(self.failing(checks), ["gpu_records_missing_zero", "kernel_count_matches_torch",
                                                "launches_joined"])
        d = checks["launches_joined"]["detail"]
        self.assertEqual((d["joined"], d["unjoined"]), (2, 1))

    def test_failed_and_nested_launches_skipped(self):
        t, s = segment(0)
        t["traceEvents"].append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                                 "pid": 7, "tid": 7, "ts": 1400, "dur": 1,
                                 "args": {"return": "cudaErrorInvalidValue"}})
        t["traceEvents"].append({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx",
                                 "pid": 7, "tid": 7, "ts": 1011, "dur": 1,
                                 "args": {"nested_in_call": True, "return": "CUDA_SUCCESS"}})
        checks, _ = self.run_checks([(t, s)])
        self.assertEqual(self.failing(checks), [])
        d = checks["launches_joined"]["detail"]
        self.assertEqual((d["failed_launches_skipped"], d["nested_launches_skipped"]), (1, 1))

    def test_driver_launch_string_ids(self):
        t, s = segment(0)
        for e in t["traceEvents"]:
            if e.get("name") == "cudaLaunchKernel":
                e["name"] = "cuLaunchKernelEx_ptsz"
                e["cat"] = "cuda_driver"
                e["args"]["correlation"] = str(e["args"]["correlation"])
            if e.get("cat") == "ac2g":
                e["id"] = "0x%x" % e["id"]
        checks, _ = self.run_checks([(t, s)])
        self.assertEqual(self.failing(checks), [])

    def test_missing_flow(self):
        t, s = segment(0)
        t["traceEvents"] = [e for e in t["traceEvents"] if e.get("ph") != "f"]
        checks, _ = self.run_checks([(t, s)])
        self.assertEqual(self.failing(checks), ["launch_kernel_flows"])

    def test_not_cupti(self):
        t, s = segment(0)
        t["otherData"]["gpu_activity"] = "another CUPTI subscriber is active"
        del t["otherData"]["cupti_dropped"]
        checks, fields = self.run_checks([(t, s)])
        self.assertEqual(self.failing(checks), ["cupti_dropped_zero", "gpu_activity_cupti"])

    def test_count_differs_from_torch(self):
        checks, _ = self.run_checks([segment(0), segment(1, KERNELS + ["extra"])])
        self.assertEqual(self.failing(checks), ["kernel_count_matches_torch"])
        d = checks["kernel_count_matches_torch"]["detail"]
        self.assertEqual(d["differences"], [0, 1])
        self.assertEqual(d["name_diff_last_segment"], [{"name": "extra", "fvbpf_minus_torch": 1}])

    def test_no_torch_count(self):
        checks, _ = self.run_checks([segment(0)], torch=None)
        self.assertEqual(self.failing(checks), ["kernel_count_matches_torch"])

    def test_summary_without_device_time(self):
        t, s = segment(0)
        s["rows"][0]["device_us"] = 0.0
        checks, _ = self.run_checks([(t, s)])
        self.assertEqual(self.failing(checks), ["summary_kernel_device_time"])

    def test_unreadable_trace(self):
        write_dir(self.d, [segment(0)])
        with open(os.path.join(self.d, "trace_rank0_segment0001_training_train_one_step.json"), "w") as f:
            f.write("{truncated")
        checks, fields, _ = gpu_report.analyse_traces(self.d, TORCH, None)
        self.assertIn("segments_complete", self.failing(checks))

    def test_finalize(self):
        work = os.path.join(self.d, "work")
        out = os.path.join(self.d, "out")
        os.makedirs(os.path.join(work, "kv"))
        os.makedirs(os.path.join(work, "trace"))
        os.makedirs(out)
        write_dir(os.path.join(work, "trace"), [segment(i) for i in range(3)])
        kv = {"stage": "done", "segments_wanted": "3", "max_overhead": "1.15",
              "started_epoch": "0", "kernel": "6.18"}
        for k, v in kv.items():
            with open(os.path.join(work, "kv", k), "w") as f:
                f.write(v)
        with open(os.path.join(work, "kv", "torch_info.json"), "w") as f:
            json.dump({"torch": "2.11.0"}, f)
        with open(os.path.join(work, "checks.tsv"), "w") as f:
            f.write("bpf_uprobes\t1\tfine\n")
        res = {"baseline1": {"step_ms": 10.0, "step_ms_list": [10.0, 10.0], "cpu_ms_list": [1.0, 1.0]},
               "baseline2": {"step_ms": 10.4, "step_ms_list": [10.4, 10.4], "cpu_ms_list": [1.0, 1.0]},
               "attached": {"step_ms": 10.5, "cpu_ms": 1.2},
               "profile": copy.deepcopy(TORCH)}
        for k, v in res.items():
            with open(os.path.join(work, k + ".json"), "w") as f:
                json.dump(v, f)
        rep = gpu_report.finalize(work, out)
        self.assertEqual(rep["status"], "ok", rep["checks"])
        self.assertAlmostEqual(rep["step_ms_detached"], 10.2)
        self.assertAlmostEqual(rep["overhead_ratio"], round(10.5 / 10.2, 4))
        self.assertEqual(rep["env"]["torch_info"], {"torch": "2.11.0"})
        self.assertEqual(sorted(os.listdir(out)), sorted(
            ["gpu_check.json", "manifest.json",
             "trace_rank0_segment0001_training_train_one_step.json",
             "summary_rank0_segment0001_training_train_one_step.json",
             "summary_rank0_segment0001_training_train_one_step.txt"]))
        with open(os.path.join(out, "gpu_check.json")) as f:
            self.assertEqual(json.load(f)["status"], "ok")
        # Too slow attached: the overhead check fails the run.
        res["attached"]["step_ms"] = 20.0
        with open(os.path.join(work, "attached.json"), "w") as f:
            json.dump(res["attached"], f)
        rep = gpu_report.finalize(work, out)
        self.assertEqual(rep["status"], "fail")
        self.assertIn("step_time_overhead", rep["reason"])
        # Stopped midway: "incomplete"; a forced status wins.
        with open(os.path.join(work, "kv", "stage"), "w") as f:
            f.write("attached")
        self.assertEqual(gpu_report.finalize(work, out)["status"], "incomplete")
        with open(os.path.join(work, "kv", "status"), "w") as f:
            f.write("no_bpf")
        self.assertEqual(gpu_report.finalize(work, out)["status"], "no_bpf")


class KinetoCount(unittest.TestCase):
    def test_count(self):
        ev = [{"ph": "X", "cat": "user_annotation", "name": "fvbpf_gpu_check_step_%d" % i,
               "ts": 1000.0 * i, "dur": 900.0, "pid": 1, "tid": 1} for i in range(3)]
        # Kineto's GPU twin of each range, shifted: must not be used.
        ev += [{"ph": "X", "cat": "gpu_user_annotation", "name": "fvbpf_gpu_check_step_%d" % i,
                "ts": 1000.0 * i + 500, "dur": 10.0, "pid": 0, "tid": 7} for i in range(3)]
        corr = 0
        for i in range(3):
            for j in range(4 + (i == 0)):
                corr += 1
                # The CPU launch is inside the step; the kernel may show up
                # later (clock skew): the correlation decides.
                ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "ts": 1000.0 * i + 10 * j, "dur": 2, "pid": 1, "tid": 2,
                           "args": {"correlation": corr}})
                ev.append({"ph": "X", "cat": "Kernel", "name": "k%d" % j,
                           "ts": 1000.0 * i + 950, "dur": 3, "pid": 0, "tid": 7,
                           "args": {"correlation": corr}})
        # A kernel without a CPU call, placed by its own time.
        ev.append({"ph": "X", "cat": "kernel", "name": "k9", "ts": 2500.0, "dur": 1,
                   "pid": 0, "tid": 7, "args": {}})
        ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy", "ts": 2500.0, "dur": 1,
                   "pid": 0, "tid": 7, "args": {}})
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"traceEvents": ev}, f)
        try:
            r = torch_train.count_profiled_kernels(f.name, 3)
        finally:
            os.unlink(f.name)
        self.assertEqual(r["counts"], [5, 4, 5])
        self.assertEqual(r["unassigned_kernels"], 0)
        self.assertEqual(r["names_of_step"]["1"], {"k0": 1, "k1": 1, "k2": 1, "k3": 1})


if __name__ == "__main__":
    unittest.main()
