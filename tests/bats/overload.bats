#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Overload: fvbpf stopped while the target keeps emitting regions into a
# small ring buffer.  Every drop is charged where it happened, a segment
# that lost its end is cut and marked, and the figures add up to BPF's.

# Serial (tests/run-bats.sh runs it alone): it stops fvbpf for fixed times
# while the target fills the ring, and bounds a cut segment's length.
# bats file_tags=serial

load helpers

STORM=$BUILD/tests/region_storm

setup() { common_setup; }
teardown() { common_teardown; }

@test "overload: a stopped fvbpf cuts the segment that lost its end, drops add up" {
	start_workload "$WL_LOG" "$STORM" --burst 4000 --pause-ms 100
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step,training_forward \
		--ringbuf-size 1
	sleep 0.5
	# 1.5 s of steps (8002 records each) against a 1 MiB ring: it fills
	# in the middle of a step.
	kill -STOP "$FV_PID"
	sleep 1.5
	kill -CONT "$FV_PID"
	sleep 0.7
	kill -INT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]

	# Valid, strictly nested traces; drops in traces + between segments
	# = each process's total = BPF's counter (the checker's own rules).
	run python3 "$CHECK" "$OUT"
	echo "$output"; cat "$FV_OUT" "$FV_ERR"  # shown when the test fails
	assert_success
	local bpf total lost max_us
	bpf=$(sed -n 's/^drops_total=[0-9]* drops_between=[0-9]* drops_bpf=\([0-9]*\)$/\1/p' <<<"$output")
	total=$(sed -n 's/^drops_total=\([0-9]*\) .*/\1/p' <<<"$output")
	lost=$(chk_count lost_end "$output")
	max_us=$(sed -n 's/^max_segment_us=\([0-9]*\).*/\1/p' <<<"$output")
	[ "$bpf" -gt 0 ]
	[ "$total" -eq "$bpf" ]
	# The exit report says the same.
	grep -q "^  loss: $bpf ring-buffer drops," "$FV_OUT"
	# The step open when the ring filled lost its end: cut at its last
	# record, not stretched over the stop (steps take milliseconds).
	[ "$lost" -ge 1 ]
	[ "$max_us" -lt 500000 ]
	run python3 - "$OUT" <<'PY'
import glob, json, sys
for p in glob.glob(sys.argv[1] + "/trace_*.json"):
    m = json.load(open(p))["otherData"]
    if m["lost_end"]:
        assert m["incomplete"] and m["ringbuf_drops"] > 0, p
        print("lost_end_drops", m["ringbuf_drops"])
PY
	assert_success
	assert_output --partial "lost_end_drops"
	# Said once, not once per lost record.
	[ "$(grep -c 'the ring buffer overflowed' "$FV_ERR")" -eq 1 ]
	grep -q "raise --ringbuf-size" "$FV_ERR"
}

# A consumer slower than its target: libbpf drains the ring until it is
# empty, which a target that fills it faster never lets happen; fvbpf
# must still read its signals and -d between passes (ring_consume.c).
# The test build's consumer sleeps 5 us a record: slower than the flood
# on any machine (the case seen: the ASan build with --record-shapes on
# three busy ranks, beside two busy loops, ran on for 10 minutes).
@test "overload: a target that outruns the consumer: fvbpf still stops on Ctrl-C and at -d" {
	local flood=$BUILD/tests/event_flood fvt
	fvt=$(dirname "$FVBPF")/fvbpf-test
	[ -x "$fvt" ] || skip "no $fvt"
	start_workload "$WL_LOG" "$flood" --threads 2 --pairs 2000 --seconds 120
	FVBPF=$fvt FVBPF_TEST_RING_DELAY_US=5 start_fvbpf -p "$WL_PID" -o "$OUT" \
		-r training_train_one_step,training_forward
	kill -INT "$FV_PID"
	wait_fvbpf 30
	cat "$FV_ERR"; tail -n 5 "$FV_OUT"   # shown when the test fails
	[ "$FV_STATUS" -eq 0 ]
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$OUT/manifest.json"
	# the same with a duration
	FVBPF_TEST_RING_DELAY_US=5 run timeout -k 5 40 "$fvt" attach -p "$WL_PID" -o "$OUT.d" \
		-r training_train_one_step,training_forward -d 1
	echo "$output" | tail -n 5
	assert_success
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$OUT.d/manifest.json"
	# what it could not read is said
	assert_output --partial "loss: records still in the ring when fvbpf stopped were not read"
}
