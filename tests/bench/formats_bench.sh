#!/bin/bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Bytes per trace event for --format json, json.gz and pftrace on the same
# marker workload (build/tests/marker_trainer --work: regions and threads).
# An "event" is one slice (one JSON "X" event; a begin/end pair in pftrace).
#   tests/bench/formats_bench.sh BUILD [STEPS]
set -euo pipefail
BUILD=${1:-build}
STEPS=${2:-20}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "formats: files in $TMP" || trap 'rm -rf "$TMP"' EXIT
REGIONS=training_train_one_step,training_forward,training_backward,training_dataloader,training_optimizer

for fmt in json json.gz pftrace; do
	"$BUILD/tests/marker_trainer" --steps "$STEPS" --step-ms 2 --wait-signal --threads \
		>"$TMP/wl.$fmt" 2>&1 &
	wl=$!
	for _ in $(seq 100); do grep -q '^pid=' "$TMP/wl.$fmt" && break; sleep 0.05; done
	"$BUILD/fvbpf" attach -p "$wl" -o "$TMP/$fmt" -n "$STEPS" --format "$fmt" -r "$REGIONS" \
		2>"$TMP/fv.$fmt" >/dev/null &
	fv=$!
	for _ in $(seq 200); do grep -q 'fvbpf: tracing' "$TMP/fv.$fmt" && break; sleep 0.05; done
	kill -USR1 "$wl"
	wait "$fv" || { cat "$TMP/fv.$fmt" >&2; exit 1; }
	wait "$wl" || true
done
python3 - "$TMP" "$ROOT/tests/lib" <<'PY'
import glob, gzip, json, os, sys
tmp = sys.argv[1]
def slices(files, op):
    n = 0
    for f in files:
        with op(f, "rt") as fh:
            n += sum(1 for e in json.load(fh)["traceEvents"] if e.get("ph") == "X")
    return n
js = sorted(glob.glob(tmp + "/json/trace_*.json"))
n = slices(js, open)
ngz = slices(sorted(glob.glob(tmp + "/json.gz/trace_*.json.gz")), gzip.open)
pf = sorted(glob.glob(tmp + "/pftrace/trace_*.pftrace"))
print("formats: %d segments, %d slices per run (json.gz run %d)" % (len(js), n, ngz))
for fmt, pat in (("json", "/json/trace_*.json"), ("json.gz", "/json.gz/trace_*.json.gz"),
                 ("pftrace", "/pftrace/trace_*.pftrace")):
    size = sum(os.path.getsize(f) for f in glob.glob(tmp + pat))
    print("formats: %-8s %8d bytes  %6.1f bytes/event" % (fmt, size, size / max(n, 1)))
PY
