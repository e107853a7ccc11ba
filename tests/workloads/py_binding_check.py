#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Self-check of the fvbpf Python binding, without root or a profiler.

Usage: py_binding_check.py <path of libfvbpf.so>

Prints TAP (a "1..N" plan, then "ok N - ..." or "not ok N - ..." lines) and
exits 1 if any check failed, 2 on bad usage.  Only the standard library is
needed.  The package is taken from this source tree.

An attach is simulated by raising the library's fvbpf_semaphore through
ctypes, as the kernel would; the library's own probes stay off, since they
also need the loader's attach epoch.  Which markers reach the library is seen
by swapping the package's private _begin/_end for recording wrappers.
"""

import asyncio
import ctypes
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
import warnings

# <repo>/tests/workloads/py_binding_check.py -> <repo>/python
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PKG_PARENT = os.path.join(REPO, "python")

LIB = None       # the library under test, absolute
fvbpf = None     # the package, once imported
TESTS = []


class Skip(Exception):
    pass


def check(description):
    def register(fn):
        TESTS.append((description, fn))
        return fn
    return register


def need_fvbpf():
    if fvbpf is None:
        raise AssertionError("fvbpf did not import")
    return fvbpf


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


class Recorder:
    """Stands in for fvbpf._begin/_end; calls through to the library."""

    def __init__(self, real, log, kind):
        self.real, self.log, self.kind = real, log, kind

    def __call__(self, name):
        self.log.append((self.kind, name))
        self.real(name)


class Session:
    """Record the markers that reach the library, optionally 'attached'."""

    def __init__(self, attached_state):
        self.state = attached_state
        self.log = []

    def __enter__(self):
        fv = need_fvbpf()
        self.saved = (fv._begin, fv._end)
        fv._begin = Recorder(fv._begin, self.log, "begin")
        fv._end = Recorder(fv._end, self.log, "end")
        set_semaphore(1 if self.state else 0)
        return self

    def __exit__(self, *exc):
        set_semaphore(0)
        fvbpf._begin, fvbpf._end = self.saved
        return False

    def kinds(self):
        return [k for k, _ in self.log]


def semaphore():
    # Same path, so dlopen() hands back the handle the package holds.
    return ctypes.c_uint16.in_dll(ctypes.CDLL(LIB), "fvbpf_semaphore")


def set_semaphore(value):
    semaphore().value = value


def control_epoch():
    """The epoch in the library's control page (fvbpf_control -> page)."""
    page = ctypes.c_void_p.in_dll(ctypes.CDLL(LIB), "fvbpf_control").value
    if not page:
        raise AssertionError("the library has no control page")
    return ctypes.c_uint32.from_address(page + 4)


# --- in-process checks ----------------------------------------------------

@check("import with FVBPF_LIB set loads the library without a warning")
def t_import():
    global fvbpf
    os.environ["FVBPF_LIB"] = LIB
    sys.path.insert(0, PKG_PARENT)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import fvbpf as fv
    fvbpf = fv
    expect(os.path.dirname(os.path.dirname(os.path.abspath(fv.__file__)))
           == PKG_PARENT, "imported %s, not this tree's" % fv.__file__)
    expect(not caught, "warnings: %s" % [str(w.message) for w in caught])


@check("library_path() is the FVBPF_LIB library")
def t_library_path():
    path = need_fvbpf().library_path()
    expect(path and os.path.realpath(path) == os.path.realpath(LIB),
           "library_path() = %r" % path)


@check("attached() is False without a profiler")
def t_detached():
    expect(need_fvbpf().attached() is False, "attached() is not False")


@check("attached() needs the semaphore and an odd epoch (probes live)")
def t_attached_follows():
    fv = need_fvbpf()
    epoch = control_epoch()
    saved = epoch.value
    try:
        set_semaphore(1)
        epoch.value = 2  # a loader still putting its probes in
        expect(fv.attached() is False, "epoch even, attached() not False")
        epoch.value = 3
        expect(fv.attached() is True, "semaphore up, odd epoch, attached() not True")
        set_semaphore(0)
        expect(fv.attached() is False, "semaphore down, attached() not False")
    finally:
        set_semaphore(0)
        epoch.value = saved
    expect(fv.attached() is False, "detached, attached() not False")


def sample(a, b=2):
    """Sample docstring."""
    return a * b


@check("profile_region keeps name, docstring and return value")
def t_wraps():
    fv = need_fvbpf()
    wrapped = fv.profile_region("training_dataloader")(sample)
    expect(wrapped.__name__ == "sample", "__name__ %r" % wrapped.__name__)
    expect(wrapped.__doc__ == sample.__doc__, "__doc__ lost")
    expect(wrapped.__wrapped__ is sample, "__wrapped__ lost")
    expect(wrapped(3) == 6 and wrapped(3, b=5) == 15, "wrong return value")


@check("profile_region works on methods, staticmethods and classmethods")
def t_methods():
    pr = need_fvbpf().profile_region

    class Model:
        scale = 10

        def __init__(self):
            self.k = 2

        @pr("training_forward")
        def forward(self, x):
            return self.k * x

        @staticmethod
        @pr("training_backward")
        def static_inside(x):
            return x + 1

        @pr("training_backward")
        @staticmethod
        def static_outside(x):
            return x + 2

        @pr("training_optimizer")
        @classmethod
        def cls_outside(cls, x):
            return cls.scale * x

    m = Model()
    expect(m.forward(4) == 8, "method")
    expect(Model.static_inside(1) == 2 and m.static_inside(1) == 2,
           "staticmethod, decorated inside")
    expect(Model.static_outside(1) == 3, "staticmethod, decorated outside")
    expect(Model.cls_outside(2) == 20, "classmethod, decorated outside")
    expect(Model.forward.__name__ == "forward", "method __name__")


@check("profile_region works on coroutine functions")
def t_async():
    fv = need_fvbpf()

    @fv.profile_region("training_callbacks")
    async def job(x):
        await asyncio.sleep(0)
        return x + 1

    expect(inspect.iscoroutinefunction(job), "not a coroutine function")
    expect(job.__name__ == "job", "__name__ %r" % job.__name__)
    with Session(True) as s:
        expect(asyncio.run(job(1)) == 2, "wrong return value")
    expect(s.kinds() == ["begin", "end"], "markers %s" % s.kinds())


@check("profiler_region propagates exceptions")
def t_cm_raises():
    fv = need_fvbpf()
    try:
        with fv.profiler_region("training_backward"):
            raise KeyError("boom")
    except KeyError:
        pass
    else:
        raise AssertionError("KeyError swallowed")


@check("detached, the helpers still reach the library (its name stack)")
def t_detached_calls():
    fv = need_fvbpf()
    with Session(False) as s:
        with fv.profiler_region("training_forward"):
            pass
        fv.profile_region("training_backward")(sample)(1)
    expect(s.log == [("begin", b"training_forward"), ("end", b"training_forward"),
                     ("begin", b"training_backward"), ("end", b"training_backward")],
           "markers %s" % s.log)


@check("attached, profiler_region ends its region even on an exception")
def t_cm_attached():
    fv = need_fvbpf()
    region = fv.profiler_region("Training_Forward")
    with Session(True) as s:
        with region:
            pass
        try:
            with region:
                raise ValueError("boom")
        except ValueError:
            pass
    expect(s.kinds() == ["begin", "end"] * 2, "markers %s" % s.kinds())
    expect(all(name == b"Training_Forward" for _, name in s.log),
           "names %s" % s.log)
    # The encoding is done once, not per marker.
    expect(len({id(name) for _, name in s.log}) == 1, "name re-encoded")


@check("attached, profile_region ends its region even on an exception")
def t_deco_attached():
    fv = need_fvbpf()

    @fv.profile_region("training_optimizer")
    def fails():
        raise ValueError("boom")

    with Session(True) as s:
        expect(fv.profile_region("training_optimizer")(sample)(2) == 4,
               "wrong return value")
        try:
            fails()
        except ValueError:
            pass
        else:
            raise AssertionError("ValueError swallowed")
    expect(s.kinds() == ["begin", "end"] * 2, "markers %s" % s.kinds())


@check("an attach or detach mid-region keeps the helpers' markers paired")
def t_transitions():
    fv = need_fvbpf()
    region = fv.profiler_region("training_forward")
    deco = fv.profile_region("training_dataloader")
    with Session(False) as s:
        with region:            # entered detached, left attached
            set_semaphore(1)
        with region:            # entered attached, left detached
            set_semaphore(0)
        deco(set_semaphore)(1)  # called detached, returns attached
        deco(set_semaphore)(0)  # called attached, returns detached
    expect(s.log == [("begin", b"training_forward"),
                     ("end", b"training_forward")] * 2 +
                    [("begin", b"training_dataloader"),
                     ("end", b"training_dataloader")] * 2,
           "markers %s" % s.log)


@check("region_begin/region_end pass UTF-8 names to the library")
def t_low_level():
    fv = need_fvbpf()
    with Session(False) as s:
        fv.region_begin("training_forward")
        fv.region_begin(b"training_backward")
        fv.region_end(b"training_backward")
        fv.region_end("training_forward")
        fv.region_begin("caf\u00e9")
        fv.region_end("caf\u00e9")
    expect(s.log == [("begin", b"training_forward"),
                     ("begin", b"training_backward"),
                     ("end", b"training_backward"),
                     ("end", b"training_forward"),
                     ("begin", b"caf\xc3\xa9"), ("end", b"caf\xc3\xa9")],
           "markers %s" % s.log)


# --- fresh interpreters with a copy of the package --------------------------

CHILD = r"""
import json, sys, warnings
sys.path.insert(0, sys.argv[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import fvbpf
res = {"file": fvbpf.__file__, "path": fvbpf.library_path(),
       "attached": fvbpf.attached(),
       "warnings": [[w.category.__name__, str(w.message)] for w in caught]}

@fvbpf.profile_region("training_dataloader")
def f(x):
    return x + 1

res["ret"] = f(1)
try:
    with fvbpf.profiler_region("training_forward"):
        raise KeyError("boom")
except KeyError:
    res["raised"] = True
fvbpf.region_begin("training_backward")
fvbpf.region_end("training_backward")
print(json.dumps(res))
"""


def copy_package(pkg_parent):
    """Copy the package (and no library) into @pkg_parent/fvbpf."""
    dest = os.path.join(pkg_parent, "fvbpf")
    shutil.copytree(os.path.join(PKG_PARENT, "fvbpf"), dest,
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return dest


def run_child(pkg_parent, env_lib, cwd):
    """Import the package copied into @pkg_parent; return its report."""
    env = dict(os.environ, LD_LIBRARY_PATH="")
    env.pop("FVBPF_LIB", None)
    if env_lib is not None:
        env["FVBPF_LIB"] = env_lib
    # -I: no PYTHONPATH, user site or script directory to find another fvbpf.
    proc = subprocess.run([sys.executable, "-I", "-c", CHILD, pkg_parent],
                          cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=60)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise AssertionError("child failed (rc %d): %s"
                             % (proc.returncode, proc.stderr.strip()))
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    expect(os.path.realpath(os.path.dirname(os.path.dirname(res["file"])))
           == os.path.realpath(pkg_parent), "child imported %s" % res["file"])
    expect(proc.stderr.strip() == "", "stderr: %s" % proc.stderr.strip())
    return res


def expect_noop_markers(res):
    expect(res["attached"] is False, "attached() %r" % res["attached"])
    expect(res["ret"] == 2, "decorated function returned %r" % res["ret"])
    expect(res.get("raised"), "profiler_region swallowed the exception")


@check("no library anywhere: exactly one warning, markers are no-ops")
def t_no_library():
    bad = "/nonexistent/libfvbpf.so"
    with tempfile.TemporaryDirectory() as tmp:
        copy_package(tmp)
        res = run_child(tmp, bad, tmp)
    if res["path"] is not None:
        raise Skip("a libfvbpf.so on the system path was found: %s"
                   % res["path"])
    ws = res["warnings"]
    expect(len(ws) == 1, "%d warnings: %s" % (len(ws), ws))
    category, message = ws[0]
    expect(category == "RuntimeWarning", "category %s" % category)
    for needle in ("FVBPF_LIB", "make", bad):
        expect(needle in message, "%r not in warning %r" % (needle, message))
    expect_noop_markers(res)


@check("bad FVBPF_LIB: one warning, then the source tree's build/ is used")
def t_source_tree():
    bad = "/nonexistent/libfvbpf.so"
    with tempfile.TemporaryDirectory() as tmp:
        copy_package(os.path.join(tmp, "python"))
        os.mkdir(os.path.join(tmp, "build"))
        built = os.path.join(tmp, "build", "libfvbpf.so")
        shutil.copy(LIB, built)
        res = run_child(os.path.join(tmp, "python"), bad, "/")
    expect(res["path"] == built, "library_path() %r" % res["path"])
    ws = res["warnings"]
    expect(len(ws) == 1 and bad in ws[0][1], "warnings: %s" % ws)
    expect_noop_markers(res)


@check("FVBPF_LIB unset: libfvbpf.so beside the package, no warning")
def t_beside_package():
    with tempfile.TemporaryDirectory() as tmp:
        beside = os.path.join(copy_package(tmp), "libfvbpf.so")
        shutil.copy(LIB, beside)
        res = run_child(tmp, None, "/")
    expect(res["path"] == beside, "library_path() %r" % res["path"])
    expect(res["warnings"] == [], "warnings: %s" % res["warnings"])
    expect_noop_markers(res)


def main():
    global LIB
    if len(sys.argv) != 2:
        sys.stderr.write("usage: %s <path of libfvbpf.so>\n" % sys.argv[0])
        return 2
    LIB = os.path.abspath(sys.argv[1])

    print("1..%d" % len(TESTS), flush=True)
    failed = 0
    for n, (description, fn) in enumerate(TESTS, 1):
        try:
            fn()
        except Skip as e:
            print("ok %d - %s # SKIP %s" % (n, description, e))
        except Exception:
            failed += 1
            print("not ok %d - %s" % (n, description))
            for line in traceback.format_exc().rstrip().splitlines():
                print("# " + line)
        else:
            print("ok %d - %s" % (n, description))
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
