#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""fvbpf's Python shim (python/fvbpf/_shim.py) alone, with recording markers
instead of libfvbpf.so and the released fastvideo.profiler on PYTHONPATH:
what each FastVideo call style and each py: item makes of the markers.
Prints "ok NAME" per check; exits 1 at the first failure."""
import asyncio
import importlib.util
import os
import sys
import types

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "fvbpf",
                    "_shim.py")
events = []
status = []


def load_shim():
    spec = importlib.util.spec_from_file_location("_fvbpf_shim", SHIM)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_fvbpf_shim"] = mod
    spec.loader.exec_module(mod)
    return mod


def check(name, cond):
    if not cond:
        print("FAIL %s: events=%r status=%r" % (name, events[-12:], status[-4:]))
        sys.exit(1)
    print("ok %s" % name)


def marks(fn):
    del events[:]
    fn()
    return list(events)


shim = load_shim()
shim._begin = lambda b: events.append(("B", b.decode()))
shim._end = lambda b: events.append(("E", b.decode()))
shim._status = lambda code, detail, value, msg: status.append((code, detail, value, msg.decode()))

# py: items (and one of a module imported later)
mod = types.ModuleType("fv_target")
exec("""
class T:
    def step(self, x):
        return x + 1
    @staticmethod
    def st():
        return 2
    @classmethod
    def cm(cls):
        return cls.__name__
async def co():
    return 3
def boom():
    raise ValueError("x")
""", mod.__dict__)
sys.modules["fv_target"] = mod
shim._serve("py fv_target:T.step\npy fv_target:T.st\npy fv_target:T.cm\npy fv_target:co\n"
            "py fv_target:boom\npy fv_target:T.nope\npy fv_later:f\npy sys:getsizeof\n")
t = mod.T()
check("py method", marks(lambda: t.step(1)) == [("B", "py:fv_target:T.step"), ("E", "py:fv_target:T.step")])
check("py method result", t.step(1) == 2)
check("py staticmethod", marks(lambda: mod.T.st()) == [("B", "py:fv_target:T.st"), ("E", "py:fv_target:T.st")])
check("py classmethod", mod.T.cm() == "T" and marks(lambda: mod.T.cm())[0] == ("B", "py:fv_target:T.cm"))
check("py coroutine", marks(lambda: asyncio.run(mod.co())) == [("B", "py:fv_target:co"), ("E", "py:fv_target:co")])
try:
    marks(mod.boom)
    raised = False
except ValueError:
    raised = True
check("py exception passes, region ends", raised and events == [("B", "py:fv_target:boom"), ("E", "py:fv_target:boom")])
codes = [s[0] for s in status]
check("py unresolved said", any(s[0] == shim.UNRESOLVED and "T.nope" in s[3] for s in status))
check("py builtin refused", any(s[0] == shim.UNRESOLVED and "not a Python function" in s[3] for s in status))
check("py waiting said", any(s[0] == shim.WAITING and "fv_later" in s[3] for s in status))
later = types.ModuleType("fv_later")
exec("def f():\n    return 5\n", later.__dict__)
shim._on_import("fv_later", later)
check("py wrapped on import", marks(later.f) == [("B", "py:fv_later:f"), ("E", "py:fv_later:f")])
# a second request wraps nothing twice
shim._serve("py fv_target:T.step\n")
check("py idempotent", marks(lambda: t.step(1)) == [("B", "py:fv_target:T.step"), ("E", "py:fv_target:T.step")])

# FastVideo: the three call styles, profiler off
import fastvideo.profiler as fv  # noqa: E402

shim._serve("fastvideo\n")
check("fastvideo ready", status[-1][0] == shim.READY and status[-1][1] == 3)
ctl = fv.get_or_create_profiler(None)


class Pipe:
    profiler_controller = ctl

    @fv.profile_region("profiler_region_training_train_one_step")
    def step(self):
        with self.profiler_controller.region("profiler_region_training_forward"):
            pass
        with fv.profiler_region("profiler_region_training_backward"):
            pass
        return 7


class NoController:
    @fv.profile_region("profiler_region_training_train_one_step")
    def step(self):
        return 8


p = Pipe()
check("three styles, nested", marks(p.step) == [
    ("B", "profiler_region_training_train_one_step"),
    ("B", "profiler_region_training_forward"), ("E", "profiler_region_training_forward"),
    ("B", "profiler_region_training_backward"), ("E", "profiler_region_training_backward"),
    ("E", "profiler_region_training_train_one_step")])
check("result kept", p.step() == 7)
check("no controller: no region, as FastVideo", marks(NoController().step) == [] and NoController().step() == 8)
check("keyword argument", marks(lambda: ctl.region(region="profiler_region_x").__enter__()) ==
      [("B", "profiler_region_x")])


@ctl.region("profiler_region_deco")
def decorated():
    return 9


check("region as a decorator", marks(decorated) == [("B", "profiler_region_deco"), ("E", "profiler_region_deco")])
check("has_profiler elsewhere unchanged", ctl.has_profiler is False)
check("get_global_controller elsewhere unchanged", fv.get_global_controller() is None)


def raising():
    with ctl.region("profiler_region_err"):
        raise KeyError("k")


try:
    marks(raising)
except KeyError:
    pass
check("exception in a region: ended, propagated", events == [("B", "profiler_region_err"), ("E", "profiler_region_err")])
shim._serve("fastvideo\n")
check("second request: not wrapped twice", marks(p.step).count(("B", "profiler_region_training_forward")) == 1)

# a FastVideo without the controller class: an error said, nothing raised
broken = types.ModuleType("fastvideo.profiler")
saved = sys.modules["fastvideo.profiler"]
sys.modules["fastvideo.profiler"] = broken
del status[:]
shim.run(b"fastvideo\n", 0, 0, 0)  # the library's entry point: never raises
check("broken fastvideo: said, not raised", status and status[-1][0] == shim.ERROR
      and "TorchProfilerController" in status[-1][3])
sys.modules["fastvideo.profiler"] = saved
print("all ok")
