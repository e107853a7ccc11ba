# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""What one FastVideo region (enter + exit) costs in the job, per call style.

  pyshim_cost.py MODE N RUN_DIR
    MODE plain: fastvideo.profiler as released (its profiler off);
         shim: the same with fvbpf's Python shim (the import hook's path,
               libfvbpf.so from $FVBPF_LIB), no fvbpf attached;
         attached: as shim, but prints "pid=P" and waits for RUN_DIR/go
               (fvbpf attaches meanwhile), and times the regions inside an
               outer training_train region (each round one segment).
    Prints "ROW <style> <ns per enter+exit>" for the three call styles,
    the median of 5 rounds of N regions each.
"""
import os
import sys
import time

mode, n, run_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if mode != "plain":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "python"))
    import fvbpf_hook  # noqa: F401  (loads the shim, watches fastvideo.profiler)
import fastvideo.profiler as fv  # noqa: E402

ctl = fv.get_or_create_profiler(None)


class Pipe:
    profiler_controller = ctl

    @fv.profile_region("profiler_region_training_forward")
    def step(self):
        pass


def styles():
    pipe = Pipe()

    def module_level():
        for _ in range(n):
            with fv.profiler_region("profiler_region_training_forward"):
                pass

    def controller():
        for _ in range(n):
            with ctl.region("profiler_region_training_forward"):
                pass

    def decorated():
        for _ in range(n):
            pipe.step()
    return [("profiler_region()", module_level), ("controller.region()", controller),
            ("@profile_region method", decorated)]


def main():
    if mode == "attached":
        print("pid=%d" % os.getpid(), flush=True)
        while not os.path.exists(os.path.join(run_dir, "go")):
            time.sleep(0.01)
    if mode != "plain" and "_fvbpf_shim" not in sys.modules:
        sys.exit("the shim did not load")
    for name, fn in styles():
        times = []
        for _ in range(5):
            t0 = time.perf_counter_ns()
            if mode == "attached":
                with ctl.region("profiler_region_training_train"):
                    fn()
            else:
                fn()
            times.append((time.perf_counter_ns() - t0) / n)
        times.sort()
        print("ROW %s %.1f" % (name.replace(" ", "_"), times[2]), flush=True)


main()
