# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A job that checks itself while fvbpf makes its functions py: regions.

  py_identity.py DIR [--blocked]

Prints "pid=P", checks its functions once ("before"), then waits until every
function in REGIONS has been made a region (its module or class attribute or
its __code__ changed: any way of wrapping counts), checks them again
("during"), forks a child that calls one and checks it, and calls each a
known number of times (COUNTS: the segments fvbpf should write), then prints
"burst done".  Once DIR/after exists (fvbpf has exited) it waits up to 20 s,
running Python but calling none of them, for their code to be the original
again, checks them a last time ("after"), imports late_mod (a py: item whose
module was not imported while fvbpf was attached) and prints "done".

--blocked: after the burst the main thread blocks in C (a thread join)
until a worker thread, once DIR/after exists, has called plain() once and
found every function's own code back ("worker: restored by a call"): the
library's restore waits for the main thread, the trampolines do not.

A check that fails prints "FAIL PHASE NAME: WHAT"; each phase ends with
"PHASE checked N".  The checks, per function, on what the job sees:
  identity   the attribute is the object taken before the attach
  pickle     pickle.loads(pickle.dumps(f)) is f (by reference)
  kind       inspect.isgeneratorfunction / iscoroutinefunction /
             isasyncgenfunction as before
  dict       a dict keyed by the function before the attach still finds it
  signature  inspect.signature (and with follow_wrapped=False) as before
  code       (after) f.__code__ is the code it had before the attach
  attrs      (after) vars(f) as before: nothing added, nothing left
"""
import asyncio
import inspect
import os
import pickle
import sys
import threading
import time


def plain(a, b=2, /, c=3, *args, d, e=5, **kw):
    return (a, b, c, args, d, e, kw)


plain.tag = "the job's own attribute"


class Base:
    def step(self, x):
        return x


class Model(Base):
    def step(self, x):
        # super(): a method with the __class__ cell as a free variable
        return super().step(x) + 1

    @staticmethod
    def st(x):
        return x * 3

    @classmethod
    def cm(cls):
        return cls.__name__


def _make():
    offset = 10

    def inner(q):
        return q + offset
    return inner


closed = _make()


def rec(n):
    return 0 if n == 0 else 1 + rec(n - 1)


async def coro(x):
    await asyncio.sleep(0)
    return x * 2


def gen(n):
    yield from range(n)


async def agen(n):
    for i in range(n):
        yield i


# name -> (owner, attribute); the function is what the attribute holds
# (a static or class method's function).
WHERE = {
    "plain": (None, "plain"), "Model.step": ("Model", "step"), "Model.st": ("Model", "st"),
    "Model.cm": ("Model", "cm"), "closed": (None, "closed"), "rec": (None, "rec"),
    "coro": (None, "coro"), "gen": (None, "gen"), "agen": (None, "agen"),
}
# made regions; the generator kinds are refused by fvbpf (or wrapped, by
# the shim before the trampolines, which the checks catch)
REGIONS = ["plain", "Model.step", "Model.st", "Model.cm", "closed", "rec", "coro"]
# pickled by reference (a class method's function and a closure never were)
PICKLED = ["plain", "Model.step", "Model.st", "rec", "coro", "gen", "agen"]
COUNTS = {"plain": 3, "Model.step": 2, "Model.st": 1, "Model.cm": 1, "closed": 1, "rec": 1,
          "coro": 2}


def raw(name):
    owner, attr = WHERE[name]
    return (globals() if owner is None else vars(globals()[owner]))[attr]


def func(name):
    r = raw(name)
    return r.__func__ if isinstance(r, (staticmethod, classmethod)) else r


def kinds(f):
    return (inspect.isgeneratorfunction(f), inspect.iscoroutinefunction(f),
            inspect.isasyncgenfunction(f))


def sigs(name):
    owner, attr = WHERE[name]
    seen = getattr(globals()[owner], attr) if owner else func(name)
    return (str(inspect.signature(seen)), str(inspect.signature(seen, follow_wrapped=False)))


REF = {n: func(n) for n in WHERE}
RAW = {n: raw(n) for n in WHERE}
CODE = {n: f.__code__ for n, f in REF.items()}
ATTRS = {n: dict(vars(f)) for n, f in REF.items()}
KINDS = {n: kinds(f) for n, f in REF.items()}
SIGS = {n: sigs(n) for n in WHERE}
KEYED = {f: n for n, f in REF.items()}

failed = 0


def fail(phase, name, what):
    global failed
    failed += 1
    print("FAIL %s %s: %s" % (phase, name, what), flush=True)


def check(phase, after=False):
    n = 0
    for name in WHERE:
        f = func(name)
        n += 1
        if raw(name) is not RAW[name] or f is not REF[name]:
            fail(phase, name, "identity: the attribute is %r, not the job's object" % (raw(name),))
        if name in PICKLED:
            try:
                back = pickle.loads(pickle.dumps(REF[name]))
                if back is not REF[name]:
                    fail(phase, name, "pickle: came back as another object")
            except Exception as e:
                fail(phase, name, "pickle: %s: %s" % (type(e).__name__, e))
        if kinds(f) != KINDS[name]:
            fail(phase, name, "kind: %r, was %r" % (kinds(f), KINDS[name]))
        if KEYED.get(f) != name:
            fail(phase, name, "dict: a dict keyed by the function misses it")
        if sigs(name) != SIGS[name]:
            fail(phase, name, "signature: %r, was %r" % (sigs(name), SIGS[name]))
        if after and f.__code__ is not CODE[name]:
            fail(phase, name, "code: __code__ is not the original")
        if after and dict(vars(f)) != ATTRS[name]:
            fail(phase, name, "attrs: %r, was %r" % (vars(f), ATTRS[name]))
    print("%s checked %d" % (phase, n), flush=True)


def wrapped(name):
    return raw(name) is not RAW[name] or func(name) is not REF[name] or \
        REF[name].__code__ is not CODE[name]


def burst():
    """COUNTS calls of each region, and the refused kinds run once each."""
    m = Model()
    got = [plain(1, d=4), plain(1, 2, 3, 4, d=5, z=6), plain(0, d=0)]
    got += [m.step(1), m.step(2), Model.st(2), Model.cm(), closed(1), rec(3)]
    got += [asyncio.run(coro(2)), asyncio.run(coro(3))]
    want = [(1, 2, 3, (), 4, 5, {}), (1, 2, 3, (4,), 5, 5, {"z": 6}), (0, 2, 3, (), 0, 5, {}),
            2, 3, 6, "Model", 11, 3, 4, 6]
    if got != want:
        fail("during", "results", "%r, want %r" % (got, want))

    async def drain():
        return [i async for i in agen(2)]
    if list(gen(3)) != [0, 1, 2] or asyncio.run(drain()) != [0, 1]:
        fail("during", "generators", "wrong values")


def child():
    """A forked child: its calls reach no fvbpf, and it keeps nothing of it."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            if plain(1, d=2) != (1, 2, 3, (), 2, 5, {}) or plain is not REF["plain"] or \
                    plain.__code__ is not CODE["plain"]:
                code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        fail("during", "child", "a forked child's plain is not its own after a call "
             "(status %d)" % status)


def wait_for(what, cond, seconds):
    end = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > end:
            print("timed out waiting for %s" % what, flush=True)
            return False
        time.sleep(0.01)
    return True


def worker(run_dir):
    wait_for("DIR/after", lambda: os.path.exists(os.path.join(run_dir, "after")), 120)
    plain(1, d=2)
    left = [n for n in WHERE if wrapped(n)]
    if left:
        fail("worker", ",".join(left), "not the original code after a call")
    else:
        print("worker: restored by a call", flush=True)


def main():
    run_dir = sys.argv[1]
    with open(os.path.join(run_dir, "late_mod.py"), "w") as f:
        f.write("def later():\n    return 5\n")
    sys.path.insert(0, run_dir)
    check("before")
    print("pid=%d" % os.getpid(), flush=True)
    if wait_for("the regions", lambda: all(wrapped(n) for n in REGIONS), 120):
        print("wrapped", flush=True)
    check("during")
    child()
    burst()
    print("burst done", flush=True)
    if "--blocked" in sys.argv:
        t = threading.Thread(target=worker, args=(run_dir,))
        t.start()
        t.join()  # blocked in C: no pending call runs here
    wait_for("DIR/after", lambda: os.path.exists(os.path.join(run_dir, "after")), 120)
    # the library's watch thread sees the semaphore fall and queues the
    # restore: this loop runs Python, never the functions themselves
    wait_for("the original code", lambda: not any(wrapped(n) for n in WHERE), 20)
    check("after", after=True)
    import late_mod
    path = os.path.join(run_dir, "late_mod.py")
    fresh = [c for c in compile(open(path).read(), path, "exec").co_consts
             if hasattr(c, "co_code")][0]
    if late_mod.later.__code__ != fresh or vars(late_mod.later):
        fail("after", "late_mod.later", "imported after the detach, yet changed")
    if any(type(f).__module__ == "_fvbpf_shim" for f in sys.meta_path):
        fail("after", "sys.meta_path", "the shim's finder is still there")
    print("done failed=%d" % failed, flush=True)


if __name__ == "__main__":
    main()
