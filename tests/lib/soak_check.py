#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""One attach of the soak test (tests/bats/soak.bats), checked from its files.

  soak_check.py OUTDIR MIN_SEGMENTS

Passes when the manifest lists every trace file, at least MIN_SEGMENTS of
them are complete, and every complete one holds at least one operator
(cpu_op slice). Prints "complete=N incomplete=M ops=K" and, on a mismatch,
"error: ..." lines with exit status 1.
"""
import json
import os
import sys


def main():
    out, want = sys.argv[1], int(sys.argv[2])
    errors = []
    m = json.load(open(os.path.join(out, "manifest.json")))
    listed = {os.path.basename(f["trace"]) for f in m["files"]}
    traces = {f for f in os.listdir(out) if f.startswith("trace_") and f.endswith(".json")}
    if traces != listed:
        errors.append("trace files %s, manifest lists %s" % (sorted(traces), sorted(listed)))
    complete = incomplete = ops = 0
    for name in sorted(traces):
        t = json.load(open(os.path.join(out, name)))
        if t["otherData"].get("incomplete"):
            incomplete += 1
            continue
        complete += 1
        n = sum(1 for e in t["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op")
        if not n:
            errors.append("%s: a complete segment without operators" % name)
        ops += n
    if complete < want:
        errors.append("%d complete segments, expected at least %d" % (complete, want))
    print("complete=%d incomplete=%d ops=%d" % (complete, incomplete, ops))
    for e in errors:
        print("error: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
