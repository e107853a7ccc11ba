# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""fvbpf's opt-in import hook, run at interpreter start by the
``fvbpf-hook.pth`` file that ``python3 -m fvbpf.hook install`` writes.

It loads fvbpf's Python shim (``fvbpf/_shim.py``, stdlib only) and asks it to
watch for ``fastvideo.profiler``: when a job imports it, the fvbpf package
loads libfvbpf.so and FastVideo's regions enter fvbpf's markers, so that
``fvbpf attach -r ...`` needs no ``--inject``.  Until then it costs one meta
path finder that compares module names.  ``FVBPF_HOOK=0`` turns it off for
one process.  It never raises: a broken hook must not break Python.
"""
import os
import sys


def _main():
    if os.environ.get("FVBPF_HOOK", "1") == "0" or "_fvbpf_shim" in sys.modules:
        return
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fvbpf", "_shim.py")
    spec = importlib.util.spec_from_file_location("_fvbpf_shim", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_fvbpf_shim"] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules["_fvbpf_shim"]
        raise
    mod.hook()


try:
    _main()
except Exception:
    pass
