# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""fvbpf region markers for Python.

A thin ctypes binding of libfvbpf.so, with the same helpers as FastVideo's
``fastvideo.profiler``::

    from fvbpf import profile_region, profiler_region

    @profile_region("training_dataloader")
    def load_batch(): ...

    with profiler_region("training_backward"):
        loss.backward()

While no fvbpf loader is attached, a helper costs one read of the library's
semaphore and a branch: it calls the library only while attached.  If the
library cannot be found, everything is a silent no-op (after one warning at
import): profiling must never break the job it observes.

Region names follow the C library's rules (case and surrounding white space
do not matter, the "profiler_region_" prefix is optional).  Begin and end must
happen on the same thread and nest properly.

The library is looked up in this order: the path in $FVBPF_LIB, libfvbpf.so
beside this package, build/libfvbpf.so of the fvbpf source tree this package
lives in, then the system library path.
"""

import ctypes
import ctypes.util
import functools
import inspect
import os
import threading
import warnings

__all__ = [
    "attached",
    "library_path",
    "profile_region",
    "profiler_region",
    "region_begin",
    "region_end",
]
__version__ = "0.1.0"

_LIB_NAME = "libfvbpf.so"
_RTLD_DI_LINKMAP = 2  # glibc <dlfcn.h>


def _noop(*_args):
    return 0


# Rebound by _load() once a library loads; the markers look these globals up
# at call time.
_begin = _noop
_end = _noop
_attached = _noop
_path = None
_lib = None  # the loaded library (the import hook's shim asks it for more)


class _LinkMap(ctypes.Structure):
    # Leading fields of glibc's struct link_map (<link.h>), a stable ABI.
    _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]


def _loaded_path(lib, name):
    """Absolute path of @lib, opened as @name (a path or a bare soname)."""
    path = name
    if "/" not in name:
        # dlopen() searched the system path: ask the dynamic linker where.
        try:
            dlinfo = ctypes.CDLL(None).dlinfo
            dlinfo.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
            lm = ctypes.POINTER(_LinkMap)()
            if (dlinfo(lib._handle, _RTLD_DI_LINKMAP, ctypes.byref(lm)) == 0
                    and lm and lm.contents.l_name):
                path = os.fsdecode(lm.contents.l_name)
        except Exception:
            pass
    return os.path.abspath(path) if "/" in path else path


def _open(name):
    """Load @name and look up the fvbpf symbols; raises on any failure."""
    # PyDLL, not CDLL: it keeps the GIL across the call.  The markers are tiny
    # and never block, and dropping the GIL on each one would let other
    # threads take over mid-step and skew the very timings being measured.
    lib = ctypes.PyDLL(name)
    # Proves it is the fvbpf library that fvbpf attach can find.
    ctypes.c_uint16.in_dll(lib, "fvbpf_semaphore")
    begin = lib.fvbpf_region_begin
    end = lib.fvbpf_region_end
    att = lib.fvbpf_attached
    for fn in (begin, end):
        fn.argtypes = [ctypes.c_char_p]
        fn.restype = None
    att.argtypes = []
    att.restype = ctypes.c_int
    return lib, begin, end, att


def _candidates():
    """Yield (name, from_env); lazily, since find_library() spawns tools."""
    env = os.environ.get("FVBPF_LIB")
    if env:
        yield env, True
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, _LIB_NAME),
                 os.path.join(os.path.dirname(os.path.dirname(here)),
                              "build", _LIB_NAME)):
        if os.path.exists(path):
            yield path, False
    # Plain dlopen() first: it covers LD_LIBRARY_PATH and ld.so.cache at no
    # cost; find_library() adds what only ldconfig/gcc/ld know about.
    yield _LIB_NAME, False
    found = ctypes.util.find_library("fvbpf")
    if found:
        yield found, False


def _load():
    global _begin, _end, _attached, _path, _lib

    env_error = None  # why $FVBPF_LIB failed, if it did
    errors = []       # candidates that exist but would not load
    for name, from_env in _candidates():
        try:
            lib, begin, end, att = _open(name)
        except (OSError, AttributeError, ValueError) as e:
            why = str(e)
            if why.startswith(name + ": "):  # dlerror() names the file
                why = why[len(name) + 2:]
            if from_env:
                env_error = "FVBPF_LIB=%s could not be loaded: %s" % (
                    name, why)
            elif "/" in name:
                errors.append("%s: %s" % (name, why))
            continue
        _begin, _end, _attached = begin, end, att
        _lib = lib
        _path = _loaded_path(lib, name)
        if env_error:
            _warn("fvbpf: %s. Using %s instead." % (env_error, _path))
        return

    if env_error:
        errors.insert(0, env_error)
    details = "".join(" %s." % d for d in errors)
    _warn("fvbpf: no usable %s, region markers are disabled.%s Build it with "
          "`make` in the fvbpf source tree, or set FVBPF_LIB to its path."
          % (_LIB_NAME, details))


def _warn(message, stacklevel=4):
    # Default: past _warn(), _load() and the module body to the user's import
    # statement (the warnings module skips the import machinery in between).
    warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)


try:
    _load()
except Exception as e:  # never let the profiler break the job's import
    _warn("fvbpf: region markers are disabled (%s: %s)."
          % (type(e).__name__, e), stacklevel=3)


# Encoded names, kept for the life of the process: the library's per-thread
# stack of open regions holds a name's address until its end marker, so the
# bytes must outlive the region.  Also spares a re-encoding per marker.
_names = {}
_NAMES_MAX = 4096  # past this many distinct names, stop keeping new ones


def _encode(name):
    try:
        return _names[name]
    except (KeyError, TypeError):  # new, or unhashable
        pass
    if isinstance(name, bytes):
        encoded = name
    else:
        # "replace": a lone surrogate must not raise in the middle of a job.
        encoded = str(name).encode("utf-8", "replace")
    if isinstance(name, (str, bytes)) and len(_names) < _NAMES_MAX:
        _names[name] = encoded
    return encoded


def _check_name(name, who):
    # Catches the bare "@profile_region" (no name) when the code is defined,
    # not in the middle of a run.
    if not isinstance(name, (str, bytes)):
        raise TypeError("%s() takes a region name (str), got %r; write "
                        "%s(\"name\")" % (who, type(name).__name__, who))
    return _encode(name)


def attached():
    """True while an fvbpf loader has its probes attached to this process."""
    return bool(_attached())


def library_path():
    """Path of the loaded libfvbpf.so, or None when markers are no-ops."""
    return _path


# Every marker calls the library, attached or not: its per-thread stack of
# open regions must see every begin and end, so that when fvbpf attaches in
# the middle of a region it learns which regions are already open.  The
# library itself tests the semaphore; a marker costs one ctypes call (about
# 0.25 us) while detached.

# The library keeps the address of each open region's name (its per-thread
# stack) and may read it when fvbpf attaches: a name that is not in the
# cache above is held here, per thread, until its region ends.
_held = threading.local()


def region_begin(name):
    """Mark the start of region @name (str or bytes) on this thread."""
    encoded = _encode(name)
    if _names.get(name) is not encoded:
        stack = getattr(_held, "stack", None)
        if stack is None:
            stack = _held.stack = []
        stack.append(encoded)
    _begin(encoded)


def region_end(name):
    """Mark the end of region @name (str or bytes) on this thread."""
    encoded = _encode(name)
    _end(encoded)
    stack = getattr(_held, "stack", None)
    if stack and _names.get(name) is not encoded:
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] == encoded:
                del stack[i]
                break


class profiler_region:
    """Context manager marking a region: ``with profiler_region("name"):``.

    Reusable, reentrant and shareable between threads.  Exceptions propagate;
    the end marker is still emitted.
    """

    __slots__ = ("name", "_name")

    def __init__(self, name):
        self._name = _check_name(name, "profiler_region")
        self.name = name

    def __enter__(self):
        _begin(self._name)
        return self

    def __exit__(self, exc_type, exc, tb):
        _end(self._name)
        return False

    def __repr__(self):
        return "profiler_region(%r)" % (self.name,)


def profile_region(name):
    """Decorator marking each call of a function as region @name.

    Works on functions and methods, and on staticmethod/classmethod objects
    too.  A coroutine function is marked from its first step to its return,
    awaits included: coroutines of one region running concurrently on an event
    loop would then interleave, so mark only ones that run one at a time.  On
    a generator function only the creation of the generator is marked.
    """
    encoded = _check_name(name, "profile_region")

    def decorate(fn):
        if isinstance(fn, (staticmethod, classmethod)):
            return type(fn)(decorate(fn.__func__))
        if not callable(fn):
            raise TypeError("profile_region(%r) must decorate a callable, "
                            "got %r" % (name, type(fn).__name__))

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args, **kwargs):
                _begin(encoded)
                try:
                    return await fn(*args, **kwargs)
                finally:
                    _end(encoded)
            return async_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            _begin(encoded)
            try:
                return fn(*args, **kwargs)
            finally:
                _end(encoded)
        return wrapper

    return decorate
