#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Files the target maps are the target's choice: a crafted ELF, a path that
# names a FIFO or another file by the time fvbpf looks, a deleted file.
# fvbpf must read the mapped file itself, never block, never crash.
#
# The workload (tests/workloads/c/hostile_elf.c) maps a file it crafted,
# which defines __cudaGetKernel and 300 stub functions; it calls
# __cudaGetKernel on 8 stubs.  kernel_handles_mapped=8 with no kernel
# without a symbol says that the probe went into the mapped file and that
# the symbolizer read that same file.

load helpers

REGION=training_train_one_step

setup() {
	common_setup
	# The crafted __cudaGetKernel is x86-64 code.
	[ "$(uname -m)" = x86_64 ] || skip "the crafted code is x86-64"
	HOSTILE=$BUILD/tests/hostile_elf
	DIR=$BATS_TEST_TMPDIR/lib
	mkdir -p "$DIR"
}
teardown() {
	common_teardown
}

# The crafted file's path, from the workload's "crafted=" line.
crafted_path() {
	wait_for grep -q '^crafted=' "$WL_LOG"
	sed -n 's/^crafted=\([^ ]*\) .*/\1/p' "$WL_LOG"
}

# Attach for one segment, let the workload call, wait for fvbpf's exit.
attach_and_run() {
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 1 -r "$REGION"
	kill -USR1 "$WL_PID"
	wait_fvbpf
}

# The manifest's "KEY=VALUE" lines for the process (cuda) and the loss.
manifest_values() {
	python3 - "$OUT/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
p = m["processes"][0]
print("handles=%d" % p["cuda"]["kernel_handles_mapped"])
print("probed=%d" % p["cuda"]["functions_probed"])
print("unsymbolised=%d" % m["loss"]["kernels_without_symbol"])
print("tables_capped=%d" % m["loss"]["over_limits"]["symbol_tables_capped"])
PY
}

# The run went through: the mapped file probed and symbolised.
expect_mapped_file_read() {
	[ "$FV_STATUS" -eq 0 ]
	grep -q '^calls=8 handles_ok=1' "$WL_LOG"
	run python3 "$CHECK" "$OUT"
	assert_success
	run manifest_values
	assert_line "probed=1"
	assert_line "handles=8"
	assert_line "unsymbolised=0"
	assert_line "tables_capped=${1:-0}"
}

@test "a crafted ELF whose symbol table size wraps: its own __cudaGetKernel called while attached" {
	start_workload "$WL_LOG" "$HOSTILE" --dir "$DIR"
	crafted_path >/dev/null
	attach_and_run
	# The lying table was skipped, and that is reported.
	expect_mapped_file_read 1
	grep -q "over limits (session): 0 symbol files evicted, 1 symbol tables capped" "$FV_OUT"
}

# The workload in a mount namespace of its own, its file then covered (in
# that namespace only) by a tmpfs holding SWAP under the same name.
start_swapped() { # swap command, run inside the namespace with $F the path
	start_workload "$WL_LOG" unshare -m --propagation private "$HOSTILE" --honest --dir "$DIR"
	F=$(crafted_path)
	[ -n "$F" ]
	nsenter -t "$WL_PID" -m -- sh -c "mount -t tmpfs fvbpf-swap '$DIR' && F='$F' && $1"
	# fvbpf's namespace still sees the mapped file; the target's path
	# names another inode.
	[ "$(stat -c %i "$F")" = "$(awk -v f="$F" '$6 == f { print $5; exit }' "/proc/$WL_PID/maps")" ]
	[ "$(nsenter -t "$WL_PID" -m -- stat -c %i "$F")" != "$(stat -c %i "$F")" ]
}

@test "a mapped file whose path now names a FIFO: read through map_files, nothing blocks" {
	start_swapped 'mkfifo "$F"'
	attach_and_run
	expect_mapped_file_read
}

@test "a mapped file whose path now names another ELF: the mapped one is read" {
	start_swapped "cp '$BUILD/libfvbpf.so' \"\$F\""
	attach_and_run
	expect_mapped_file_read
}

@test "a mapped file deleted since: found and read through map_files" {
	start_workload "$WL_LOG" "$HOSTILE" --honest --dir "$DIR"
	F=$(crafted_path)
	rm -f "$F"
	grep -q "$(basename "$F") (deleted)" "/proc/$WL_PID/maps"
	attach_and_run
	expect_mapped_file_read
	grep -q "CUDA/NCCL functions probed in $F" "$FV_ERR"
}
