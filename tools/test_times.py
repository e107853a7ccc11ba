#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""docs/testing.md's table of BATS files from a `tests/run.sh` log.

  tools/test_times.py LOG

bats runs tests/bats/*.bats in name order and each file's tests in order,
numbering them from 1 in each pass, so a test's number says its file.  Per
file: tests, the plain pass's seconds, how many the ASan pass skips as
plain_pass_only, the ASan pass's seconds.  Exits 1 if a pass's test count
is not the files' (the log is from another tree)."""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_RE = re.compile(r'^@test\s')
TAP_RE = re.compile(r'^(?:not )?ok (\d+) .* in (\d+)ms(.*)$')


def files():
    out = []
    for f in sorted(glob.glob(os.path.join(ROOT, "tests/bats/*.bats"))):
        with open(f) as fh:
            n = sum(1 for line in fh if TEST_RE.match(line))
        out.append((os.path.basename(f), n))
    return out


def passes(log):
    """{pass name: {test number: (ms, plain_only)}} for the two BATS passes."""
    cur, res = None, {}
    with open(log, errors="replace") as fh:
        for line in fh:
            if line.startswith("# --- "):
                name = line[6:].strip()
                cur = name if name.startswith("bats") else None
                if cur:
                    res[cur] = {}
                continue
            m = TAP_RE.match(line.rstrip("\n")) if cur else None
            if m:
                res[cur][int(m.group(1))] = (int(m.group(2)), "# skip plain pass only" in m.group(3))
    return res


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tools/test_times.py LOG")
    fl = files()
    total = sum(n for _, n in fl)
    ps = passes(sys.argv[1])
    plain, asan = ps.get("bats"), ps.get("bats (ASan/UBSan fvbpf)")
    if not plain or not asan:
        sys.exit("no two BATS passes in %s" % sys.argv[1])
    for name, p in (("plain", plain), ("ASan", asan)):
        if len(p) != total:
            print("the %s pass has %d tests, the files %d" % (name, len(p), total), file=sys.stderr)
            sys.exit(1)
    print("| file | tests | plain pass | plain only | ASan pass |")
    print("|---|---:|---:|---:|---:|")
    first, sums = 1, [0, 0, 0, 0]
    for f, n in fl:
        nums = range(first, first + n)
        row = [n, sum(plain[i][0] for i in nums) / 1000, sum(asan[i][1] for i in nums),
               sum(asan[i][0] for i in nums) / 1000]
        sums = [a + b for a, b in zip(sums, row)]
        print("| `%s` | %d | %.1f | %d | %.1f |" % (f, *row))
        first += n
    print("| **all** | %d | **%.0f** | %d | **%.0f** |" % tuple(sums))


if __name__ == "__main__":
    main()
