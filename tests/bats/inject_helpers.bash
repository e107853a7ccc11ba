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

# windows_ok MIN: at least MIN time windows written (--window), every
# segment a window, one right after the other, as the manifest counts them.
windows_ok() {
	python3 - "$OUT" "$1" <<'PY'
import glob, json, sys
d, want = sys.argv[1], int(sys.argv[2])
segs = sorted((json.load(open(f))["otherData"] for f in glob.glob(d + "/trace_*.json")),
              key=lambda m: m["segment"])
p = json.load(open(d + "/manifest.json"))["processes"][0]
ok = (len(segs) >= want and p["segments"] == len(segs) and
      all(m["region"] == "window" for m in segs) and
      all(abs(a["end_us"] - b["start_us"]) < 0.002 for a, b in zip(segs, segs[1:])))
print("windows", len(segs), "of at least", want, ok)
sys.exit(0 if ok else 1)
PY
}
