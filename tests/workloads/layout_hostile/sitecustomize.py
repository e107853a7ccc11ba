# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A job owner's hostile sitecustomize for --record-shapes' measurement
(tests/bats/torch_layout.bats): the target runs with PYTHONPATH naming a
copy of this folder, so fvbpf's sibling interpreter (the target's python,
its PYTHONPATH) imports this file too.  The target itself sets
FVBPF_HOSTILE_TARGET=1 and is left alone; in the sibling, the word in the
file "mode" beside this one says what to do, and "ran" gets a line
"MODE UID" first, so a test knows the hostile code did run there:

  close    close stdout and sleep forever
  escape   fork a grandchild that setsid()s, keeps stdout and sleeps
           forever; the sibling exits once the grandchild has said so in "ran"
  bogus    print a well-formed report header, keep stdout open, sleep forever
  shift    run the real measurement, but print the TensorImpl layout with
           its sizes 8 bytes further and aten::mm's arguments as two ints
"""
import builtins
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def forever():
    while True:
        time.sleep(3600)


def shifted_print(*args, **kw):
    """print(), with the report's impl and mm lines altered."""
    words = " ".join(str(a) for a in args)
    if words.startswith("impl "):
        f = words.split()
        f[1] = str(int(f[1]) + 8)
        words = " ".join(f)
    elif words.startswith("op aten::mm - "):
        words = "op aten::mm - Tensor int int"
    return REAL_PRINT(words, **kw)


REAL_PRINT = builtins.print

if os.environ.get("FVBPF_HOSTILE_TARGET") != "1":
    try:
        MODE = open(os.path.join(HERE, "mode")).read().strip()
    except OSError:
        MODE = ""
    if MODE:
        with open(os.path.join(HERE, "ran"), "a") as f:
            f.write("%s %d\n" % (MODE, os.getuid()))
    if MODE == "close":
        os.close(1)
        forever()
    elif MODE == "escape":
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            with open(os.path.join(HERE, "ran"), "a") as f:
                f.write("grandchild %d\n" % os.getuid())
            os.write(w, b"x")
            forever()
        os.read(r, 1)
        os._exit(0)
    elif MODE == "bogus":
        sys.stdout.write("fvbpf-torch-layout 2\ntorch 0\nimpl 8 5 16 24\nend\n")
        sys.stdout.flush()
        forever()
    elif MODE == "shift":
        builtins.print = shifted_print
