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

Nothing here may raise into the job: every entry point catches everything
and reports it through the library's status probe, and says it once in the
job's own log (logger "fvbpf": INFO when connected, WARNING when not).  Detached, a wrapper
costs two calls into the library, which return after reading its
semaphore; wrappers stay in place and a later attach reuses them.
"""

import sys

# The library's status codes (include/fvbpf_pyshim.h).
READY, FASTVIDEO, FUNC, WAITING, UNRESOLVED, REFUSED, ERROR = range(32, 39)

_FV_MODULE = "fastvideo.profiler"
_MARK = "_fvbpf_region"       # set on every wrapper this shim makes
_NAMES = {}                   # region name -> bytes kept for the process

_begin = None                 # callables taking the region name (bytes)
_end = None
_status = None                # (code, detail, value, msg bytes) -> None
_fastvideo = False            # wrap fastvideo.profiler (now or on import)
_specs = {}                   # "module:qualname" -> state string
_finder = None


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


# --- wrappers ----------------------------------------------------------------

def _wrap_function(fn, name):
    import functools
    import inspect

    encoded = _name(name)
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def awrapper(*args, **kwargs):
            _begin(encoded)
            try:
                return await fn(*args, **kwargs)
            finally:
                _end(encoded)
        setattr(awrapper, _MARK, name)
        return awrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _begin(encoded)
        try:
            return fn(*args, **kwargs)
        finally:
            _end(encoded)
    setattr(wrapper, _MARK, name)
    return wrapper


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
    kind = type(raw) if isinstance(raw, (staticmethod, classmethod)) else None
    fn = raw.__func__ if kind else raw
    if getattr(fn, _MARK, None):
        return False  # wrapped by an earlier attach
    if not isinstance(fn, types.FunctionType):
        raise TypeError("%s is a %s, not a Python function (C functions and "
                        "builtins cannot be regions)" % (spec, type(fn).__name__))
    wrapper = _wrap_function(fn, "py:" + spec)
    setattr(owner, attr, kind(wrapper) if kind else wrapper)
    return True


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


def _on_import(name, module):
    try:
        if _begin is None and not _bind_package():
            return
        if name == _FV_MODULE and _fastvideo:
            _say(FASTVIDEO, _wrap_fastvideo(module), 0,
                 "fastvideo.profiler imported and wrapped")
        for spec, st in list(_specs.items()):
            if st == "waiting" and spec.split(":", 1)[0] == name:
                _apply_spec(spec, module)
    except Exception as e:
        _say(ERROR, 0, 0, "%s: %s" % (type(e).__name__, e))


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
    for spec in specs:
        wrapped += _apply_spec(spec)
    parts = []
    if _fastvideo:
        parts.append("fastvideo.profiler %s" % (
            "wrapped" if fv else "not imported yet, watched"))
    if specs:
        parts.append("%d of %d py: functions wrapped" % (
            sum(1 for s in specs if _specs.get(s) == "wrapped"), len(specs)))
    _say(READY, fv, wrapped, "; ".join(parts) or "nothing asked")


def run(request, begin_addr, end_addr, status_addr):
    """Called by libfvbpf.so in the main thread (a pending call)."""
    global _begin, _end, _status
    try:
        import ctypes
        if _begin is None:
            marker = ctypes.PYFUNCTYPE(None, ctypes.c_char_p)
            _begin = marker(begin_addr)
            _end = marker(end_addr)
        if _status is None:
            _status = ctypes.PYFUNCTYPE(None, ctypes.c_uint32, ctypes.c_int32,
                                        ctypes.c_int64, ctypes.c_char_p)(status_addr)
        _serve(request.decode("utf-8", "replace"))
    except BaseException as e:  # never into the job
        _say(ERROR, 0, 0, "%s: %s" % (type(e).__name__, e))


def _bind_package():
    """The markers of the fvbpf package's libfvbpf.so (the import hook's
    way in: nothing was injected).  False when it has no library."""
    global _begin, _end, _status
    import ctypes
    import fvbpf  # warns once, itself, when it finds no library

    lib = getattr(fvbpf, "_lib", None)
    if lib is None:
        return False
    _begin, _end = fvbpf._begin, fvbpf._end
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
