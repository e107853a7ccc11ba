# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""fvbpf's Python shim: FastVideo's own regions, and any Python function,
as fvbpf regions, in a job that has no fvbpf code.

Two ways in, one code:
- libfvbpf.so (injected with ``fvbpf attach --inject``, or loaded by the job)
  runs this file's text as module ``_fvbpf_shim`` in the interpreter's main
  thread through ``Py_AddPendingCall()`` and calls :func:`run` with the
  request fvbpf wrote into the library's control page;
- the opt-in import hook (``python3 -m fvbpf.hook install``, see
  ``fvbpf_hook.py``) loads this file as ``_fvbpf_shim`` at interpreter start
  and calls :func:`hook`: ``fastvideo.profiler`` is wrapped when it is
  imported, with the fvbpf package's library.

FastVideo's ``fastvideo/profiler.py`` looks every collaborator up at call
time, so three patches reach every call site, wherever it was imported:
- ``TorchProfilerController.region`` (a method on the class): each region
  enters and leaves fvbpf's markers around FastVideo's own ``region``, which
  still does its own profiling when FastVideo's profiler is on;
- ``TorchProfilerController.has_profiler`` (a property): true when asked by
  ``profile_region``'s wrapper (and only there), so a decorated method goes
  through ``region`` even with FastVideo's profiler off;
- ``get_global_controller`` (a module global): when ``profiler_region``
  asks and there is no controller, a disabled one, whose ``region`` enters
  fvbpf's markers.
Where FastVideo itself would never open a region (a decorated method of an
object without ``profiler_controller``) neither does fvbpf.

A py: function is not replaced: its ``__code__`` is swapped for a
trampoline that enters the markers around a private copy of the function
(the original code), so the function object, its identity, pickling by
reference and its kind stay the job's; once fvbpf is gone the original code
is put back (see ``restore``).

Nothing here may raise into the job: every entry point catches everything
and reports it through the library's status probe, and says it once in the
job's own log (logger "fvbpf": INFO when connected, WARNING when not).
Detached, FastVideo's wrappers stay in place (a region costs two calls into
the library, which return after reading its semaphore) and a later attach
reuses them.
"""

import _thread
import sys

# The library's status codes (include/fvbpf_pyshim.h).
READY, FASTVIDEO, FUNC, WAITING, UNRESOLVED, REFUSED, ERROR = range(32, 39)
# UNRESOLVED's detail: the name resolves to something that cannot be a
# region (a builtin, a generator function), not a typo.
NOT_A_REGION = 1

_FV_MODULE = "fastvideo.profiler"
_MARK = "_fvbpf_region"       # set on every wrapper this shim makes
_NAMES = {}                   # region name -> bytes kept for the process

_begin = None                 # callables taking the region name (bytes)
_end = None
_status = None                # (code, detail, value, msg bytes) -> None
_fastvideo = False            # wrap fastvideo.profiler (now or on import)
_specs = {}                   # "module:qualname" -> state string
_finder = None
# Whether fvbpf is attached: the library's semaphore and its control page's
# magic (0 in a forked child: the page is wiped), as ctypes views (objects
# with .value); None where the shim was not told (a test), then "attached".
_sem = None
_ctl = None
_swaps = {}                   # id(function) -> _Swap while its code is a trampoline
# Swaps and restores: the main thread's pending call, the thread whose call
# restores after a detach, an import.  Only ever taken without blocking
# where a forked child might find it held by a thread it does not have.
_lock = _thread.allocate_lock()


_logged = set()


def _say(code, detail=0, value=0, msg=""):
    try:
        if _status is not None:
            _status(code, detail, value, str(msg).encode("utf-8", "replace")[:150])
    except Exception:
        pass
    # One line in the job's own log per kind of news (logger "fvbpf"):
    # INFO when regions are connected, WARNING when something is off.
    if code in _logged or code in (FUNC, WAITING):
        return
    _logged.add(code)
    try:
        import logging
        log = logging.getLogger("fvbpf")
        if code in (READY, FASTVIDEO):
            log.info("fvbpf: %s", msg)
        else:
            log.warning("fvbpf: %s", msg)
    except Exception:
        pass


def _name(text):
    # The bytes must outlive the region (the library keeps their address
    # while it is open): cached for the process, or held by the caller.
    b = _NAMES.get(text)
    if b is None:
        b = text.encode("utf-8", "replace")
        if len(_NAMES) < 4096:
            _NAMES[text] = b
    return b


def _refusal():
    """Why this interpreter is not one the shim may patch, or None."""
    try:
        import sysconfig
        if sysconfig.get_config_var("Py_GIL_DISABLED"):
            return "a free-threaded (no GIL) Python build"
    except Exception:
        pass
    for modname in ("_interpreters", "_xxsubinterpreters"):
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        try:
            if len(mod.list_all()) > 1:
                return "a process running sub-interpreters"
        except Exception:
            pass
    return None


# --- py: functions -------------------------------------------------------------
#
# The job keeps its function object: module and class attributes, references
# taken before the attach, dicts keyed by it, pickling by reference, inspect's
# view of its kind and signature all stay what they were.  Only its __code__
# changes while fvbpf is attached: a trampoline with the function's own
# parameters, free variables (so that its closure still fits), names, file,
# first line and kind, which calls a private copy of the function (the
# original code, same globals and closure) between the markers.

_CO_VARARGS, _CO_VARKEYWORDS, _CO_NESTED = 0x04, 0x08, 0x10
_CO_GENERATOR, _CO_COROUTINE = 0x20, 0x80
_CO_ITERABLE_COROUTINE, _CO_ASYNC_GENERATOR = 0x100, 0x200
_CO_KIND = (_CO_VARARGS | _CO_VARKEYWORDS | _CO_GENERATOR | _CO_COROUTINE |
            _CO_ITERABLE_COROUTINE | _CO_ASYNC_GENERATOR)

# Compiled once per function.  The trampoline reaches the shim through its
# constants, since its globals and closure are the job's: 'fvbpf:all' is a
# placeholder replaced by a tuple in its constants (a ':' keeps it apart
# from any keyword argument name), unpacked into locals named apart from
# the function's ({p}: a prefix none of its names has), which costs less
# than any other way to call a constant.  The dead "if 0" names the
# original's free variables, which makes them the trampoline's too, in the
# same order.
_TRAMPOLINE = """\
def _fvbpf_outer():
    {cells}
    {async_}def _fvbpf_trampoline({params}):
        {p}begin, {p}end, {p}call, {p}name, {p}sem, {p}ctl, {p}gone = 'fvbpf:all'
        if not ({p}sem.value and {p}ctl.value):
            {p}gone()
        {p}begin({p}name)
        try:
            return {await_}{p}call({args})
        finally:
            {p}end({p}name)
        if 0:
            ({names})
    return _fvbpf_trampoline
"""


class _NotARegion(Exception):
    """A name that resolves to something that cannot be a region."""


class _Attached:
    """Stands in for the semaphore and the magic where the shim was not told
    where they are: always attached, nothing restored by a call."""

    __slots__ = ()
    value = 1


class _Swap:
    __slots__ = ("fn", "orig", "tramp", "spec")

    def __init__(self, fn, orig, tramp, spec):
        self.fn, self.orig, self.tramp, self.spec = fn, orig, tramp, spec


def _alive():
    """fvbpf is attached to this process (not gone, not a forked child)."""
    return _sem is None or bool(_sem.value and _ctl.value)


def _ident(name):
    import keyword
    if not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
        raise _NotARegion("cannot be a region: its code names %r, no Python identifier"
                          % (name,))
    return name


def _signature_source(code):
    """The parameter list of @code and the call that passes each parameter
    on as it came, as source."""
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    names = [_ident(n) for n in code.co_varnames[:npos + nkw]]
    pos, kw = names[:npos], names[npos:]
    i = npos + nkw
    star = dstar = None
    if code.co_flags & _CO_VARARGS:
        star = _ident(code.co_varnames[i])
        i += 1
    if code.co_flags & _CO_VARKEYWORDS:
        dstar = _ident(code.co_varnames[i])
    nonly = getattr(code, "co_posonlyargcount", 0)
    params = pos[:nonly] + (["/"] if nonly else []) + pos[nonly:]
    if star:
        params.append("*" + star)
    elif kw:
        params.append("*")
    params += kw
    args = list(pos) + (["*" + star] if star else []) + ["%s=%s" % (k, k) for k in kw]
    if dstar:
        params.append("**" + dstar)
        args.append("**" + dstar)
    return ", ".join(params), ", ".join(args)


def _line_table(code):
    """(field, value) that puts every instruction of @code on its first
    line: a traceback through the trampoline names the function's def line."""
    n = len(code.co_code)
    if sys.version_info >= (3, 11):  # PEP 657's table: entries of up to 8 code units
        out = bytearray()
        units = n // 2
        while units > 0:
            k = min(units, 8)
            out += bytes((0x80 | 13 << 3 | (k - 1), 0))  # "no columns", line +0
            units -= k
        return "co_linetable", bytes(out)
    if sys.version_info >= (3, 10):  # (bytes, line delta) pairs
        out = bytearray()
        while n > 0:
            k = min(n, 254)
            out += bytes((k, 0))
            n -= k
        return "co_linetable", bytes(out)
    return "co_lnotab", b""  # no entries: all on co_firstlineno


def _trampoline(fn, name, copy):
    """The trampoline code for @fn: the markers around copy()."""
    code = fn.__code__
    params, args = _signature_source(code)
    free = [_ident(n) for n in code.co_freevars]
    cells = " = ".join(free) + " = None" if free else "pass"
    coro = bool(code.co_flags & _CO_COROUTINE)
    taken = code.co_varnames + code.co_cellvars + code.co_freevars
    prefix = "_fvbpf_"
    while any(n.startswith(prefix) for n in taken):
        prefix += "_"
    src = _TRAMPOLINE.format(cells=cells, names="".join(n + ", " for n in free), params=params,
                             args=args, p=prefix,
                             async_="async " if coro else "", await_="await " if coro else "")
    module = compile(src, "<fvbpf trampoline>", "exec", dont_inherit=True)
    codetype = type(code)
    outer = [c for c in module.co_consts if isinstance(c, codetype)][0]
    inner = [c for c in outer.co_consts if isinstance(c, codetype)][0]
    always = _Attached()
    fill = (_begin, _end, copy, name, always if _sem is None else _sem,
            always if _ctl is None else _ctl, restore)
    changes = {
        "co_consts": tuple(fill if type(c) is str and c == "fvbpf:all" else c
                           for c in inner.co_consts),
        "co_flags": inner.co_flags & ~_CO_NESTED | code.co_flags & _CO_NESTED,
        "co_name": code.co_name, "co_filename": code.co_filename,
        "co_firstlineno": code.co_firstlineno,
    }
    if hasattr(code, "co_qualname"):
        changes["co_qualname"] = code.co_qualname
    field, table = _line_table(inner)
    changes[field] = table
    tramp = inner.replace(**changes)
    nargs = code.co_argcount + code.co_kwonlyargcount + \
        bool(code.co_flags & _CO_VARARGS) + bool(code.co_flags & _CO_VARKEYWORDS)
    if (not any(c is fill for c in tramp.co_consts) or
            tramp.co_freevars != code.co_freevars or
            tramp.co_flags & _CO_KIND != code.co_flags & _CO_KIND or
            tramp.co_argcount != code.co_argcount or
            tramp.co_kwonlyargcount != code.co_kwonlyargcount or
            getattr(tramp, "co_posonlyargcount", 0) != getattr(code, "co_posonlyargcount", 0) or
            tramp.co_varnames[:nargs] != code.co_varnames[:nargs]):
        raise _NotARegion("cannot be a region: a trampoline would not match its code")
    return tramp


def _swap(fn, spec):
    """Make @fn's calls regions named py:@spec: True, or False where an
    earlier attach did and it still is."""
    import types

    rec = _swaps.get(id(fn))
    if rec is not None and rec.fn is fn and fn.__code__ is rec.tramp:
        return False
    code = fn.__code__
    if code.co_flags & (_CO_GENERATOR | _CO_ITERABLE_COROUTINE):
        raise _NotARegion("is a generator function: not a region; name the function that "
                          "iterates it")
    if code.co_flags & _CO_ASYNC_GENERATOR:
        raise _NotARegion("is an async generator function: not a region; name the function "
                          "that iterates it")
    copy = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    tramp = _trampoline(fn, _name("py:" + spec), copy)
    fn.__code__ = tramp
    _swaps[id(fn)] = _Swap(fn, code, tramp, spec)
    return True


def _unswap(keep):
    """Every swapped function whose spec is not in @keep gets its own code
    back (unless the job has put other code there since); py: items not
    in @keep are no longer waited for.  Under _lock."""
    for key, rec in list(_swaps.items()):
        if rec.spec in keep:
            continue
        del _swaps[key]
        if rec.fn.__code__ is rec.tramp:
            rec.fn.__code__ = rec.orig
    for spec, st in list(_specs.items()):
        if spec not in keep and st in ("waiting", "wrapped"):
            _specs[spec] = "off"
    _drop_finder()


def restore():
    """fvbpf is gone (its semaphore fell to 0) or this is a forked child (its
    control page reads 0): the py: functions get their own code back and no
    module is watched for py: items any more.  Run by the library (a
    pending call, once the semaphore fell) and by a trampoline's first call
    after that, whichever comes first; returns at once while attached."""
    try:
        if _alive() or not _lock.acquire(False):
            return
        try:
            if not _alive():
                _unswap(())
        finally:
            _lock.release()
    except Exception:
        pass

# --- FastVideo's entry points ---------------------------------------------------

def _wrap_fastvideo(mod):
    """Patch fastvideo.profiler in place (once); returns how many of its
    three entry points are fvbpf's now."""
    cls = getattr(mod, "TorchProfilerController", None)
    if cls is None:
        raise AttributeError("fastvideo.profiler has no TorchProfilerController")
    n = 0
    region = cls.__dict__.get("region")
    if region is not None:
        if not getattr(region, _MARK, None):
            # The parameter keeps FastVideo's name: callers may pass it
            # by keyword.
            def patched_region(self, region, _orig=region, _marks=_marks):
                # FastVideo's region does nothing while its profiler is off:
                # fvbpf's markers alone (a cached, stateless pair).
                if getattr(self, "_profiler", True) is None:
                    return _marks(region)
                return _Region(self, region, _orig)
            setattr(patched_region, _MARK, "fastvideo")
            patched_region.__wrapped__ = region
            patched_region.__doc__ = region.__doc__
            cls.region = patched_region
        n += 1

    prop = cls.__dict__.get("has_profiler")
    decorate = getattr(mod, "profile_region", None)
    if isinstance(prop, property) and decorate is not None:
        if not getattr(prop.fget, _MARK, None):
            # The code object of profile_region's inner wrapper: the only
            # caller told True while FastVideo's profiler is off.
            asker = decorate("profiler_region_training_train")(lambda self: None).__code__
            fget = prop.fget

            def has_profiler(self, _fget=fget, _asker=asker, _frame=sys._getframe):
                if _frame(1).f_code is _asker:
                    return True
                return _fget(self)
            setattr(has_profiler, _MARK, "fastvideo")
            cls.has_profiler = property(has_profiler, prop.fset, prop.fdel, prop.__doc__)
        n += 1

    ggc = getattr(mod, "get_global_controller", None)
    gen = getattr(getattr(mod, "profiler_region", None), "__wrapped__", None)
    if ggc is not None and gen is not None:
        if not getattr(ggc, _MARK, None):
            asker = gen.__code__
            state = {}

            def get_global_controller(_orig=ggc, _asker=asker, _frame=sys._getframe):
                c = _orig()
                if c is None and _frame(1).f_code is _asker:
                    c = state.get("dormant")
                    if c is None:
                        c = state["dormant"] = cls(None, (), disabled=True)
                return c
            setattr(get_global_controller, _MARK, "fastvideo")
            get_global_controller.__wrapped__ = ggc
            mod.get_global_controller = get_global_controller
        n += 1
    return n


_MARKS = {}


class _Marks:
    """fvbpf's markers as a context manager: stateless, so one per name
    serves every thread and nesting."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __enter__(self):
        _begin(self._name)

    def __exit__(self, exc_type, exc, tb):
        _end(self._name)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def inner(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return inner


class _Null:
    """A region name that is not a str: FastVideo's region, no markers."""

    __slots__ = ()

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc, tb):
        return False


def _marks(name):
    m = _MARKS.get(name)
    if m is None:
        if not isinstance(name, str):
            return _Null()
        m = _Marks(_name(name))
        if len(_MARKS) < 4096:
            _MARKS[name] = m
    return m


class _Region:
    """What the patched ``controller.region(name)`` returns: fvbpf's markers
    around FastVideo's own context manager (made afresh at each enter)."""

    __slots__ = ("_args", "_inner", "_name")

    def __init__(self, controller, name, orig):
        self._args = (orig, controller, name)
        self._inner = None
        self._name = _name(name) if isinstance(name, str) else None

    def __enter__(self):
        orig, controller, name = self._args
        if self._name is not None:
            _begin(self._name)
        try:
            self._inner = orig(controller, name)
            return self._inner.__enter__()
        except BaseException:
            if self._name is not None:
                _end(self._name)
            raise

    def __exit__(self, exc_type, exc, tb):
        try:
            return self._inner.__exit__(exc_type, exc, tb)
        finally:
            if self._name is not None:
                _end(self._name)

    def __call__(self, fn):
        # contextlib's context managers also decorate functions.
        import functools
        orig, controller, name = self._args

        @functools.wraps(fn)
        def inner(*args, **kwargs):
            with _Region(controller, name, orig):
                return fn(*args, **kwargs)
        return inner


def _resolve(module, qualname):
    """(owner, attribute name, raw attribute) of module:qualname."""
    owner = module
    parts = qualname.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part)
    attr = parts[-1]
    raw = None
    if isinstance(owner, type):
        for klass in owner.__mro__:
            if attr in klass.__dict__:
                raw = klass.__dict__[attr]
                break
    else:
        raw = getattr(owner, "__dict__", {}).get(attr)
    if raw is None:
        raise AttributeError("%s has no attribute %r" % (
            getattr(owner, "__qualname__", getattr(owner, "__name__", "?")), attr))
    return owner, attr, raw


def _wrap_spec(spec, module):
    import types

    modname, qualname = spec.split(":", 1)
    owner, attr, raw = _resolve(module, qualname)
    fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    if getattr(fn, _MARK, None):
        return False  # an older shim's wrapper, from an earlier attach
    if not isinstance(fn, types.FunctionType):
        raise _NotARegion("is a %s, not a Python function (C functions and builtins cannot "
                          "be regions)" % type(fn).__name__)
    return _swap(fn, spec)

# --- imports after the shim ran -----------------------------------------------

class _Finder:
    """A meta path finder that only watches names: once a watched module
    has been executed by its own loader, the shim patches it."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _watched():
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader)
                return spec
        return None

    def invalidate_caches(self):
        pass


class _Loader:
    """Delegates to the real loader; patches the module once it ran."""

    def __init__(self, loader):
        self._loader = loader

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            module.__loader__ = self._loader
            if module.__spec__ is not None:
                module.__spec__.loader = self._loader
        except Exception:
            pass
        _on_import(module.__name__, module)


def _watched():
    names = set(spec.split(":", 1)[0] for spec, st in _specs.items() if st == "waiting")
    if _fastvideo:
        names.add(_FV_MODULE)
    return names


def _ensure_finder():
    global _finder
    if _finder is None:
        _finder = _Finder()
        sys.meta_path.insert(0, _finder)


def _drop_finder():
    """Out of sys.meta_path once it watches nothing (FastVideo's module is
    watched for good once asked for)."""
    global _finder
    if _finder is None or _watched():
        return
    try:
        sys.meta_path.remove(_finder)
    except ValueError:
        pass
    _finder = None


def _on_import(name, module):
    try:
        if _begin is None and not _bind_package():
            return
        if name == _FV_MODULE and _fastvideo:
            _say(FASTVIDEO, _wrap_fastvideo(module), 0,
                 "fastvideo.profiler imported and wrapped")
        if any(st == "waiting" for st in _specs.values()):
            _import_specs(name, module)
    except Exception as e:
        _say(ERROR, 0, 0, "%s: %s" % (type(e).__name__, e))


def _import_specs(name, module):
    """The py: items waiting for module @name, now that it ran."""
    # A forked child (its control page reads 0) may find the lock held by a
    # thread it does not have: it never waits for it.
    if not _alive():
        restore()
        return
    if not _lock.acquire(True, 5):
        return
    try:
        for spec, st in list(_specs.items()):
            if st == "waiting" and spec.split(":", 1)[0] == name:
                _apply_spec(spec, module)
        _drop_finder()
    finally:
        _lock.release()


def _apply_spec(spec, module=None):
    modname = spec.split(":", 1)[0]
    if module is None:
        module = sys.modules.get(modname)
    if module is None:
        _specs[spec] = "waiting"
        _ensure_finder()
        _say(WAITING, 0, 0, "py:%s: %s is not imported yet; wrapped when it is"
             % (spec, modname))
        return 0
    try:
        fresh = _wrap_spec(spec, module)
    except _NotARegion as e:
        _specs[spec] = "unresolved"
        _say(UNRESOLVED, NOT_A_REGION, 0, "py:%s %s" % (spec, e))
        return 0
    except Exception as e:
        _specs[spec] = "unresolved"
        _say(UNRESOLVED, 0, 0, "py:%s: %s" % (spec, e))
        return 0
    _specs[spec] = "wrapped"
    _say(FUNC, int(fresh), 0, "py:%s" % spec)
    return 1


# --- entry points -------------------------------------------------------------

def _configure(request):
    global _fastvideo
    specs = []
    for line in request.splitlines():
        line = line.strip()
        if line == "fastvideo":
            _fastvideo = True
        elif line.startswith("py ") and ":" in line:
            specs.append(line[3:].strip())
    return specs


def _serve(request):
    why = _refusal()
    if why:
        _say(REFUSED, 0, 0, "Python regions are off in %s" % why)
        return
    specs = _configure(request)
    fv = 0
    if _fastvideo:
        mod = sys.modules.get(_FV_MODULE)
        if mod is not None:
            fv = _wrap_fastvideo(mod)
        else:
            _ensure_finder()
    wrapped = 0
    if not _lock.acquire(True, 5):
        _say(ERROR, 0, 0, "py: functions: the shim's lock stayed held for 5 s")
        return
    try:
        # An earlier attach's functions that this one does not ask for
        # (their restore may not have run: nothing called them since).
        _unswap(set(specs))
        for spec in specs:
            wrapped += _apply_spec(spec)
    finally:
        _lock.release()
    parts = []
    if _fastvideo:
        parts.append("fastvideo.profiler %s" % (
            "wrapped" if fv else "not imported yet, watched"))
    if specs:
        parts.append("%d of %d py: functions wrapped" % (
            sum(1 for s in specs if _specs.get(s) == "wrapped"), len(specs)))
    _say(READY, fv, wrapped, "; ".join(parts) or "nothing asked")


def run(request, begin_addr, end_addr, status_addr):
    """Called by libfvbpf.so in the main thread (a pending call).  The
    library also sets the globals _fvbpf_sem and _fvbpf_ctl: where its
    semaphore and its control page are."""
    global _begin, _end, _status, _sem, _ctl
    try:
        import ctypes
        if _begin is None:
            marker = ctypes.PYFUNCTYPE(None, ctypes.c_char_p)
            _begin = marker(begin_addr)
            _end = marker(end_addr)
        if _status is None:
            _status = ctypes.PYFUNCTYPE(None, ctypes.c_uint32, ctypes.c_int32,
                                        ctypes.c_int64, ctypes.c_char_p)(status_addr)
        sem_addr = globals().get("_fvbpf_sem", 0)
        ctl_addr = globals().get("_fvbpf_ctl", 0)
        if _sem is None and sem_addr and ctl_addr:
            # The semaphore and the control page's magic (its first word).
            _sem = ctypes.c_uint16.from_address(sem_addr)
            _ctl = ctypes.c_uint32.from_address(ctl_addr)
        _serve(request.decode("utf-8", "replace"))
    except BaseException as e:  # never into the job
        _say(ERROR, 0, 0, "%s: %s" % (type(e).__name__, e))


def _bind_package():
    """The markers of the fvbpf package's libfvbpf.so (the import hook's
    way in: nothing was injected).  False when it has no library."""
    global _begin, _end, _status, _sem, _ctl
    import ctypes
    import fvbpf  # warns once, itself, when it finds no library

    lib = getattr(fvbpf, "_lib", None)
    if lib is None:
        return False
    _begin, _end = fvbpf._begin, fvbpf._end
    try:
        page = ctypes.c_void_p.in_dll(lib, "fvbpf_control").value
        if page:
            _sem = ctypes.c_uint16.in_dll(lib, "fvbpf_semaphore")
            _ctl = ctypes.c_uint32.from_address(page)
    except (AttributeError, ValueError):
        pass  # never restored by a call: the library's pending call does it
    try:
        st = lib.fvbpf_py_status
        st.argtypes = [ctypes.c_uint32, ctypes.c_int32, ctypes.c_int64, ctypes.c_char_p]
        st.restype = None
        _status = st
    except AttributeError:
        pass  # a library older than the shim: no answers, regions work
    try:
        # Nothing may call a marker for a while: a thread of the library's
        # notices fvbpf's requests (four reads a second).
        lib.fvbpf_py_watch.restype = None
        lib.fvbpf_py_watch()
    except AttributeError:
        pass
    return True


def hook():
    """The import hook (fvbpf_hook.py): wrap fastvideo.profiler when it is
    imported, binding the package's library only then."""
    global _fastvideo
    try:
        _fastvideo = True
        mod = sys.modules.get(_FV_MODULE)
        if mod is not None:
            _on_import(_FV_MODULE, mod)
        else:
            _ensure_finder()
    except BaseException:
        pass
