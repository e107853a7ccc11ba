#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# attach --format json|json.gz|pftrace on the marker workload, each format
# read back by an independent reader: Python's gzip + json and
# tests/lib/trace_check.py for JSON, the protobuf package (descriptors built
# in tests/lib/pftrace_check.py, Perfetto's field numbers) for pftrace.
# Written files leave the page cache (fincore, on a disk filesystem).

load helpers

REGIONS=training_train_one_step,training_forward,training_backward,training_dataloader,training_optimizer

setup() { common_setup; }
teardown() { common_teardown; }

# run_format FORMAT DIR: 3 steps of the marker workload, with a worker thread.
run_format() {
	WL_LOG=$BATS_TEST_TMPDIR/workload.$1.log
	start_workload "$WL_LOG" "$TRAINER" --steps 3 --step-ms 8 --wait-signal --idle --threads
	start_fvbpf -p "$WL_PID" -o "$2" -n 3 --format "$1" -r "$REGIONS"
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
}

@test "--format json is the default: .json traces as before, named in the manifest" {
	run_format json "$OUT"
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=3 incomplete=0"
	assert_file_exists "$OUT/trace_rank0_segment0000_training_train_one_step.json"
	assert_file_not_exists "$OUT/trace_rank0_segment0000_training_train_one_step.json.gz"
	run grep -c '"trace":"trace_rank0_segment000[0-2]_training_train_one_step.json"' "$OUT/manifest.json"
	assert_output 3
}

@test "--format json.gz: gzip + json.load read it, trace_check.py accepts it, the manifest names it" {
	run_format json.gz "$OUT"
	assert_file_exists "$OUT/trace_rank0_segment0002_training_train_one_step.json.gz"
	assert_file_not_exists "$OUT/trace_rank0_segment0002_training_train_one_step.json"
	assert_file_exists "$OUT/summary_rank0_segment0002_training_train_one_step.json"
	assert_file_exists "$OUT/summary_rank0_segment0002_training_train_one_step.txt"
	run python3 - "$OUT" <<'PY'
import glob, gzip, json, sys
n = 0
for f in sorted(glob.glob(sys.argv[1] + "/trace_*.json.gz")):
    with gzip.open(f, "rt") as fh:
        t = json.load(fh)
    # fvbpf's slices; one ProfilerStep#N span per file is there for Kineto's tools
    n += sum(1 for e in t["traceEvents"] if e.get("ph") == "X"
             and not e["name"].startswith("ProfilerStep#"))
    assert sum(1 for e in t["traceEvents"] if e["name"].startswith("ProfilerStep#")) == 1
    assert t["otherData"]["region"] == "training_train_one_step"
print("files", len(glob.glob(sys.argv[1] + "/trace_*.json.gz")), "slices", n)
PY
	assert_success
	assert_output "files 3 slices 18"
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=3 incomplete=0"
	[ "$(chk_count 'region training_forward' "$output")" = "$(wl_count forward)" ]
	run grep -c '"trace":"trace_rank0_segment000[0-2]_training_train_one_step.json.gz"' "$OUT/manifest.json"
	assert_output 3
	run "$FVBPF" merge -o "$BATS_TEST_TMPDIR/merged.json" "$OUT"
	assert_success
}

@test "--format pftrace: protobuf decodes, slices balance, names resolve, counts equal the JSON run's" {
	need_pb
	run_format json "$OUT/json"
	run_format pftrace "$OUT/pf"
	local f pf=0 js=0 j
	for f in "$OUT"/pf/trace_rank0_segment000[0-2]_training_train_one_step.pftrace; do
		j=$OUT/json/$(basename "$f" .pftrace).json
		run "$PB_PY" "$PFCHECK" "$f" --counts "$j"
		assert_success
		# the events' bytes: the file less the segment's metadata, which
		# both formats carry whole (every seg_meta key, ~1 KB a file)
		pf=$((pf + $(stat -c %s "$f") - $(sed -n 's/^metadata_bytes=//p' <<<"$output")))
		js=$((js + $(stat -c %s "$j") - $(grep '^"otherData":' "$j" | wc -c)))
		assert_line "json_counts_equal slices=6"
		assert_line "metadata region=training_train_one_step"
		assert_line "metadata rank=0"
		assert_line "metadata incomplete=False"
		assert_line "metadata pid=$WL_PID"
		assert_line "slice user_annotation fvbpf.region::training_forward"
	done
	assert_file_exists "$OUT/pf/summary_rank0_segment0002_training_train_one_step.json"
	run grep -c '"trace":"trace_rank0_segment000[0-2]_training_train_one_step.pftrace"' "$OUT/pf/manifest.json"
	assert_output 3
	# report reads the summaries; merge says it reads JSON only
	run "$FVBPF" report "$OUT/pf"
	assert_success
	assert_output --partial "region training_train_one_step: 3 segments"
	run "$FVBPF" merge -o "$BATS_TEST_TMPDIR/merged.json" "$OUT/pf"
	assert_failure
	assert_output --partial "merge reads JSON traces only"
	# its events much smaller than the JSON's of the same workload
	[ "$pf" -gt 0 ] && [ $((pf * 2)) -lt "$js" ]
}

@test "pftrace of a hand-built segment equals its JSON slice for slice, to the nanosecond" {
	need_pb
	mkdir -p "$OUT"
	FVBPF_FORMATS_OUT=$OUT run "$BUILD/tests/test_pb_writer"
	assert_success
	run "$PB_PY" "$PFCHECK" "$OUT/fixture.pftrace" --json "$OUT/fixture.json"
	assert_success
	assert_line "json_equal slices=9 python_lines=0"
	assert_line --partial "metadata_equal keys="
	assert_line --partial "flows_out=2 flows_in=2"
	run "$PB_PY" "$PFCHECK" "$OUT/fixture.pftrace" --json "$OUT/fixture.json.gz"
	assert_success
	assert_line "json_equal slices=9 python_lines=0"
	# --with-stack: each slice's Python stack and line, and the derived
	# python_function slices, the JSON's (interned in the pftrace)
	run "$PB_PY" "$PFCHECK" "$OUT/fixture_stack.pftrace" --json "$OUT/fixture_stack.json"
	assert_success
	assert_line "json_equal slices=18 python_lines=5"
	assert_line "python_line cpu_op aten::mm Model.other (/w/a.py:50)"
	assert_line "slice python_function b.py(25): Model.outer"
	# DataLoader workers: 3 batches on their workers' tracks, their flows
	# ending in the trainer's slices (two in one __next__), 2 launches'
	run "$PB_PY" "$PFCHECK" "$OUT/fixture_dl.pftrace" --json "$OUT/fixture_dl.json"
	assert_success
	assert_line "json_equal slices=13 python_lines=0"
	assert_line --partial "flows_out=5 flows_in=5"
}

@test "an unknown --format is a one-line error, exit 2, nothing traced" {
	run "$FVBPF" attach -p $$ -o "$OUT" --format protobuf -r training_forward
	[ "$status" -eq 2 ]
	assert_output "fvbpf: error: invalid --format 'protobuf': give json, json.gz or pftrace"
	assert_dir_not_exists "$OUT"
}

@test "written files leave the page cache: none of a run's files stays resident (disk, not tmpfs)" {
	case $(stat -f -c %T "$BATS_TEST_TMPDIR") in
	tmpfs | ramfs) skip "the test folder is on $(stat -f -c %T "$BATS_TEST_TMPDIR"): its pages are the files" ;;
	esac
	command -v fincore >/dev/null || skip "no fincore (util-linux)"
	# fincore sees what a plain write leaves in the cache here
	head -c 1048576 /dev/urandom >"$BATS_TEST_TMPDIR/control"
	run fincore -n -b -o RES "$BATS_TEST_TMPDIR/control"
	assert_success
	[ "$output" -gt 0 ]
	run_format json "$OUT"
	# 3 segments: 10 files, fewer than the 16 fvbpf holds back, so every
	# one was written back and dropped at the end
	local n=0 f
	for f in "$OUT"/*; do
		n=$((n + 1))
		run fincore -n -b -o RES "$f"
		assert_success
		[ "$output" -eq 0 ] || fail "$f: $output bytes still in the page cache"
	done
	[ "$n" -eq 10 ]
}
