#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""One line per JSON trace segment in DIR, for the tests:

    <file> regions=<annotation names, sorted, comma separated> aten=<N> pids=<pids>

where the annotations are the segment's user_annotation slices named
"fvbpf.region::*" (the prefix dropped), aten the number of cpu_op slices
named aten::*, and pids the processes with slices in the segment.
"""
import glob
import json
import os
import sys


def main():
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "trace_*.json"))):
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        regions = sorted(set(e["name"][len("fvbpf.region::"):] for e in events
                             if e.get("cat") == "user_annotation"
                             and e.get("name", "").startswith("fvbpf.region::")))
        aten = sum(1 for e in events if e.get("cat") == "cpu_op"
                   and e.get("name", "").startswith("aten::"))
        pids = sorted(set(str(e["pid"]) for e in events if e.get("ph") == "X"))
        print("%s regions=%s aten=%d pids=%s" % (os.path.basename(path), ",".join(regions),
                                                 aten, ",".join(pids)))


if __name__ == "__main__":
    main()
