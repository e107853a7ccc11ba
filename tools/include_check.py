#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Check the include graph of user/: no circles, no include back up a stage.

Every `#include "folder/name.h"` in user/**/*.{c,h} is an edge from the
including file to the included module (folder/name: its .c and .h).
Fails when
  (a) modules call each other in a circle: x.c includes y.h and y.c
      includes x.h, or longer (a header including a header only borrows
      types, which the compiler already keeps free of circles), or
  (b) a folder includes a folder higher in the stage order below
      (a lower stage never includes a higher one; lib/ includes only lib/).
Includes without a folder (<...>, "fvbpf.skel.h", include/*.h) are not
stages and are not checked.  Usage: include_check.py [--tap] [REPO_ROOT]
(--tap: one TAP line, for tests/run.sh).
"""
import os
import re
import sys

# Lowest first: a folder may include its own and any folder before it.
# model/ is the plain data every live stage reads (the session and its
# targets, the attach options): lowest but util/, so that any stage may.
ORDER = ["util", "model", "target", "probes", "pipeline", "output", "offline", "dump", "attach",
         "cli"]
# The in-process library: libc and its own headers; of util/ only headers
# with no .c beside them (nothing to link into libfvbpf.so).
SEPARATE = ["lib"]
# model/ is headers only, and holds each stage's state struct by value:
# it may include the headers that define them, these and no others.
MODEL_EMBEDS = {
    "output/seg_output",      # struct session_meta, enum trace_format
    "output/seg_writer",      # struct seg_writer
    "pipeline/api_pairing",   # struct api_pairing
    "pipeline/drops",         # struct drop_state
    "pipeline/fast_ops",      # struct fast_ops
    "pipeline/gpu_join",      # struct gpu_join
    "pipeline/mem_events",    # struct mem_state
    "pipeline/py_status",     # struct py_state
    "pipeline/schedule",      # struct step_schedule
    "pipeline/registry",      # struct region_registry
    "pipeline/segment",       # struct seg_tracker
    "pipeline/torch_pairing", # struct torch_pairing
    "probes/cuda_probes",     # struct cuda_probes, struct addr_cache
    "probes/mem_probes",      # struct mem_probes
    "probes/torch_probes",    # struct torch_probes, struct torch_table
    "target/proc_info",       # struct proc_target
    "target/target_control",  # struct target_control
}
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([a-z_]+)/([A-Za-z0-9_]+)\.h"', re.M)


def modules(user, c_files):
    """{module: [(file:line, included module)]} for every .c/.h under
    @user; the modules that have a .c are added to @c_files."""
    edges = {}
    for folder in sorted(os.listdir(user)):
        path = os.path.join(user, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if name.startswith("."):
                continue
            base, ext = os.path.splitext(name)
            if ext not in (".c", ".h"):
                continue
            mod = folder + "/" + base
            if ext == ".c":
                c_files.add(mod)
            with open(os.path.join(path, name), encoding="utf-8") as f:
                text = f.read()
            lst = edges.setdefault(mod, [])
            for m in INCLUDE.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                lst.append(("%s/%s:%d" % (folder, name, line), m.group(1) + "/" + m.group(2)))
    return edges


def rank(folder):
    if folder in ORDER:
        return ORDER.index(folder)
    return None


def allowed(src, inc, has_c):
    """Whether folder @src may include module @inc (another folder's)."""
    dst = inc.split("/")[0]
    if src in SEPARATE:
        return dst == "util" and not has_c
    if dst in SEPARATE:
        return False
    if src == "model" and inc in MODEL_EMBEDS:
        return True
    return rank(dst) < rank(src)


def upward(edges, c_files):
    bad = []
    folders = {m.split("/")[0] for m in edges}
    for folder in sorted(folders):
        if folder not in ORDER and folder not in SEPARATE:
            bad.append("%s/: a folder with no place in the stage order" % folder)
    for m in sorted(c_files):
        if m.startswith("model/"):
            bad.append("%s.c: model/ is data only (headers)" % m)
    for mod, lst in sorted(edges.items()):
        src = mod.split("/")[0]
        for where, inc in lst:
            dst = inc.split("/")[0]
            if src == dst or dst not in folders or src not in ORDER + SEPARATE:
                continue
            if dst not in ORDER + SEPARATE or allowed(src, inc, inc in c_files):
                continue
            bad.append("%s: %s/ includes %s, %s" % (where, src, inc,
                       "which lib/ may not" if src in SEPARATE or dst in SEPARATE
                       else "a higher stage"))
    return bad


def circles(edges):
    """Strongly connected groups of more than one module (Tarjan)."""
    graph = {m: sorted({inc for where, inc in lst
                        if inc != m and inc in edges and where.split(":")[0].endswith(".c")})
             for m, lst in edges.items()}
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    args = sys.argv[1:]
    tap = "--tap" in args
    args = [a for a in args if a != "--tap"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    c_files = set()
    edges = modules(os.path.join(root, "user"), c_files)
    bad = upward(edges, c_files)
    for group in circles(edges):
        bad.append("circle: " + " <-> ".join(group))
    what = "user/: no circles, no include up a stage (%d modules)" % len(edges)
    if tap:
        print("1..1")
        for line in bad:
            print("# " + line)
        print("%s 1 - %s" % ("not ok" if bad else "ok", what))
        return 1 if bad else 0
    for line in bad:
        print(line)
    if bad:
        print("include_check: %d problem%s" % (len(bad), "" if len(bad) == 1 else "s"))
        return 1
    print("include_check: " + what)
    return 0


if __name__ == "__main__":
    sys.exit(main())
