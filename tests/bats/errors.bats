#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Every error a user can cause: a one-line message naming cause and fix,
# and the exit status the README promises.

load helpers

setup() { common_setup; }
teardown() {
	local rc=0
	common_teardown || rc=$?
	[ -n "${MNT:-}" ] && umount "$MNT" 2>/dev/null
	[ -n "${NR_DIR:-}" ] && rm -rf "$NR_DIR"
	return $rc
}

start_idle_trainer() {
	start_workload "$WL_LOG" "$TRAINER" --steps 0 --step-ms 10 --idle
}

@test "not root: says to use sudo" {
	command -v setpriv >/dev/null || skip "setpriv (util-linux) missing"
	# bats' own temporary directories are private to root
	NR_DIR=$(mktemp -d /tmp/fvbpf-nonroot.XXXXXX)
	chmod 755 "$NR_DIR"
	cp "$FVBPF" "$NR_DIR/fvbpf"
	start_idle_trainer
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$NR_DIR/fvbpf" attach \
		-p "$WL_PID" -r training_forward -o "$NR_DIR/out"
	assert_failure 1
	assert_output "fvbpf: error: fvbpf attach needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE): run it with sudo"
}

@test "no BTF: names the kernel option" {
	start_idle_trainer
	# A mount namespace of its own where an empty file hides the kernel's
	# BTF: no test override in the binary.
	: >"$BATS_TEST_TMPDIR/empty"
	run unshare -m sh -c 'mount --bind "$1" /sys/kernel/btf/vmlinux && shift && exec "$@"' sh \
		"$BATS_TEST_TMPDIR/empty" "$FVBPF" attach -p "$WL_PID" -r training_forward -o "$OUT"
	assert_failure 1
	assert_output --partial "kernel BTF not found at /sys/kernel/btf/vmlinux: boot a kernel built with CONFIG_DEBUG_INFO_BTF=y"
}

@test "no such PID" {
	local pid=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
	while kill -0 "$pid" 2>/dev/null; do pid=$((pid - 1)); done
	run "$FVBPF" attach -p "$pid" -r training_forward -o "$OUT"
	assert_failure 1
	assert_output "fvbpf: error: no process with PID $pid: check the PID (ps -p $pid)"
}

@test "a PID without markers: says how to load them" {
	start_workload "$WL_LOG" bash -c 'echo pid=$$; exec sleep 30'
	run "$FVBPF" attach -p "$WL_PID" -r training_forward -o "$OUT"
	assert_failure 1
	assert_output --partial "PID $WL_PID (sleep) has no fvbpf markers mapped and no libtorch_cpu: link it with -lfvbpf, start it with LD_PRELOAD=libfvbpf.so, import fvbpf in Python before attaching, or cut time windows with --window"
}

@test "a libfvbpf.so of another control-page layout in the job: refused in one line, not misread" {
	local magic
	# "fvbc": the layout before the page's channels (struct fvbpf_channel)
	start_workload "$WL_LOG" python3 "$ROOT/tests/workloads/stale_page.py" "$BUILD/libfvbpf.so" 0x63627666
	run "$FVBPF" attach -p "$WL_PID" -r training_train_one_step -o "$OUT" -d 0.3
	assert_failure 1
	assert_output --partial "fvbpf: error: PID $WL_PID: its fvbpf library's control page is not recognised (magic 0x63627666): use the libfvbpf.so of this fvbpf"
	[ "$(grep -c 'fvbpf: error' <<<"$output")" -eq 1 ]
	# the same job with this layout's magic is taken: the refusal is the magic's
	magic=$(awk '/define FVBPF_CONTROL_MAGIC/ {sub(/u$/, "", $3); print $3}' "$ROOT/include/fvbpf_events.h")
	[ "$magic" != 0x63627666 ]
	start_workload "$WL_LOG.2" python3 "$ROOT/tests/workloads/stale_page.py" "$BUILD/libfvbpf.so" "$magic"
	run "$FVBPF" attach -p "$WL_PID" -r training_train_one_step -o "$OUT/2" -d 0.3
	assert_success
	assert_output --partial "attached to PID $WL_PID"
	refute_output --partial "not recognised"
}

@test "unknown region: a warning, the valid ones are traced" {
	start_idle_trainer
	run "$FVBPF" attach -p "$WL_PID" -r Training_Forward,no_such_region -o "$OUT" -n 2
	assert_success
	assert_line "fvbpf: warning: unknown region 'no_such_region' ignored (see 'fvbpf regions', or add it with --region-file)"
	assert_file_exists "$OUT/trace_rank0_segment0001_training_forward.json"
}

@test "no valid region: an error that lists the registry" {
	start_idle_trainer
	run "$FVBPF" attach -p "$WL_PID" -r bogus,worse -o "$OUT"
	assert_failure 1
	assert_line --partial "fvbpf: error: no valid region in 'bogus,worse'; known regions: model_loading, inference_denoising"
	assert_line --partial "dmd2_critic_loss"
}

@test "no region at all: says how to give them" {
	start_idle_trainer
	FASTVIDEO_TORCH_PROFILE_REGIONS= run "$FVBPF" attach -p "$WL_PID" -o "$OUT"
	assert_failure 1
	assert_output --partial "no regions given: use -r"
}

@test "bad arguments are usage errors" {
	run "$FVBPF" attach -p abc -r training_forward
	assert_failure 2
	assert_output --partial "invalid PID 'abc'"
	run "$FVBPF" attach -r training_forward
	assert_failure 2
	assert_output --partial "no process given: use -p PID"
	run "$FVBPF" attach -p 1 -r training_forward -n 0
	assert_failure 2
	run "$FVBPF" frobnicate
	assert_failure 2
	assert_output --partial "unknown command 'frobnicate'"
}

@test "output directory with an earlier attach's files: refused before attaching, removed with --overwrite" {
	start_workload "$WL_LOG" "$TRAINER" --steps 0 --step-ms 6
	mkdir -p "$OUT"
	echo '{}' >"$OUT/manifest.json"
	touch "$OUT/trace_rank0_segment0000_training_forward.json" "$OUT/notes.txt"
	run "$FVBPF" attach -p "$WL_PID" -r training_forward -o "$OUT" -n 1
	assert_failure 1
	assert_output --partial "output directory $OUT holds 2 files of an earlier attach (manifest.json, trace_*, summary_*): give a new or empty -o, or --overwrite to remove them first"
	refute_output --partial "attached to PID"
	run "$FVBPF" attach -p "$WL_PID" -r training_forward -o "$OUT" -n 1 --overwrite
	assert_success
	assert_output --partial "removed 2 files of an earlier attach from $OUT (--overwrite)"
	# the user's own file stays; the new run's files are the only ones (one
	# counted segment, and one begun before the attach where it landed
	# inside a region): each listed and a whole trace, none left empty
	assert_file_exists "$OUT/notes.txt"
	run python3 -c '
import json, os, sys
out = sys.argv[1]
m = json.load(open(out + "/manifest.json"))
listed = {f["trace"] for f in m["files"]}
assert sum(f["counted"] for f in m["files"]) == 1, m["files"]
ours = {n for n in os.listdir(out) if n.startswith("trace_")}
assert ours == listed, (ours, listed)
for n in ours:
    json.load(open(out + "/" + n))
print("ok", len(ours))' "$OUT"
	assert_output --regexp '^ok [12]$'
}

@test "output directory not writable: refused before attaching" {
	start_workload "$WL_LOG" "$TRAINER" --steps 1 --step-ms 6 --idle
	MNT=$BATS_TEST_TMPDIR/ro
	mkdir -p "$MNT"
	mount -t tmpfs -o ro,size=1m tmpfs "$MNT"
	run "$FVBPF" attach -p "$WL_PID" -r training_forward -o "$MNT"
	assert_failure 1
	assert_output --partial "output directory $MNT is not writable: Read-only file system; choose another with -o"
	refute_output --partial "attached to PID"
	# and the target's semaphore was never raised
	wait_for grep -q '^attached=0' "$WL_LOG"
	run grep -c '^attached=1' "$WL_LOG"
	assert_output "0"
}

@test "disk full: segments that cannot be written are reported, exit 1" {
	start_idle_trainer
	MNT=$BATS_TEST_TMPDIR/full
	mkdir -p "$MNT"
	mount -t tmpfs -o size=8k tmpfs "$MNT"
	run "$FVBPF" attach -p "$WL_PID" -r training_train_one_step,training_forward -o "$MNT" -n 8
	assert_failure 1
	assert_output --partial "No space left on device (disk full: free space or choose another -o)"
	assert_output --regexp "fvbpf: error: [0-9]+ segments? could not be written to $MNT: disk full; free space or choose another -o"
	# nothing half-written is left behind
	run bash -c "ls -A '$MNT' | grep -c '\.tmp\.'"
	assert_output "0"
}

@test "a requested region never entered is reported at exit" {
	start_idle_trainer
	run "$FVBPF" attach -p "$WL_PID" -r training_train_one_step,training_validation -o "$OUT" -d 0.5
	assert_success
	assert_line "fvbpf: warning: region 'training_validation' was never entered while attached: check the name and that the target runs that code"
	run python3 "$CHECK" "$OUT"
	assert_line "never_entered=training_validation"
}

# Every option checks its type and range: one line naming the option and
# what it accepts, exit 2, before anything is attached.  Each of these was
# accepted, truncated or hung before.
usage_error() { # expected-message args...
	local want=$1
	shift
	run timeout 10 "$FVBPF" attach -p 1 -r training_forward "$@"
	assert_failure 2
	assert_output "fvbpf: error: $want"
}

@test "-d: nan, inf, hex and out of range are refused" {
	local a
	for a in nan inf -inf 0 -1 1e400 0x10 31536001 ''; do
		usage_error "invalid -d '$a': give seconds from 0.001 to 31536000 (365 days), e.g. -d 30" -d "$a"
	done
}

@test "-n: huge counts are refused, not truncated" {
	local a
	for a in 0 -1 ' 3' 99999999999 4294967297 1000000001 3x ''; do
		usage_error "invalid -n '$a': give a segment count from 1 to 1000000000, e.g. -n 3" -n "$a"
	done
}

@test "--ringbuf-size: huge sizes are refused, not truncated" {
	local a
	for a in 0 3 2048 4294967297 4294967296 -8 8MB ''; do
		usage_error "invalid --ringbuf-size '$a': give a power of two from 1 to 1024 (MiB)" --ringbuf-size "$a"
	done
}

@test "--gpu-wait: nan and out of range are refused" {
	local a
	for a in nan inf -1 601 1e999 ''; do
		usage_error "invalid --gpu-wait '$a': give seconds from 0 to 600" --gpu-wait "$a"
	done
}

@test "-p and -o: ranges named" {
	usage_error "invalid PID '0' for -p: give a process id from 1 to 4194304, e.g. -p 1234" -p 0
	usage_error "invalid PID '4194305' for -p: give a process id from 1 to 4194304, e.g. -p 1234" -p 4194305
	usage_error "invalid PID '-5' for -p: give a process id from 1 to 4194304, e.g. -p 1234" -p -5
	usage_error "too many PIDs for -p: at most 64 per attach" -p "$(seq -s, 2 65)"
	usage_error "invalid -o: give a directory name of 1 to 3900 bytes" -o ''
	usage_error "invalid -o: give a directory name of 1 to 3900 bytes" -o "/tmp/$(printf 'd%.0s' $(seq 3900))"
	usage_error "unexpected argument 'extra': see fvbpf attach --help" extra
}

@test "--region-file: devices, FIFOs and directories are refused at once" {
	local fifo=$BATS_TEST_TMPDIR/fifo
	mkfifo "$fifo"
	usage_error "--region-file: region file /dev/zero is a device: give a text file" --region-file /dev/zero
	usage_error "--region-file: region file $BATS_TEST_TMPDIR is a directory: give a text file" \
		--region-file "$BATS_TEST_TMPDIR"
	# No writer: opening must not block, reading must not wait.
	usage_error "--region-file: region file $fifo is a FIFO: give a text file" --region-file "$fifo"
	usage_error "--region-file: cannot read region file /nonexistent: No such file or directory" \
		--region-file /nonexistent
}

@test "--region-file: size, line length and content are capped" {
	local f=$BATS_TEST_TMPDIR/regions
	truncate -s 1048577 "$f"
	usage_error "--region-file: region file $f is larger than 1048576 bytes (1 MiB)" --region-file "$f"
	printf 'ok_region\n%0600d\n' 0 >"$f"
	usage_error "--region-file: $f:2: line longer than 512 bytes" --region-file "$f"
	printf 'ok_region\nbad\033[31m_region\n' >"$f"
	usage_error "--region-file: $f:2: control characters or invalid UTF-8: names and descriptions must be plain UTF-8 text" \
		--region-file "$f"
	printf 'bad\377name\n' >"$f"
	usage_error "--region-file: $f:1: control characters or invalid UTF-8: names and descriptions must be plain UTF-8 text" \
		--region-file "$f"
	for i in $(seq 300); do echo "region_$i"; done >"$f"
	run timeout 10 "$FVBPF" attach -p 1 -r training_forward --region-file "$f"
	assert_failure 2
	assert_output --partial "registry full"
	assert_output --partial "at most 256 regions"
	# fvbpf regions reads it the same way
	run timeout 10 "$FVBPF" regions --region-file /dev/zero
	assert_failure
	assert_output "fvbpf: error: region file /dev/zero is a device: give a text file"
}

@test "a valid region file: its regions are traced" {
	local f=$BATS_TEST_TMPDIR/regions
	printf '# mine\ncaf\303\251_step\tplain UTF-8 is fine\r\ntraining_forward\n' >"$f"
	start_idle_trainer
	run "$FVBPF" attach -p "$WL_PID" -r training_forward --region-file "$f" -o "$OUT" -n 1
	assert_success
	assert_file_exists "$OUT/trace_rank0_segment0000_training_forward.json"
}
