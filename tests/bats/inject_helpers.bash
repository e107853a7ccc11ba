# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# What the --inject tests (inject.bats, inject_harm.bats) share: their
# targets' own output checks and the manifest's view of one process.

# ticks_ok LOG N: exactly "tick 0" .. "tick N-1", in order, and the done line.
ticks_ok() {
	python3 - "$1" "$2" <<'PY'
import sys
lines = [l.rstrip("\n") for l in open(sys.argv[1])]
n = int(sys.argv[2])
ticks = [l for l in lines if l.startswith("tick")]
if ticks != ["tick %d" % i for i in range(n)]:
    print("ticks differ: %d lines, first odd: %r" % (len(ticks),
          next((t for i, t in enumerate(ticks) if t != "tick %d" % i), None)))
    sys.exit(1)
bad = [l for l in lines if "ERROR" in l]
if bad:
    print("errors:", bad)
    sys.exit(1)
PY
}

# mf EXPR: a Python expression over p, the first process of the manifest.
mf() {
	python3 -c "import json,sys; p=json.load(open(sys.argv[1]+'/manifest.json'))['processes'][0]; print(eval(sys.argv[2]))" "$OUT" "$1"
}

# The injected copies mapped by PID (distinct files).
injected_maps() {
	grep '/\.fvbpf-inject-' "/proc/$1/maps" | awk '{print $5}' | sort -u | wc -l
}
