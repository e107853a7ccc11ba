#!/bin/bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Bytes per trace event for --format json, json.gz and pftrace on the same
# workloads: the marker trainer (few slices per segment: the per-file
# metadata shows) and region_storm (thousands of nested regions per step).
# A "slice" is one JSON "X" event, one begin/end pair in pftrace (two
# TrackEvent packets); an "event" is what issue 11 counts: one ring record
# (a marker hit), so a region slice is two events.
#   tests/bench/formats_bench.sh BUILD
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then echo "formats: files in $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi

# run NAME SEGMENTS REGIONS WORKLOAD...: one attach per format
run() {
	local name=$1 n=$2 regions=$3 fmt wl fv
	shift 3
	for fmt in json json.gz pftrace; do
		"$@" >"$TMP/wl.$name.$fmt" 2>&1 &
		wl=$!
		for _ in $(seq 100); do grep -q '^pid=' "$TMP/wl.$name.$fmt" && break; sleep 0.05; done
		"$BUILD/fvbpf" attach -p "$wl" -o "$TMP/$name/$fmt" -n "$n" --format "$fmt" -r "$regions" \
			2>"$TMP/fv.$name.$fmt" >/dev/null &
		fv=$!
		for _ in $(seq 200); do grep -q 'fvbpf: tracing' "$TMP/fv.$name.$fmt" && break; sleep 0.05; done
		kill -USR1 "$wl" 2>/dev/null || true
		wait "$fv" || { cat "$TMP/fv.$name.$fmt" >&2; exit 1; }
		kill "$wl" 2>/dev/null || true
		wait "$wl" 2>/dev/null || true
	done
	python3 - "$TMP/$name" "$name" <<'PY'
import glob, gzip, json, os, sys
d, name = sys.argv[1], sys.argv[2]
def slices(pat, op):
    n = 0
    for f in glob.glob(d + pat):
        with op(f, "rt") as fh:
            n += sum(1 for e in json.load(fh)["traceEvents"] if e.get("ph") == "X")
    return n
# The pftrace run's own count comes from its summaries' region rows.
def summary_slices(sub):
    n = 0
    for f in glob.glob(d + sub + "/summary_*.json"):
        n += sum(r["count"] for r in json.load(open(f))["rows"])
    return n
for fmt, pat, op in (("json", "/json/trace_*.json", open),
                     ("json.gz", "/json.gz/trace_*.json.gz", gzip.open),
                     ("pftrace", "/pftrace/trace_*.pftrace", None)):
    n = slices(pat, op) if op else summary_slices("/pftrace")
    size = sum(os.path.getsize(f) for f in glob.glob(d + pat))
    print("formats: %-13s %-8s %6d slices %9d bytes %7.1f bytes/slice %6.1f bytes/event" %
          (name, fmt, n, size, size / max(n, 1), size / max(2 * n, 1)))
    if name == "region_storm" and os.environ.get("BENCH_RESULTS"):
        with open(os.environ["BENCH_RESULTS"], "a") as r:
            r.write("bytes_per_event_%s=%.1f\n" % (fmt.replace(".", "_"), size / max(2 * n, 1)))
PY
}

run marker 20 training_train_one_step,training_forward,training_backward,training_dataloader,training_optimizer \
	"$BUILD/tests/marker_trainer" --steps 20 --step-ms 2 --wait-signal --threads
run region_storm 3 training_train_one_step,training_forward \
	"$BUILD/tests/region_storm" --burst 5000 --pause-ms 50
