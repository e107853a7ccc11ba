#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""The Python shim's py: functions (python/fvbpf/_shim.py) alone, standard
library only, on any CPython from 3.8: recording markers instead of
libfvbpf.so, and a semaphore and a control page magic that the checks
raise and drop by hand.  A py: function keeps its object, kind, signature
and pickling; its calls are regions; once "fvbpf is gone" its own code is
back.  Prints "ok NAME" per check; exits 1 at the first failure."""
import asyncio
import importlib.util
import inspect
import os
import pickle
import sys
import threading
import traceback
import types

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "fvbpf",
                    "_shim.py")
events = []
status = []


class Word:
    """What ctypes' view of the semaphore or the page's magic offers."""

    def __init__(self, value):
        self.value = value


def check(name, cond):
    if not cond:
        print("FAIL %s (Python %s): events=%r status=%r" % (
            name, sys.version.split()[0], events[-12:], status[-4:]))
        sys.exit(1)
    print("ok %s" % name)


def marks(fn):
    del events[:]
    fn()
    return list(events)


def load_shim():
    spec = importlib.util.spec_from_file_location("_fvbpf_shim", SHIM)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_fvbpf_shim"] = mod
    spec.loader.exec_module(mod)
    return mod


shim = load_shim()
shim._begin = lambda b: events.append(("B", b.decode()))
shim._end = lambda b: events.append(("E", b.decode()))
shim._status = lambda code, detail, value, msg: status.append((code, detail, value, msg.decode()))
sem, magic = Word(1), Word(0x46564250)
shim._sem, shim._ctl = sem, magic

SOURCE = '''
import sys

def plain(a, b=2, /, c=3, *args, d, e=5, **kw):
    return (a, b, c, args, d, e, kw)

class Base:
    def step(self, x):
        return x

class T(Base):
    def step(self, x):
        return super().step(x) + 1

    @staticmethod
    def st(x):
        return x * 3

    @classmethod
    def cm(cls):
        return cls.__name__

def _make():
    zeta, alpha = 10, 1
    def inner(q):
        return q + zeta + alpha
    return inner

closed = _make()

def rec(n):
    return 0 if n == 0 else 1 + rec(n - 1)

async def co(x):
    return x * 2

def gen(n):
    yield from range(n)

async def agen():
    yield 1

def boom():
    x = 1
    raise ValueError("boom %d" % x)

def caller_locals(x):
    return sorted(sys._getframe(1).f_locals)

def clash(_fvbpf_begin, *, _fvbpf__x=1):
    return _fvbpf_begin + _fvbpf__x
'''
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim_py_target.py")
mod = types.ModuleType("shim_py_target")
mod.__file__ = path
exec(compile(SOURCE, path, "exec"), mod.__dict__)
sys.modules["shim_py_target"] = mod
NAMES = ["plain", "closed", "rec", "co", "gen", "agen", "boom", "caller_locals", "clash"]
ref = {n: getattr(mod, n) for n in NAMES}
ref.update({"T.step": vars(mod.T)["step"], "T.st": vars(mod.T)["st"].__func__,
            "T.cm": vars(mod.T)["cm"].__func__})
code = {n: f.__code__ for n, f in ref.items()}
sig = {n: str(inspect.signature(f, follow_wrapped=False)) for n, f in ref.items()}
kind = {n: (inspect.isgeneratorfunction(f), inspect.iscoroutinefunction(f),
            inspect.isasyncgenfunction(f)) for n, f in ref.items()}
mod.plain.tag = "the job's"
attrs = {n: dict(vars(f)) for n, f in ref.items()}
keyed = {f: n for n, f in ref.items()}


def same_objects():
    return all(getattr(mod, n) is ref[n] for n in NAMES) and \
        vars(mod.T)["step"] is ref["T.step"] and vars(mod.T)["st"].__func__ is ref["T.st"]


def swapped(n):
    return ref[n].__code__ is not code[n]


REQ = "".join("py shim_py_target:%s\n" % n for n in
              ["plain", "T.step", "T.st", "T.cm", "closed", "rec", "co", "gen", "agen", "boom",
               "caller_locals", "clash", "later_mod:f"])
REQ = REQ.replace("py shim_py_target:later_mod:f", "py later_mod:f")
shim._serve(REQ)
regions = ["plain", "T.step", "T.st", "T.cm", "closed", "rec", "co", "boom", "caller_locals",
           "clash"]
check("regions swapped, generators not", all(swapped(n) for n in regions)
      and not swapped("gen") and not swapped("agen"))
check("identity: module and class attributes are the job's objects", same_objects())
check("pickle by reference", all(pickle.loads(pickle.dumps(ref[n])) is ref[n]
                                  for n in ["plain", "T.step", "T.st", "rec", "co", "gen"]))
check("kinds as before", all((inspect.isgeneratorfunction(f), inspect.iscoroutinefunction(f),
                              inspect.isasyncgenfunction(f)) == kind[n] for n, f in ref.items()))
check("signatures as before (code, not __wrapped__)",
      all(str(inspect.signature(f, follow_wrapped=False)) == sig[n] for n, f in ref.items()))
check("no attribute added", all(dict(vars(f)) == attrs[n] for n, f in ref.items()))
check("a dict keyed by the function", all(keyed[f] == n for n, f in ref.items()))
check("names for tracebacks", all(
    (f.__code__.co_name, f.__code__.co_filename, f.__code__.co_firstlineno) ==
    (code[n].co_name, code[n].co_filename, code[n].co_firstlineno) for n, f in ref.items()))

P = "py:shim_py_target:"
check("markers around a call", marks(lambda: mod.plain(1, d=4)) == [("B", P + "plain"), ("E", P + "plain")])
check("arguments as given, defaults as the function has them",
      mod.plain(1, d=4) == (1, 2, 3, (), 4, 5, {}) and
      mod.plain(1, 7, 8, 9, d=0, e=1, z=2) == (1, 7, 8, (9,), 0, 1, {"z": 2}))
mod.plain.__defaults__ = (20, 30)
mod.plain.__kwdefaults__ = {"e": 50}
check("defaults changed while swapped", mod.plain(1, d=4) == (1, 20, 30, (), 4, 50, {}))
mod.plain.__defaults__, mod.plain.__kwdefaults__ = (2, 3), {"e": 5}
try:
    mod.plain()
    msg = ""
except TypeError as e:
    msg = str(e)
check("argument errors as the function's own", "plain() missing 1 required positional" in msg)
check("method with super()", marks(lambda: mod.T().step(1)) == [("B", P + "T.step"), ("E", P + "T.step")]
      and mod.T().step(1) == 2)
check("static and class methods", mod.T.st(2) == 6 and mod.T().st(1) == 3 and mod.T.cm() == "T"
      and marks(mod.T.cm) == [("B", P + "T.cm"), ("E", P + "T.cm")])
check("closure (free variables in any order)", mod.closed(1) == 12
      and ref["closed"].__code__.co_freevars == code["closed"].co_freevars)
check("parameters named like the shim's locals", mod.clash(1, _fvbpf__x=2) == 3
      and marks(lambda: mod.clash(1)) == [("B", P + "clash"), ("E", P + "clash")])
check("recursion nests", marks(lambda: mod.rec(2)) == [("B", P + "rec")] * 3 + [("E", P + "rec")] * 3)
check("coroutine: a region around its run", marks(lambda: asyncio.run(mod.co(2))) ==
      [("B", P + "co"), ("E", P + "co")] and asyncio.run(mod.co(2)) == 4)
check("generators run as before, no markers", marks(lambda: list(mod.gen(3))) == []
      and list(mod.gen(3)) == [0, 1, 2])
check("generator kinds refused, one line each", [
    s[3] for s in status if s[0] == shim.UNRESOLVED and s[1] == shim.NOT_A_REGION] == [
    "py:shim_py_target:gen is a generator function: not a region; name the function that iterates it",
    "py:shim_py_target:agen is an async generator function: not a region; name the function "
    "that iterates it"])
try:
    marks(mod.boom)
    tb = None
except ValueError:
    tb = traceback.extract_tb(sys.exc_info()[2])
check("an exception passes, the region ends", tb is not None and
      events == [("B", P + "boom"), ("E", P + "boom")])
def_line = code["boom"].co_firstlineno
check("traceback: the function's file, its def line, then its own line",
      [(f.filename, f.name) for f in tb[-2:]] == [(path, "boom")] * 2 and
      tb[-2].lineno == def_line and tb[-1].lineno == def_line + 2)
seen = mod.caller_locals(1)
check("the trampoline's frame locals can be read: the arguments and the shim's own",
      "x" in seen and all(n == "x" or n.startswith("_fvbpf_") for n in seen))

# a second request: nothing swapped twice, answered as an earlier attach's
del status[:]
shim._serve(REQ)
check("re-attach: reused, not swapped twice", marks(lambda: mod.plain(1, d=4)) ==
      [("B", P + "plain"), ("E", P + "plain")] and
      [s[1] for s in status if s[0] == shim.FUNC] == [0] * len(regions))

# threads calling while the main thread swaps and restores
errors = []
stop = threading.Event()


def hammer():
    try:
        while not stop.is_set():
            if mod.plain(1, d=2) != (1, 2, 3, (), 2, 5, {}) or mod.T().step(1) != 2:
                errors.append("wrong result")
    except BaseException as e:  # anything at all is a failure
        errors.append(repr(e))


threads = [threading.Thread(target=hammer) for _ in range(3)]
for t in threads:
    t.start()
for i in range(200):
    shim._serve("py shim_py_target:plain\n" if i % 2 else REQ)
stop.set()
for t in threads:
    t.join()
check("threads calling while the code is swapped back and forth", not errors and same_objects())
check("a request without an item puts that function's code back",
      not swapped("T.step") and swapped("plain"))
shim._serve(REQ)

# the job's own code in __code__ since: kept
mine = compile("def mine(q):\n    return -q\n", "<job>", "exec").co_consts[0]
ref["rec"].__code__ = mine

# fvbpf gone: the first call restores everything, its own region balanced
check("attached: restore() does nothing", (shim.restore(), swapped("plain"))[1])
sem.value = 0
check("detached: the call that sees it is still a whole region",
      marks(lambda: mod.plain(1, d=4)) == [("B", P + "plain"), ("E", P + "plain")])
check("detached: every function has its own code again",
      all(ref[n].__code__ is code[n] for n in ref if n != "rec"))
check("the job's own __code__ kept", ref["rec"].__code__ is mine)
ref["rec"].__code__ = code["rec"]
check("after: nothing added, objects the job's", same_objects() and
      all(dict(vars(f)) == attrs[n] for n, f in ref.items()))
check("after: no more markers", marks(lambda: (mod.plain(1, d=4), mod.T().step(1))) == [])
check("after: the finder left sys.meta_path", shim._finder is None and
      not any(type(f).__module__ == "_fvbpf_shim" for f in sys.meta_path))
later = types.ModuleType("later_mod")
exec("def f():\n    return 5\n", later.__dict__)
before = later.f.__code__
shim._on_import("later_mod", later)
check("after: a module imported later is left alone", later.f.__code__ is before)

# a forked child may find the lock held by a thread it does not have:
# calls go on, nothing waits
sem.value = 1
shim._serve(REQ)
check("attached again: swapped again", swapped("plain"))
shim._lock.acquire()
magic.value = 0  # what a forked child reads
check("lock held: a call goes on", mod.plain(5, d=1)[0] == 5 and swapped("plain"))
shim._lock.release()
check("lock free: the next call restores", mod.plain(5, d=1)[0] == 5 and not swapped("plain"))
print("all ok")
