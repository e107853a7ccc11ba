#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""docs/testing.md's table of BATS files from a `tests/run.sh` log.

  tools/test_times.py LOG

tests/run-bats.sh names each test's line by pass and file ("ok 12 asan
attach_c.bats: NAME in 812ms").  A log of the runner before it (two
`bats --tap tests/bats` runs, one after the other) is read too: bats
numbers the tests of each pass from 1, files in name order, so a test's
number says its file.  Per file: tests, the plain pass's seconds, how many
the ASan pass skips as plain_pass_only, the ASan pass's seconds.  Exits 1 if
a pass's test count is not the files' (the log is from another tree)."""
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


NAMED_RE = re.compile(r'^(?:not )?ok \d+ (plain|asan) ([^:]+\.bats): .* in (\d+)ms(.*)$')


def passes(log):
    """{pass name: {(file, index): (ms, plain_only)}} for the two BATS passes."""
    cur, res, seen = None, {"plain": {}, "asan": {}}, {}
    old = {}
    with open(log, errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            m = NAMED_RE.match(line)
            if m:
                p, f = m.group(1), m.group(2)
                k = seen[(p, f)] = seen.get((p, f), 0) + 1
                res[p][(f, k)] = (int(m.group(3)), "# skip plain pass only" in m.group(4))
                continue
            if line.startswith("# --- "):
                name = line[6:].strip()
                cur = {"bats": "plain", "bats (ASan/UBSan fvbpf)": "asan"}.get(name)
                if cur:
                    old[cur] = {}
                continue
            m = TAP_RE.match(line) if cur else None
            if m:
                old[cur][int(m.group(1))] = (int(m.group(2)), "# skip plain pass only" in m.group(3))
    return res if res["plain"] else by_file(old)


def by_file(old):
    """The older log's numbers, 1 up in each pass, as (file, index) keys."""
    res = {}
    for p, tests in old.items():
        res[p], first = {}, 1
        for f, n in files():
            for k in range(n):
                if first + k in tests:
                    res[p][(f, k + 1)] = tests[first + k]
            first += n
    return res


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tools/test_times.py LOG")
    fl = files()
    total = sum(n for _, n in fl)
    ps = passes(sys.argv[1])
    plain, asan = ps.get("plain"), ps.get("asan")
    if not plain or not asan:
        sys.exit("no two BATS passes in %s" % sys.argv[1])
    for name, p in (("plain", plain), ("ASan", asan)):
        if len(p) != total:
            print("the %s pass has %d tests, the files %d" % (name, len(p), total), file=sys.stderr)
            sys.exit(1)
    print("| file | tests | plain pass | plain only | ASan pass |")
    print("|---|---:|---:|---:|---:|")
    sums = [0, 0, 0, 0]
    for f, n in fl:
        keys = [(f, k) for k in range(1, n + 1)]
        row = [n, sum(plain[k][0] for k in keys) / 1000, sum(asan[k][1] for k in keys),
               sum(asan[k][0] for k in keys) / 1000]
        sums = [a + b for a, b in zip(sums, row)]
        print("| `%s` | %d | %.1f | %d | %.1f |" % (f, *row))
    print("| **all** | %d | **%.0f** | %d | **%.0f** |" % tuple(sums))


if __name__ == "__main__":
    main()
