#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Check the include graph of user/: no circles, no include back up a stage.

Every `#include "folder/.../name.h"` in user/**/*.{c,h} is an edge from the
including file to the included module (folder/.../name: its .c and .h).
A file's stage is its top-level folder under user/ (user/proc/elf/x.c is
in proc/); sub-folders belong to their stage.  Fails when
  (a) modules call each other in a circle: x.c includes y.h and y.c
      includes x.h, or longer (a header including a header only borrows
      types, which the compiler already keeps free of circles), or
  (b) a file reaches a header of a higher stage, directly or through the
      headers it includes (transitively: x.c including a header of its own
      stage that includes a higher stage's header is an include up a
      stage); a lower stage never includes a higher one; lib/ includes only
      lib/ and util/ headers with no .c beside them, and those through
      headers like them.
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
ORDER = ["util", "model", "proc", "probes", "pipeline", "output", "offline", "dump", "attach",
         "cli"]
# The in-process library: libc and its own headers; of util/ only headers
# with no .c beside them (nothing to link into libfvbpf.so).
SEPARATE = ["lib"]
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"((?:[a-z_]+/)+)([A-Za-z0-9_]+)\.h"', re.M)


def stage(mod):
    """The stage of module or path @mod: its top-level folder."""
    return mod.split("/")[0]


def modules(user, c_files, h_files):
    """{module: [(file:line, included module, from a .c)]} for every .c/.h
    under @user (any depth); the modules that have a .c are added to
    @c_files, those with a .h to @h_files."""
    edges = {}
    for top in sorted(os.listdir(user)):
        if not os.path.isdir(os.path.join(user, top)):
            continue
        for dirpath, dirnames, filenames in os.walk(os.path.join(user, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel = os.path.relpath(dirpath, user).replace(os.sep, "/")
            for name in sorted(filenames):
                base, ext = os.path.splitext(name)
                if name.startswith(".") or ext not in (".c", ".h"):
                    continue
                mod = rel + "/" + base
                (c_files if ext == ".c" else h_files).add(mod)
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    text = f.read()
                lst = edges.setdefault(mod, [])
                for m in INCLUDE.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    lst.append(("%s/%s:%d" % (rel, name, line), m.group(1) + m.group(2),
                                ext == ".c"))
    return edges


def rank(folder):
    if folder in ORDER:
        return ORDER.index(folder)
    return None


def allowed(src, inc, has_c):
    """Whether a file of stage @src may reach module @inc (another stage's)."""
    dst = stage(inc)
    if src in SEPARATE:
        return dst == "util" and not has_c
    if dst in SEPARATE:
        return False
    return rank(dst) < rank(src)


def header_edges(edges, h_files):
    """{module: [(where, included module)]}: what each module's header
    includes, the edges a file that includes it reaches through it."""
    out = {}
    for mod, lst in edges.items():
        out[mod] = [(where, inc) for where, inc, from_c in lst
                    if not from_c and inc in h_files]
    return out


def reach(mod, edges, hdr):
    """{header module: chain} for every header a file of @mod reaches,
    directly or through headers, each with the shortest chain of
    "file:line" steps that gets there (breadth first)."""
    seen = {}
    queue = []
    for where, inc, _ in edges.get(mod, []):
        if inc not in seen:
            seen[inc] = [where]
            queue.append(inc)
    while queue:
        cur = queue.pop(0)
        for where, inc in hdr.get(cur, []):
            if inc not in seen:
                seen[inc] = seen[cur] + [where]
                queue.append(inc)
    return seen


def upward(edges, c_files, h_files):
    bad = []
    folders = {stage(m) for m in edges}
    for folder in sorted(folders):
        if folder not in ORDER and folder not in SEPARATE:
            bad.append("%s/: a folder with no place in the stage order" % folder)
    for m in sorted(c_files):
        if stage(m) == "model":
            bad.append("%s.c: model/ is data only (headers)" % m)
    hdr = header_edges(edges, h_files)
    for mod in sorted(edges):
        src = stage(mod)
        if src not in ORDER + SEPARATE:
            continue
        for inc, chain in sorted(reach(mod, edges, hdr).items()):
            dst = stage(inc)
            if src == dst or dst not in folders or dst not in ORDER + SEPARATE:
                continue
            if allowed(src, inc, inc in c_files):
                continue
            why = ("which lib/ may not" if src in SEPARATE or dst in SEPARATE
                   else "a higher stage")
            via = "" if len(chain) == 1 else " (through %s)" % " -> ".join(chain[1:])
            bad.append("%s: %s/ includes %s, %s%s" % (chain[0], src, inc, why, via))
    return bad


def circles(edges):
    """Strongly connected groups of more than one module (Tarjan)."""
    graph = {m: sorted({inc for where, inc, from_c in lst
                        if inc != m and inc in edges and from_c})
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


def self_check():
    """The rules above on small graphs, each run: what a change to this
    checker must keep (the clean graph passes, each broken one fails)."""
    def graph(spec):
        edges, c_files, h_files = {}, set(), set()
        for name, incs in spec.items():
            mod, ext = name.rsplit(".", 1)
            (c_files if ext == "c" else h_files).add(mod)
            lst = edges.setdefault(mod, [])
            for i, inc in enumerate(incs):
                lst.append(("%s:%d" % (name, i + 1), inc, ext == "c"))
                h_files.add(inc)
                edges.setdefault(inc, [])
        return edges, c_files, h_files

    def problems(spec):
        edges, c_files, h_files = graph(spec)
        return upward(edges, c_files, h_files) + ["circle"] * len(circles(edges))

    clean = {"util/log.c": [], "util/clock.h": [],
             "proc/elf/elf_file.c": ["util/log"],
             "output/seg_meta.c": [],
             "output/json/trace_writer.c": ["output/seg_meta", "util/log"],
             "offline/report/job_report.c": ["output/json/trace_writer"],
             "model/session.h": ["model/options", "util/clock"],
             "pipeline/segment.c": ["util/log"],
             "pipeline/events.c": ["model/session"],
             "lib/markers.c": ["util/clock"]}
    broken = {
        "a sub-folder's include up a stage":
            {"pipeline/torch/op_tree.c": ["output/json/trace_writer"]},
        "an include up a stage through a header of the same stage":
            {"util/a.c": ["util/h"], "util/h.h": ["pipeline/segment"]},
        "lib/ reaching a util/ header with a .c through one without":
            {"lib/markers.c": ["util/clock"], "util/clock.h": ["util/log"], "util/log.c": []},
        "model/ including a higher stage's header":
            {"model/session.h": ["attach/target"]},
        "a circle": {"pipeline/a.c": ["pipeline/b"], "pipeline/b.c": ["pipeline/a"]},
    }
    out = ["passes no more: %s" % p for p in problems(clean)]
    found = ["".join(m.groups()) for m in INCLUDE.finditer('#include "proc/elf/elf_file.h"\n'
                                                          '# include "util/log.h"\n')]
    if found != ["proc/elf/elf_file", "util/log"]:
        out.append("reads includes wrong: %s" % found)
    for what, spec in broken.items():
        if not problems(spec):
            out.append("fails no more: " + what)
    trans = problems(broken["an include up a stage through a header of the same stage"])
    if not any(p.startswith("util/a.c:") and "through util/h.h" in p for p in trans):
        out.append("no longer follows includes: " + "; ".join(trans))
    return ["include_check itself " + p for p in out]


def main():
    args = sys.argv[1:]
    tap = "--tap" in args
    args = [a for a in args if a != "--tap"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    c_files, h_files = set(), set()
    edges = modules(os.path.join(root, "user"), c_files, h_files)
    bad = self_check() + upward(edges, c_files, h_files)
    for group in circles(edges):
        bad.append("circle: " + " <-> ".join(group))
    what = "user/: no circles, no include up a stage, transitively (%d modules)" % len(edges)
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
