#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Compare fvbpf's --record-shapes --with-flops segments with torch.profiler's.

  torch_shapes_check.py [--odd] ORACLE.json DIR SEGMENT...

ORACLE.json: torch_shapes.py oracle (key_averages(group_by_input_shape=True)
of one step with record_shapes and with_flops, and Kineto's Input Dims per
aten op).  For each summary_rank0_segmentNNNN_shapes_step.json of DIR named
by SEGMENT (a number), every aten row must have the oracle's count and
flops for its (name, shapes), except shapes fvbpf must not read: ops on a
tensor of more than 8 dims come out unknown (no row of their own; counted
in metadata.torch_shapes_unknown, equal to the oracle's count of them).
The trace's cpu_op slices must carry the oracle's Input Dims, as a multiset
per op name (the unknown ones aside).  --odd (torch_shapes.py --odd):
a nested tensor and a wrapper subclass in the step; fvbpf calls the nested
one unknown and does not see the wrapper's inner call at all (it goes
through the boxed dispatcher, no at::_ops entry), so there each fvbpf row
must be one of the oracle's with at most its count, never a shape torch
did not record, and at least one more unknown than the 9-d tensor gives.  Prints what it compared; exits 1 on
a mismatch or an oracle too small to mean anything.
"""
import collections
import json
import sys

MAXDIM = 8
UNSEEN = ("detach",)  # a C++-only RECORD_FUNCTION scope, not seen out of process (torch_counts.py)
MUST = ("aten::linear", "aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm",
        "aten::conv2d", "aten::mul", "aten::add", "aten::cat", "aten::convolution_backward")


def too_deep(shapes):
    """Does a shape string hold a tensor of more than MAXDIM dims?"""
    return any(isinstance(s, list) and len(s) > MAXDIM for s in json.loads(shapes))


def main():
    odd = sys.argv[1] == "--odd"
    if odd:
        del sys.argv[1]
    oracle = json.load(open(sys.argv[1]))
    d = sys.argv[2]
    ok = True
    want, unknown = {}, 0
    for name, shapes, count, flops in oracle["rows"]:
        if name in UNSEEN:
            continue
        if too_deep(shapes):
            unknown += count
        else:
            want[(name, shapes)] = (count, flops)
    names = {k[0] for k in want}
    flops_rows = sum(1 for v in want.values() if v[1])
    if not all(n in names for n in MUST) or flops_rows < 8 or not unknown:
        print("oracle too small: %s, %d rows with flops, %d unknown" % (
            [n for n in MUST if n not in names], flops_rows, unknown))
        ok = False
    for seg in sys.argv[3:]:
        base = "%s/%%s_rank0_segment%04d_shapes_step.json" % (d, int(seg))
        summ = json.load(open(base % "summary"))
        got = {}
        for r in summ["rows"]:
            if r["kind"] in ("cpu_op", "user_annotation") and r["shapes"]:
                got[(r["name"], r["shapes"])] = (r["count"], r["flops"])
        if odd:
            bad = sorted((k, want.get(k), got.get(k)) for k in got
                         if k not in want or got[k][0] > want[k][0])
        else:
            bad = sorted((k, want.get(k), got.get(k)) for k in set(want) | set(got)
                         if want.get(k) != got.get(k))
        # fvbpf's extra column where torch counts none: attention, 4*B*H*Lq*Lk*D
        for r in summ["rows"]:
            if r["name"] == "aten::scaled_dot_product_attention" and r["shapes"]:
                qs, ks = json.loads(r["shapes"])[:2]
                exp = r["count"] * 4 * qs[0] * qs[1] * qs[2] * ks[2] * qs[3]
                print("  %s %s extra_flops %d (expected %d)" % (r["name"], r["shapes"],
                                                                r["extra_flops"], exp))
                ok = ok and r["extra_flops"] == exp
        unk = summ["metadata"]["torch_shapes_unknown"]
        print("segment %s: %d (name, shapes) rows, %d with flops, %d unknown (oracle %d), "
              "mismatches %s" % (seg, len(got), sum(1 for v in got.values() if v[1]), unk,
                                 unknown, bad[:6]))
        ok = ok and not bad and (unk > unknown if odd else unk == unknown)
        ev = json.load(open(base % "trace"))["traceEvents"]
        dims = collections.defaultdict(list)
        for e in ev:
            if e.get("cat") == "cpu_op" and e["name"].startswith("aten::") and \
                    "Input Dims" in e["args"]:
                dims[e["name"]].append(json.dumps(e["args"]["Input Dims"]))
        for name, lst in ([] if odd else oracle["dims"].items()):
            exp = sorted(json.dumps(x) for x in lst if not too_deep(json.dumps(x)))
            if sorted(dims.get(name, [])) != exp:
                print("  Input Dims of %s: got %s, want %s" % (name, sorted(dims.get(name, []))[:3],
                                                               exp[:3]))
                ok = False
        print("  Input Dims equal to Kineto's for %d op names" % len(oracle["dims"]))
    sys.exit(0 if ok else 1)


main()
