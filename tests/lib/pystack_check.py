# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Check fvbpf --with-stack output of tests/workloads/torch_stack.py
against torch.profiler(with_stack=True) on the same step (the oracle JSON
the workload prints) and against the workload's own source ("# @op:NAME"
marker comments give each operator's line).

  pystack_check.py ORACLE.json WORKLOAD.py OUTDIR [TID_A,TID_B]

Per segment trace: each outermost aten op of the step has a Python stack;
its frames, innermost first up to named_step, are torch's frames (same
files, functions and first lines: torch names a frame by the line its call
event saw, co_firstlineno, or for a resumed generator the line it resumed
at; Module.__call__'s frame torch calls "nn.Module: NAME"), and the
innermost frame's current line is the marker's line.  With
TIDS the two worker threads' ops are on those threads with their own
stacks.  The folded file and the SVG exist, parse, and name the lines: the
folded file every marked line, the SVG every one whose box is drawn (a box
under a tenth of a pixel is left out and counted: which are depends on the
operators' share of the segment, and on a loaded machine a preempted
operator can make the others that narrow).
"""
import glob
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

OPS = {"aten::add": "plain", "aten::mul": "inner", "aten::div": "lambda",
       "aten::sub": "method", "aten::neg": "decorated", "aten::exp": "generator",
       "aten::abs": "generator2", "aten::sin": "thread_a", "aten::cos": "thread_b",
       "aten::linear": None}


def markers(src):
    out = {}
    for i, line in enumerate(open(src), 1):
        m = re.search(r"torch\.\w+\(.*# @op:(\w+)", line)
        if m:
            out[m.group(1)] = i
    return out


def outermost_aten(events):
    """Per op name, the outermost aten ops (no aten op around them on their
    thread), in order."""
    sl = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]
    sl.sort(key=lambda e: (e["tid"], e["ts"], -e["dur"]))
    out, chain, tid = {}, [], None
    for e in sl:
        if e["tid"] != tid:
            chain, tid = [], e["tid"]
        while chain and chain[-1]["ts"] + chain[-1]["dur"] <= e["ts"]:
            chain.pop()
        if e["name"].startswith("aten::") and not any(c["name"].startswith("aten::") for c in chain):
            out.setdefault(e["name"], []).append(e)
        chain.append(e)
    return out


def upto_step(frames, key):
    for i, f in enumerate(frames):
        if key(f) == "named_step":
            return frames[:i + 1]
    return frames


def check_op(name, ev, stacks, oracle, lines, fails):
    sid = ev["args"].get("Python stack")
    if sid is None:
        fails.append("%s: no Python stack" % name)
        return
    ours = stacks[str(sid)]
    if ev["args"].get("Python line") is None:
        fails.append("%s: no Python line" % name)
    if frames_differ(name, ours, oracle["frames"], fails):
        return
    mark = OPS[name]
    if mark and ours[0]["line"] != lines[mark]:
        fails.append("%s: line %d, the source says %d" % (name, ours[0]["line"], lines[mark]))


def frames_differ(name, ours, oracle_frames, fails):
    """Our frames (pythonStacks) against torch's, innermost first up to
    named_step; appends to @fails, True if any differs."""
    n = len(fails)
    theirs = upto_step(oracle_frames, lambda f: f[2])
    mine = upto_step(ours, lambda f: f["function"].split(".")[-1])
    if len(mine) != len(theirs):
        fails.append("%s: %d frames, torch %d: %s / %s" % (name, len(mine), len(theirs), mine, theirs))
        return True
    for m, t in zip(mine, theirs):
        fn = m["function"].split(".")[-1]
        if t[0] == "nn.Module":  # torch names Module.__call__'s frame by the module
            if m["function"] != "Module._wrapped_call_impl":
                fails.append("%s: %s where torch has %s" % (name, m["function"], t[2]))
        elif not m["file"].endswith(t[0]) or fn != t[2]:
            fails.append("%s: frame %s %s, torch %s %s" % (name, m["file"], fn, t[0], t[2]))
        elif fn == "gen":  # resumed: torch says where it resumed
            if not m["first_line"] <= t[1] <= m["line"]:
                fails.append("%s: gen lines %d..%d, torch %d" % (name, m["first_line"], m["line"], t[1]))
        elif m["first_line"] != t[1]:
            fails.append("%s: %s first line %d, torch %d" % (name, fn, m["first_line"], t[1]))
    return len(fails) > n


# The page of user/output/flame_svg.c: its width and side margins.
SVG_W, SVG_PAD = 1200.0, 10.0


def svg_boxes(rows):
    """The frames flame_svg.c draws from the folded rows (in the file's
    order, which is the SVG's), as flamegraph.pl draws them: a frame's box
    opens where a row first has it at that depth and closes where a row no
    longer does; under 0.1 px it is not drawn.  (drawn frames, boxes left out)"""
    total = sum(n for _, n in rows)
    scale = (SVG_W - 2 * SVG_PAD) / total
    drawn, hidden, prev, start, x = set(), 0, [], [], 0
    for path, n in rows + [(None, 0)]:
        cur = path.split(";") if path is not None else []
        common = 0
        while common < min(len(cur), len(prev)) and cur[common] == prev[common]:
            common += 1
        for j in range(len(prev), common, -1):
            if (x - start[j - 1]) * scale < 0.1:
                hidden += 1
            else:
                drawn.add(prev[j - 1])
        start = start[:common] + [x] * (len(cur) - common)
        x += n
        prev = cur
    return drawn, hidden


def main():
    oracle = {o["op"]: o for o in json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])}
    src, outdir = sys.argv[2], sys.argv[3]
    tids = [int(t) for t in sys.argv[4].split(",")] if len(sys.argv) > 4 else []
    lines = markers(src)
    base = os.path.basename(src)
    fails, nops = [], 0
    traces = sorted(glob.glob(os.path.join(outdir, "trace_*.json")))
    assert traces, "no traces in " + outdir
    for tr in traces:
        doc = json.load(open(tr))
        stacks = doc.get("pythonStacks", {})
        ops = outermost_aten(doc["traceEvents"])
        want = [n for n in OPS if n in oracle]
        for name in want:
            if len(ops.get(name, [])) != 1:
                fails.append("%s: %s %d times" % (os.path.basename(tr), name, len(ops.get(name, []))))
                continue
            check_op(name, ops[name][0], stacks, oracle[name], lines, fails)
            nops += 1
        # torch.profiler does not see threads started before it: their
        # oracle is the source (the line) and the thread (its own frames)
        for name, tid, fn in zip(("aten::sin", "aten::cos"), tids, ("thread_a_work", "thread_b_work")):
            if len(ops.get(name, [])) != 1:
                fails.append("%s: %s %d times" % (os.path.basename(tr), name, len(ops.get(name, []))))
                continue
            ev = ops[name][0]
            st = stacks.get(str(ev["args"].get("Python stack")), [])
            funcs = [f["function"] for f in st]
            if ev["tid"] != tid:
                fails.append("%s on tid %d, not its thread %d" % (name, ev["tid"], tid))
            elif not st or funcs[0] != fn or st[0]["line"] != lines[OPS[name]]:
                fails.append("%s: stack %s, want %s at line %d" % (name, st[:1], fn, lines[OPS[name]]))
            elif "named_step" in funcs or "Worker.run" not in funcs:
                fails.append("%s: another thread's frames: %s" % (name, funcs))
            nops += 1
        py = [e for e in doc["traceEvents"] if e.get("cat") == "python_function"]
        if not any(e["name"].endswith("%s(%d): plain" % (base, lines["plain"] - 1)) for e in py):
            fails.append("%s: no python_function slice for plain" % os.path.basename(tr))
        seg = re.search(r"trace_(.*)\.json$", os.path.basename(tr)).group(1)
        folded = os.path.join(outdir, "stacks_%s.folded" % seg)
        rows = []
        text = open(folded).read()
        for ln in text.splitlines():
            m = re.match(r"^(\S.*) (\d+)$", ln)
            assert m and all(m.group(1).split(";")), "bad folded line: " + ln
            rows.append((m.group(1), int(m.group(2))))
        assert sum(n for _, n in rows) > 0, folded
        drawn, hidden = svg_boxes(rows)
        svg = ET.parse(os.path.join(outdir, "flame_%s.svg" % seg)).getroot()
        assert svg.tag.endswith("svg"), svg.tag
        ns = "{http://www.w3.org/2000/svg}"
        titles = " ".join(t.text or "" for t in svg.iter(ns + "title"))
        said = [t.text for t in svg.iter(ns + "text") if "not drawn" in (t.text or "")]
        if said != ["%d boxes narrower than 0.1 px not drawn" % hidden]:
            fails.append("%s: SVG says %s, the folded rows give %d boxes left out" % (seg, said, hidden))
        for mark, line in lines.items():
            needle = "%s:%d)" % (base, line)
            if needle not in text:
                fails.append("%s: folded file lacks %s (%s)" % (seg, needle, mark))
            if any(needle in f for f in drawn) and needle not in titles:
                fails.append("%s: SVG lacks %s (%s)" % (seg, needle, mark))
            elif not any(needle in f for f in drawn):
                print("%s: %s (%s) narrower than 0.1 px in the SVG" % (seg, needle, mark))
    report(fails, "segments=%d ops=%d" % (len(traces), nops))


def report(fails, counts):
    """Each failure, the counts and their number; exit 1 on any."""
    for f in fails:
        print("FAIL", f)
    print("%s fails=%d" % (counts, len(fails)))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
