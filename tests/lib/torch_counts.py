#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Compare fvbpf's per-segment torch rows with torch.profiler's counts.

  torch_counts.py [--all] ORACLE.json SUMMARY.json...

ORACLE.json: {name: count} from torch_train.py oracle (key_averages of one
step).  Every summary must hold the same count for every aten operator,
backward node and record_function scope of the oracle, and no other torch
row.  Names fvbpf cannot see out of process (the C++ RECORD_FUNCTION scope
detach) are left out, but with --all (operators through PyTorch's own
callbacks see every name torch.profiler does).
Prints one line per summary; exits 1 on a mismatch or too few names.
"""
import json
import sys

UNSEEN = ("detach",)


def seen(name):
    return not any(name == u or (u.endswith(" ") and name.startswith(u)) for u in UNSEEN)


def main():
    args = sys.argv[1:]
    every = args[:1] == ["--all"]
    if every:
        args = args[1:]
    oracle = {k: v for k, v in json.load(open(args[0])).items() if every or seen(k)}
    aten = [k for k in oracle if k.startswith("aten::")]
    nodes = [k for k in oracle if "Backward" in k or k.startswith("torch::autograd::")]
    evals = [k for k in oracle if k.startswith("autograd::engine::evaluate_function: ")]
    scopes = [k for k in oracle if "#" in k]
    ok = len(aten) >= 20 and nodes and scopes and evals
    if not ok:
        print("oracle too small: %d aten, %d nodes, %d scopes, %d evaluate_function" % (
            len(aten), len(nodes), len(scopes), len(evals)))
    for path in args[1:]:
        rows = json.load(open(path))["rows"]
        got = {r["name"]: r["count"] for r in rows if r["kind"] in ("cpu_op", "user_annotation")}
        bad = sorted((k, oracle.get(k), got.get(k)) for k in set(oracle) | set(got)
                     if oracle.get(k) != got.get(k))
        print("%s: %d names, %d events, %d aten, %d nodes, %d scopes, mismatches %s" % (
            path.rsplit("/", 1)[-1], len(got), sum(got.values()), len(aten), len(nodes),
            len(scopes), bad[:8]))
        ok = ok and not bad
    sys.exit(0 if ok else 1)


main()
