#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# HolisticTraceAnalysis 0.5.0 (its own venv, `make venv`) reads fvbpf's JSON
# traces as it reads Kineto's: a 2-rank job of the simulated-GPU workload
# (tests/workloads/c/gpu_sim.c: real CUPTI record structs through the real
# agent, no driver), exported with `fvbpf export` into one folder per step.

load helpers

CUDA=${CUDA:-/usr/local/cuda}
SIM=$BUILD/tests/gpu_sim
HTA_PY=${FVBPF_HTA_PY:-$BUILD/venv-hta/bin/python3}
HTA_CHECK=$ROOT/tests/lib/hta_check.py
REGIONS=training_train_one_step,training_forward

setup() {
	common_setup
	[ -x "$SIM" ] || skip "no CUDA toolkit headers: gpu_sim not built"
	[ -e "$CUDA/lib64/libcupti.so.13" ] || skip "no libcupti at $CUDA/lib64"
	if [ ! -x "$HTA_PY" ]; then
		echo "no HolisticTraceAnalysis venv at $HTA_PY: run \`make venv\`" >&2
		return 1
	fi
}
teardown() { common_teardown; }

# Two ranks of gpu_sim, traced for 3 steps into $OUT; they leave each
# step's forward together (--barrier, as a collective would make them), so
# that their steps overlap however the machine schedules them: export pairs
# ranks by step on the wall clock (issue 35).
two_ranks() {
	local r pids=()
	mkdir -p "$BATS_TEST_TMPDIR/barrier"
	for r in 0 1; do
		RANK=$r WORLD_SIZE=2 FVBPF_AGENT=off start_workload "$BATS_TEST_TMPDIR/wl$r.log" \
			"$SIM" --steps 3 --kernels 3 --wait-signal --idle --barrier "$BATS_TEST_TMPDIR/barrier"
		pids+=("$WL_PID")
	done
	start_fvbpf -p "${pids[0]}" -p "${pids[1]}" -o "$OUT" -n 3 -r "$REGIONS" "$@"
	kill -USR1 "${pids[@]}"
	wait_fvbpf 30
	[ "$FV_STATUS" -eq 0 ]
}

@test "fvbpf export: one folder per step, one trace per rank, nothing else in it" {
	two_ranks
	run "$FVBPF" export "$OUT" -o "$BATS_TEST_TMPDIR/hta"
	assert_success
	assert_output --partial "exported 6 traces"
	run find "$BATS_TEST_TMPDIR/hta" -type f -printf '%P\n'
	assert_success
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "training_train_one_step/step0000/rank0.pt.trace.json training_train_one_step/step0000/rank1.pt.trace.json training_train_one_step/step0001/rank0.pt.trace.json training_train_one_step/step0001/rank1.pt.trace.json training_train_one_step/step0002/rank0.pt.trace.json training_train_one_step/step0002/rank1.pt.trace.json " ]
	# the same bytes as the segment's trace
	cmp "$OUT/trace_rank1_segment0001_training_train_one_step.json" \
		"$BATS_TEST_TMPDIR/hta/training_train_one_step/step0001/rank1.pt.trace.json"
	# again: the files are replaced, not refused
	run "$FVBPF" export "$OUT" -o "$BATS_TEST_TMPDIR/hta"
	assert_success
	run "$FVBPF" export -o "$BATS_TEST_TMPDIR/x"
	[ "$status" -eq 2 ]
}

@test "HTA: both ranks, the step, and its analyses on an exported step" {
	# what this checks runs in the browser (or HTA), not in fvbpf: the ASan pass
	# (FVBPF_SANITIZED) has nothing more to find here
	[ -z "${FVBPF_SANITIZED:-}" ] || skip "no fvbpf code under test: the plain pass runs it"
	two_ranks
	"$FVBPF" export "$OUT" -o "$BATS_TEST_TMPDIR/hta"
	local d=$BATS_TEST_TMPDIR/hta/training_train_one_step
	run env -C "$BATS_TEST_TMPDIR" timeout 600 "$HTA_PY" "$HTA_CHECK" "$d/step0001" "$d/step0002"
	echo "$output" | grep -v '^Parsed\|^Overall\|^leaving\|Rounding' >&2
	assert_success
	assert_line "ranks=0,1"
	assert_line "steps=1"
	local a
	for a in temporal_breakdown kernel_breakdown idle_time launch_stats queue_length memory_bw \
		critical_path trace_diff; do
		assert_line --regexp "^$a ok "
	done
	# launch stats of both ranks
	assert_line "launch_stats ok {2}"
}

@test "Kineto keys: distributedInfo as HTA's regex reads it, ProfilerStep#N, Kineto's argument names" {
	two_ranks
	local f=$OUT/trace_rank1_segment0002_training_train_one_step.json
	grep -Eq '"rank":[[:space:]]+1,' "$f"
	python3 - "$f" <<-'EOF'
		import json, sys
		t = json.load(open(sys.argv[1]))
		assert t["distributedInfo"]["world_size"] == 2, t["distributedInfo"]
		assert t["baseTimeNanoseconds"] > 1600000000 * 10**9
		ev = t["traceEvents"]
		steps = [e for e in ev if e["name"] == "ProfilerStep#2"]
		assert len(steps) == 1 and steps[0]["cat"] == "user_annotation", steps
		assert all("ts" in e for e in ev if e["ph"] == "M")
		k = [e for e in ev if e.get("cat") == "kernel"]
		assert k and all("registers per thread" in e["args"] and "shared memory" in e["args"] for e in k)
		m = [e for e in ev if e.get("cat") == "gpu_memcpy"]
		assert m and all("memory bandwidth (GB/s)" in e["args"] for e in m)
		assert [e for e in ev if e.get("cat") == "gpu_user_annotation"]
	EOF
}
