#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# --record-shapes and --with-flops on real PyTorch with no fvbpf code in the
# job, against torch.profiler(record_shapes=True, with_flops=True) on the
# same deterministic step (tests/workloads/torch_shapes.py oracle): counts
# per (name, shapes), FLOPs, Kineto's Input Dims, the unknown ones counted.

load helpers

SHAPES=$ROOT/tests/workloads/torch_shapes.py
SCHECK=$ROOT/tests/lib/torch_shapes_check.py

setup() { common_setup; }
teardown() { common_teardown; }

start_shapes() { # PY STEPS [--odd]
	need_torch "$1" || return 1
	start_workload "$WL_LOG" "$1" "$SHAPES" ${3:-} run "$BATS_TEST_TMPDIR" "$2"
	cp "/proc/$WL_PID/maps" "$BATS_TEST_TMPDIR/maps"
}

# the workload waits for exit before it ends
run_steps_exit() {
	run_steps
	touch "$BATS_TEST_TMPDIR/exit"
}

# wait_shapes: until fvbpf says the plans are in (the first attach of a
# build measures it in the target's python, seconds on a busy machine).
wait_shapes() {
	local i
	for i in $(seq 2400); do
		grep -q 'shapes of [0-9]* of [0-9]* torch operators\|no operator shapes' "$FV_ERR" && break
		sleep 0.05
	done
	grep -q 'shapes of [0-9]* of [0-9]* torch operators' "$FV_ERR" || { cat "$FV_ERR" >&2; return 1; }
}

# shapes_match PY [fvbpf option...]: two step segments equal to the oracle's.
shapes_match() {
	local py=$1
	shift
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$py" "$SHAPES" oracle
	start_shapes "$py" 4
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:shapes_step -n 2 "$@"
	wait_shapes
	run_steps_exit
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$SCHECK" "$BATS_TEST_TMPDIR/oracle.json" "$OUT" 0 1
	echo "$output"
	assert_success
	assert_line --partial "segment 1: "
}

@test "torch 2.14.1: --record-shapes --with-flops: counts per (name, shapes), FLOPs and Input Dims equal torch.profiler's" {
	shapes_match "$PY214" --record-shapes --with-flops
	# measured once per build and user, then from the cache, named by both
	# readelf gives the file the workload maps
	grep -q 'measured in' "$FV_ERR"
	local id
	id=$(readelf -n "$(awk '$6 ~ /libtorch_cpu\.so$/ {print $6; exit}' "$BATS_TEST_TMPDIR/maps")" |
		sed -n 's/.*Build ID: //p')
	[ -n "$id" ]
	run ls "$FVBPF_CACHE_DIR"
	assert_output "torch-layout-$id-u0.txt"
	# the slices as Kineto writes them: dims, types, flops
	run python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
a = [e["args"] for e in ev if e.get("name") == "aten::addmm"][0]
assert a["Input Dims"] == [[40], [8, 24], [24, 40], [], []], a
assert a["Input type"] == ["float", "float", "float", "Scalar", "Scalar"], a
assert a["flops"] == 15360, a
l = [e["args"] for e in ev if e.get("name") == "aten::linear"]
assert l[1]["Input type"] == ["float", "float", ""], l
assert l[0]["extra_flops"] == 15360, l
u = [e["args"] for e in ev if e.get("args", {}).get("shapes_unknown")]
assert len(u) == 1, u
' "$OUT/trace_rank0_segment0001_shapes_step.json"
	assert_success
	# the log line counts operators and autograd nodes apart, each within
	# what was probed, and the manifest says the same
	run python3 -c '
import json, re, sys
log = open(sys.argv[1]).read()
m = re.search(r"shapes of (\d+) of (\d+) torch operators", log)
ops, nops = map(int, m.groups())
assert 0 < ops <= nops, m.group(0)
m = re.search(r"shapes of \d+ of \d+ torch operators \(\d+ without a schema, \d+ with "
              r"types not understood\) and (\d+) of (\d+) autograd nodes", log)
nodes, nnodes = map(int, m.groups())
assert 0 < nodes <= nnodes, m.group(0)
t = json.load(open(sys.argv[2]))["processes"][0]["torch"]
print(ops, nops, nodes, nnodes, t["operators_with_shapes"], t["nodes_with_shapes"],
      t["operators_probed"], t["nodes_probed"])
assert (ops, nodes, nops, nnodes) == (t["operators_with_shapes"], t["nodes_with_shapes"],
                                      t["operators_probed"], t["nodes_probed"]), t
' "$FV_ERR" "$OUT/manifest.json"
	echo "$output"
	assert_success
}

# A first attach of a build measures it (6-7 s): no segment opens before
# the plans are in, so the first one has its shapes (it had none); and an
# attach that ends before the measurement lets it finish for the cache.
@test "torch: a first attach's first segments have shapes: they wait for the measurement" {
	start_shapes "$PY214" 400
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:shapes_step -n 2 --record-shapes
	grep -q 'segments wait for the torch build' "$FV_ERR"
	touch "$BATS_TEST_TMPDIR/go"
	wait_fvbpf 120
	[ "$FV_STATUS" -eq 0 ]
	run python3 -c '
import json, sys
for f in sys.argv[1:]:
    m = json.load(open(f))["otherData"]
    print(m["torch_calls"] > 20, m["torch_shapes_unknown"] <= 1)
' "$OUT"/trace_rank0_segment000[01]_shapes_step.json
	echo "$output"
	assert_output $'True True\nTrue True'
}

@test "torch: an attach that ends while its build is measured lets the measurement finish for the cache" {
	plain_pass_only "the measurement and cache code the ASan pass runs in the test above"
	start_shapes "$PY214" 400
	run timeout 60 "$FVBPF" attach -p "$WL_PID" -o "$OUT" -r torch:shapes_step -d 0.5 --record-shapes
	echo "$output"
	assert_success
	assert_output --partial "finishing the torch build's layout measurement for the next attach"
	run ls "$FVBPF_CACHE_DIR"
	assert_output --regexp '^torch-layout-[0-9a-f]+-u0\.txt$'
}

@test "torch 2.13.0: --record-shapes --with-flops equal torch.profiler's; a second attach reads the cache" {
	plain_pass_only "the 2.14.1 test's fvbpf code; cache reads: ASan test_torch_abi parses the layout report"
	shapes_match "$PY213" --record-shapes --with-flops
	rm -rf "$OUT" "$BATS_TEST_TMPDIR/go" "$BATS_TEST_TMPDIR/done" "$BATS_TEST_TMPDIR/exit"
	start_shapes "$PY213" 2
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:shapes_step -n 1 --record-shapes
	wait_shapes
	grep -q 'shapes of [0-9]* of [0-9]* torch operators .*cached' "$FV_ERR"
	run_steps_exit
	[ "$FV_STATUS" -eq 0 ]
	# --record-shapes alone: shapes, no FLOPs
	run python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
r = [r for r in rows if r["name"] == "aten::bmm"]
assert r and r[0]["shapes"] == "[[4, 5, 7], [4, 7, 3]]" and "flops" not in r[0], r
' "$OUT/summary_rank0_segment0000_shapes_step.json"
	assert_success
}

@test "torch: FastVideo's variables in fvbpf's environment turn shapes and FLOPs on" {
	plain_pass_only "the 2.14.1 test's fvbpf code, switched on by two variables"
	FASTVIDEO_TORCH_PROFILER_RECORD_SHAPES=1 FASTVIDEO_TORCH_PROFILER_WITH_FLOPS=true \
		shapes_match "$PY214"
}

@test "torch: a bad value of FastVideo's shapes variable is refused" {
	FASTVIDEO_TORCH_PROFILER_RECORD_SHAPES=maybe run "$FVBPF" attach -p $$ -o "$OUT"
	assert_failure
	assert_output --partial "invalid FASTVIDEO_TORCH_PROFILER_RECORD_SHAPES='maybe'"
}

@test "torch: a cache entry fvbpf did not write is not believed: measured again" {
	plain_pass_only "the 2.14.1 test's measurement; the layout parser is ASan test_torch_abi's"
	need_torch "$PY214"
	mkdir -p "$FVBPF_CACHE_DIR"
	start_shapes "$PY214" 1
	local id
	id=$(readelf -n "$(sed -n 's/.* \(\/.*libtorch_cpu.so\)$/\1/p' /proc/"$WL_PID"/maps | head -n1)" |
		sed -n 's/.*Build ID: //p')
	[ -n "$id" ]
	# a world-writable report claiming other offsets
	printf 'fvbpf-torch-layout 1\nimpl 8 5 16 24\n' >"$FVBPF_CACHE_DIR/torch-layout-$id-u0.txt"
	chmod 666 "$FVBPF_CACHE_DIR/torch-layout-$id-u0.txt"
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:shapes_step -n 1 --record-shapes
	wait_shapes
	grep -q 'shapes of .*TensorImpl sizes at +[1-9][0-9]*, .*measured in' "$FV_ERR"
	run_steps_exit
	[ "$FV_STATUS" -eq 0 ]
}

@test "torch: a nested tensor's shape is unknown and counted, never wrong; no row torch did not record" {
	plain_pass_only "the shapes records are fuzz_shapes' and ASan test_torch_abi's; the path is the 2.14.1 test's"
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$PY214" "$SHAPES" --odd oracle
	start_shapes "$PY214" 4 --odd
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:shapes_step -n 2 --record-shapes --with-flops
	wait_shapes
	run_steps_exit
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$SCHECK" --odd "$BATS_TEST_TMPDIR/oracle.json" "$OUT" 0 1
	echo "$output"
	assert_success
	assert_line --partial "segment 1: "
}

@test "torch: two processes of one build: measured once, the other waits for the cache" {
	plain_pass_only "the 2.14.1 test's measurement and cache, twice"
	need_torch "$PY214"
	local p1 p2 d2=$BATS_TEST_TMPDIR/second
	mkdir -p "$d2"
	start_shapes "$PY214" 2
	p1=$WL_PID
	start_workload "$d2/wl.log" "$PY214" "$SHAPES" run "$d2" 2
	p2=$WL_PID
	# two libtorch reads and attaches: longer than start_fvbpf waits under ASan
	"$FVBPF" attach -p "$p1,$p2" -o "$OUT" -r torch:shapes_step -n 2 --record-shapes \
		>"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	local i
	for i in $(seq 1200); do
		grep -q 'fvbpf: tracing' "$FV_ERR" && break
		sleep 0.05
	done
	grep -q 'fvbpf: tracing' "$FV_ERR" || { cat "$FV_ERR" >&2; return 1; }
	for i in $(seq 2400); do
		[ "$(grep -c 'shapes of [0-9]* of [0-9]* torch operators' "$FV_ERR")" -ge 2 ] && break
		sleep 0.05
	done
	run grep -c 'shapes of .*measured in' "$FV_ERR"
	assert_output 1
	run grep -c 'shapes of .*cached' "$FV_ERR"
	assert_output 1
	touch "$d2/go"
	run_steps_exit
	[ "$FV_STATUS" -eq 0 ]
	touch "$d2/exit"
}
