#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# End to end on the C workload: real BPF, real uprobes, real files.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

@test "segments and annotations equal the workload's own counts" {
	start_workload "$WL_LOG" "$TRAINER" --steps 6 --step-ms 12 --wait-signal --idle --threads
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 6 \
		-r training_train_one_step,training_forward,training_backward,training_dataloader,training_optimizer
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	wait_for grep -q '^counts' "$WL_LOG"
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=6 incomplete=0"
	assert_line "who rank0=6"
	[ "$(chk_count 'region training_train_one_step' "$output")" = "$(wl_count train_one_step)" ]
	[ "$(chk_count 'region training_forward' "$output")" = "$(wl_count forward)" ]
	[ "$(chk_count 'region training_backward' "$output")" = "$(wl_count backward)" ]
	[ "$(chk_count 'region training_optimizer' "$output")" = "$(wl_count optimizer)" ]
	# the main thread's and the worker thread's dataloader regions
	[ "$(chk_count 'region training_dataloader' "$output")" = \
	  "$(( $(wl_count dataloader) + $(wl_count worker_dataloader) ))" ]
	# callbacks was not requested, the unregistered name is unknown
	refute_line --partial "region training_callbacks"
	refute_line --partial "not_a_registered_region"
	assert_line "max_threads=2"
	assert_file_exists "$OUT/trace_rank0_segment0000_training_train_one_step.json"
	assert_file_exists "$OUT/summary_rank0_segment0005_training_train_one_step.txt"
	assert_file_exists "$OUT/summary_rank0_segment0005_training_train_one_step.json"
	assert_file_not_exists "$OUT/trace_rank0_segment0006_training_train_one_step.json"
}

@test "the worker thread's slices sit on their own named track" {
	start_workload "$WL_LOG" "$TRAINER" --steps 2 --step-ms 12 --wait-signal --idle --threads
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 2 -r training_train_one_step,training_dataloader
	kill -USR1 "$WL_PID"
	wait_fvbpf
	run python3 - "$OUT/trace_rank0_segment0001_training_train_one_step.json" "$WL_PID" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
names = {e["tid"]: e["args"]["name"] for e in t["traceEvents"] if e.get("name") == "thread_name"}
dl = [e for e in t["traceEvents"] if e.get("ph") == "X" and e["name"].endswith("training_dataloader")]
tids = sorted({e["tid"] for e in dl})
print("tids", len(tids), "worker_named", any(names.get(x) == "dl_worker" for x in tids),
      "main", pid in tids, "pid_ok", all(e["pid"] == pid for e in dl))
PY
	assert_success
	assert_output "tids 2 worker_named True main True pid_ok True"
}

@test "target keeps running after detach and fvbpf_attached() is back to 0" {
	start_workload "$WL_LOG" "$TRAINER" --steps 2 --step-ms 6 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 2 -r training_train_one_step
	kill -USR1 "$WL_PID"
	wait_fvbpf
	wait_for grep -q '^attached=1' "$WL_LOG"
	local lines
	lines=$(wc -l <"$WL_LOG")
	# new lines after fvbpf left, and they say 0
	wait_for bash -c "[ \$(wc -l <'$WL_LOG') -gt $((lines + 2)) ]"
	kill -0 "$WL_PID"
	[ "$(tail -n 1 "$WL_LOG")" = "attached=0" ]
	# the kernel's semaphore count is back to zero: attaching again works
	start_fvbpf -p "$WL_PID" -o "$OUT/again" -r training_train_one_step -d 0.3
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	kill -0 "$WL_PID"
}

@test "RANK from the target's environment names the files" {
	RANK=3 start_workload "$WL_LOG" "$TRAINER" --steps 1 --step-ms 6 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 1 -r training_train_one_step
	kill -USR1 "$WL_PID"
	wait_fvbpf
	assert_file_exists "$OUT/trace_rank3_segment0000_training_train_one_step.json"
	run python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['otherData']['rank'])" \
		"$OUT/trace_rank3_segment0000_training_train_one_step.json"
	assert_output "3"
}

@test "two processes of one rank are named by pid, both traced" {
	start_workload "$WL_LOG" "$TRAINER" --steps 2 --step-ms 6 --wait-signal --idle
	local p1=$WL_PID
	start_workload "$WL_LOG.2" "$TRAINER" --steps 3 --step-ms 6 --wait-signal --idle
	local p2=$WL_PID
	start_fvbpf -p "$p1,$p2" -o "$OUT" -r training_train_one_step,training_forward -n 2
	kill -USR1 "$p1" "$p2"
	wait_for grep -q '^counts' "$WL_LOG.2"
	wait_fvbpf
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "who pid$p1=2"
	assert_line "who pid$p2=2"
	refute_line --partial "who rank"
}

# BPF finds a marker hit's process by the tgid's low 12 bits (map
# tgid_slots); of two processes on one index the later attached takes it
# and the other falls back to its probes' cookie.  Both must be traced.
@test "two processes whose pids share BPF's tgid index are both traced" {
	start_workload "$WL_LOG" "$TRAINER" --steps 2 --step-ms 6 --wait-signal --idle
	local p1=$WL_PID p2 max i
	max=$(cat /proc/sys/kernel/pid_max)
	if [ $((p1 + 4096)) -lt "$max" ]; then p2=$((p1 + 4096)); else p2=$((p1 - 4096)); fi
	[ "$p2" -gt 300 ]
	# The next fork gets ns_last_pid + 1, unless another process forks
	# first: try again.
	for i in $(seq 20); do
		[ -e "/proc/$p2" ] && p2=$((p2 + 4096 < max ? p2 + 4096 : p2 - 4096)) && continue
		echo $((p2 - 1)) >/proc/sys/kernel/ns_last_pid
		"$TRAINER" --steps 3 --step-ms 6 --wait-signal --idle >"$WL_LOG.2" 2>&1 &
		WL_PIDS+=($!)
		disown
		[ "${WL_PIDS[-1]}" -eq "$p2" ] && break
	done
	[ "${WL_PIDS[-1]}" -eq "$p2" ]
	[ $((p1 % 4096)) -eq $((p2 % 4096)) ]
	wait_for grep -q '^pid=' "$WL_LOG.2"
	start_fvbpf -p "$p1,$p2" -o "$OUT" -r training_train_one_step,training_forward -n 2
	kill -USR1 "$p1" "$p2"
	wait_for grep -q '^counts' "$WL_LOG.2"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	echo "$output"
	assert_success
	assert_line "who pid$p1=2"
	assert_line "who pid$p2=2"
}

@test "an enabled outer region makes one segment with every step inside" {
	start_workload "$WL_LOG" "$TRAINER" --steps 4 --step-ms 6 --wait-signal --idle --train
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 1 -r training_train,training_train_one_step,training_forward
	kill -USR1 "$WL_PID"
	wait_fvbpf
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=1 incomplete=0"
	assert_line "region training_train=1"
	assert_line "region training_train_one_step=4"
	assert_line "region training_forward=4"
	assert_file_exists "$OUT/trace_rank0_segment0000_training_train.json"
}

@test "a region that is not enabled never opens a segment" {
	start_workload "$WL_LOG" "$TRAINER" --steps 2 --step-ms 6 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 2 -r training_forward
	kill -USR1 "$WL_PID"
	wait_fvbpf
	run python3 "$CHECK" "$OUT"
	assert_success
	# train_one_step is not enabled, so every forward is its own segment
	assert_line "segments=2 incomplete=0"
	assert_file_exists "$OUT/trace_rank0_segment0001_training_forward.json"
	refute_line --partial "region training_train_one_step"
}

@test "-r falls back to FASTVIDEO_TORCH_PROFILE_REGIONS" {
	start_workload "$WL_LOG" "$TRAINER" --steps 1 --step-ms 6 --wait-signal --idle
	FASTVIDEO_TORCH_PROFILE_REGIONS=profiler_region_training_train_one_step,profiler_region_training_forward \
		start_fvbpf -p "$WL_PID" -o "$OUT" -n 1
	kill -USR1 "$WL_PID"
	wait_fvbpf
	run python3 "$CHECK" "$OUT"
	assert_line "region training_forward=1"
}

@test "--region-file adds regions, and an odd name is escaped in JSON" {
	cat >"$BATS_TEST_TMPDIR/regions.txt" <<'R'
# custom regions
my_step  a step of my own
R
	run "$FVBPF" regions --region-file "$BATS_TEST_TMPDIR/regions.txt"
	assert_success
	assert_line --partial "my_step"
	assert_line --partial "training_train_one_step"
	[ "${#lines[@]}" -eq 19 ]
}

@test "SIGINT mid-segment writes it as incomplete and exits 0" {
	start_workload "$WL_LOG" "$TRAINER" --steps 2 --step-ms 6 --wait-signal --hang-in-region
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step,training_forward
	kill -USR1 "$WL_PID"
	wait_for grep -q '^hanging' "$WL_LOG"
	kill -INT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=3 incomplete=1"
	assert_line "region training_forward=3"
	grep -q "PID $WL_PID was still inside segment 2 (training_train_one_step): written as incomplete" "$FV_ERR"
	kill -0 "$WL_PID"
}

@test "a second SIGINT stops fvbpf at once and the target is restored" {
	start_workload "$WL_LOG" "$TRAINER" --steps 0 --step-ms 30 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step
	kill -USR1 "$WL_PID"
	# Held stopped, the two signals are both pending when it resumes (two
	# SIGINTs would merge into one): the second one must kill it.
	kill -STOP "$FV_PID"
	kill -INT "$FV_PID"
	kill -TERM "$FV_PID"
	kill -CONT "$FV_PID"
	wait_fvbpf
	[ "$FV_STATUS" -ge 128 ]
	kill -0 "$WL_PID"
	kill -TERM "$WL_PID"
	wait_for grep -q '^attached=0' "$WL_LOG"
}

@test "a target that exits mid-segment gives an incomplete segment and exit 0" {
	start_workload "$WL_LOG" "$TRAINER" --steps 2 --step-ms 6 --wait-signal --exit-in-region
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step,training_forward
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=3 incomplete=1"
	grep -q "PID $WL_PID exited inside segment 2" "$FV_ERR"
	# the region slices (the ProfilerStep#N span for Kineto's tools aside)
	run python3 -c "import json,sys; t=json.load(open(sys.argv[1])); print(t['otherData']['incomplete'], [e['args'].get('incomplete') for e in t['traceEvents'] if e.get('ph')=='X' and not e['name'].startswith('ProfilerStep#')])" \
		"$OUT/trace_rank0_segment0002_training_train_one_step.json"
	assert_output "True [True, True]"
}

@test "-d stops after the duration" {
	start_workload "$WL_LOG" "$TRAINER" --steps 0 --step-ms 20 --idle
	local t0=$SECONDS
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step -d 1
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	[ $((SECONDS - t0)) -le 4 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line --regexp "^segments=(2[0-9]|[3-9][0-9]) incomplete=[01]$"
}

@test "--window on a process linked with the library: consecutive time windows" {
	start_workload "$WL_LOG" "$TRAINER" --steps 0 --step-ms 20 --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" --window 0.25 -d 1.2
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	# 1.2 s from the run loop's start, windows from the attach: at least
	# four whole ones and the one open at the stop
	assert_line --regexp "^segments=([5-9]|[1-9][0-9]) incomplete=1$"
	run python3 - "$OUT" <<'PY'
import glob, json, sys
meta = sorted((json.load(open(f))["otherData"] for f in glob.glob(sys.argv[1] + "/trace_*_window.json")),
              key=lambda m: m["segment"])
print("windows", len(meta) == len(glob.glob(sys.argv[1] + "/trace_*.json")))
print("consecutive", all(abs(a["end_us"] - b["start_us"]) < 0.002 for a, b in zip(meta, meta[1:])))
print("whole", all(abs(m["duration_us"] - 250000) < 1 for m in meta[:-1]))
PY
	assert_line "windows True"
	assert_line "consecutive True"
	assert_line "whole True"
}

@test "attached mid-region: the open region is a segment marked as started before attach" {
	start_workload "$WL_LOG" "$TRAINER" --steps 1 --step-ms 6 --hang-in-region
	wait_for grep -q '^hanging' "$WL_LOG"
	start_fvbpf -p "$WL_PID" -o "$OUT" -r training_train_one_step,training_forward
	# the workload leaves forward and the step, then exits: fvbpf must learn
	# that both were open before it attached
	kill -TERM "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$CHECK" "$OUT"
	assert_success
	assert_line "segments=1 incomplete=0"
	assert_line "region training_train_one_step=1"
	assert_line "region training_forward=1"
	run python3 -c "import json,sys; t=json.load(open(sys.argv[1])); print(t['otherData']['started_before_attach'], sorted((e['args']['region'], e['args'].get('started_before_attach')) for e in t['traceEvents'] if e.get('ph')=='X' and not e['name'].startswith('ProfilerStep#')))" \
		"$OUT/trace_rank0_segment0000_training_train_one_step.json"
	assert_output "True [('training_forward', True), ('training_train_one_step', True)]"
	grep -q "started before attach" "$FV_OUT"
	refute_output --partial "unbalanced"
}

@test "-n counts only segments whose start was seen" {
	start_workload "$WL_LOG" "$TRAINER" --steps 0 --step-ms 40 --idle
	# attach while a step is running most of the time
	sleep 0.1
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 2 -r training_train_one_step
	wait_fvbpf
	run python3 "$CHECK" "$OUT"
	assert_success
	run python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(sum(not f['started_before_attach'] for f in m['files']), sum(f['started_before_attach'] for f in m['files']) <= 1)" "$OUT/manifest.json"
	assert_output "2 True"
}

@test "under sudo the files belong to the invoking user" {
	start_workload "$WL_LOG" "$TRAINER" --steps 1 --step-ms 6 --wait-signal --idle
	SUDO_UID=65534 SUDO_GID=65534 start_fvbpf -p "$WL_PID" -o "$OUT/by-user" -n 1 -r training_train_one_step
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	# the directory fvbpf created and every file in it
	run stat -c '%u:%g %n' "$OUT/by-user" "$OUT"/by-user/*
	assert_success
	refute_output --partial "0:0 "
	[ "$(grep -c '^65534:65534 ' <<<"$output")" -eq 5 ]
}

@test "make install honours PREFIX and DESTDIR" {
	plain_pass_only "no fvbpf code runs"
	local dest=$BATS_TEST_TMPDIR/dest
	run make -C "$ROOT" BUILD="$BUILD" install PREFIX=/opt/fv DESTDIR="$dest"
	assert_success
	assert_file_executable "$dest/opt/fv/bin/fvbpf"
	assert_file_exists "$dest/opt/fv/lib/libfvbpf.so"
	assert_file_exists "$dest/opt/fv/include/fvbpf/fvbpf.h"
	run bash -c "ls '$dest'/opt/fv/lib/python3*/site-packages/fvbpf/__init__.py"
	assert_success
}

# `sudo make install` under the default prefix: the Python package goes
# where the python3 that installs it looks (Debian's: dist-packages, not the
# site-packages it ignores).
@test "make install: the Python package lands in a directory the python3 reads" {
	plain_pass_only "no fvbpf code runs"
	local dest=$BATS_TEST_TMPDIR/dest py=/usr/bin/python3 dir
	run make -C "$ROOT" BUILD="$BUILD" install DESTDIR="$dest" PYTHON="$py"
	assert_success
	dir=$(dirname "$(find "$dest" -path '*/fvbpf/__init__.py' | head -n1)")
	dir=${dir#"$dest"}
	dir=$(dirname "$dir")
	run "$py" -c 'import site, sys; print(sys.argv[1] in site.getsitepackages())' "$dir"
	assert_output True
}

# Region times: the library reads CLOCK_MONOTONIC itself and hands it to
# the _ts probe functions (cheaper here than BPF's clock helper).  The
# workload's own clock_gettime(), which libfvbpf.so's calls bind to, cuts
# every reading to a whole microsecond: BPF's clock would not.
region_times() { # trace -> "slices N whole_us K min_dur D"
	python3 - "$1" <<'PY'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"]
      if e.get("ph") == "X" and e["name"].startswith("fvbpf.region::")]
whole = sum(1 for e in ev if round(e["ts"] * 1000) % 1000 == 0)
print("slices %d whole_us %d min_dur_ok %s" % (len(ev), whole, min(e["dur"] for e in ev) >= 0))
PY
}

clock_run() { # workload args...: one segment of training_train under fvbpf
	start_workload "$WL_LOG" "$@"
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 1 -r training_train,training_forward
	wait_fvbpf 60
	[ "$FV_STATUS" -eq 0 ]
	wait_for grep -q '^counts' "$WL_LOG"
}

@test "region times are the library's own clock readings" {
	clock_run "$BUILD/tests/marker_clock" --pairs 20
	run region_times "$OUT/trace_rank0_segment0000_training_train.json"
	assert_output "slices 21 whole_us 21 min_dur_ok True"
	run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0]["marker_times_out_of_range"])' "$OUT/manifest.json"
	assert_output "0"
	run grep -c "region times from the library out of range" "$FV_OUT"
	assert_output "0"
}

@test "a library from before the _ts probes still gets BPF's clock" {
	LD_LIBRARY_PATH=$BUILD/old-lib clock_run "$BUILD/tests/marker_clock" --pairs 20
	grep -q "markers in $BUILD/old-lib/libfvbpf.so" "$FV_ERR"
	run region_times "$OUT/trace_rank0_segment0000_training_train.json"
	# BPF's nanoseconds: 21 whole microseconds by chance is one in 10^63
	assert_output --regexp '^slices 21 whole_us ([0-9]|1[0-9]) min_dur_ok True$'
}

@test "an fvbpf from before the _ts probes gets the plain pair from this library" {
	plain_pass_only "fvbpf-test's old-loader knob on the first test's code"
	FVBPF=$(dirname "$FVBPF")/fvbpf-test FVBPF_TEST_OLD_LOADER=1 \
		clock_run "$BUILD/tests/marker_clock" --pairs 20
	run region_times "$OUT/trace_rank0_segment0000_training_train.json"
	assert_output --regexp '^slices 21 whole_us ([0-9]|1[0-9]) min_dur_ok True$'
}

@test "region times that cannot be (an hour off) are pulled in and counted" {
	local skew
	for skew in -3600 3600; do
		clock_run "$BUILD/tests/marker_clock" --pairs 20 --skew-s "$skew"
		# 42 marker calls: 21 begins, 21 ends, each out of range
		grep -q "markers: 42 region times from the library out of range" "$FV_OUT"
		run python3 - "$OUT" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
t = json.load(open(d + "/trace_rank0_segment0000_training_train.json"))
ev = [e for e in t["traceEvents"] if e.get("ph") == "X" and e["name"].startswith("fvbpf.region::")]
# pulled in: no slice an hour away from the others, none of negative length
span = max(e["ts"] + e["dur"] for e in ev) - min(e["ts"] for e in ev)
print(m["processes"][0]["marker_times_out_of_range"], len(ev), span < 60e6,
      min(e["dur"] for e in ev) >= 0)
PY
		assert_output "42 21 True True"
		rm -rf "$OUT"
		mkdir -p "$OUT"
	done
}
