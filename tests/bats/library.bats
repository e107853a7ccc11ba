#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# The in-process library as built: probe bytes, semaphore, dependencies.

load helpers

LIB=$BUILD/libfvbpf.so

@test "each probe function starts with the 5-byte NOP 0f 1f 44 00 00" {
	local sym bytes
	for sym in fvbpf_probe_region_begin fvbpf_probe_region_end fvbpf_probe_region_begin_ts \
		fvbpf_probe_region_end_ts fvbpf_probe_thread_sync fvbpf_probe_scope_end fvbpf_probe_py_stack \
		fvbpf_probe_correlation fvbpf_probe_gpu_batch fvbpf_probe_agent_status; do
		bytes=$(objdump -d --disassemble="$sym" "$LIB" |
			awk -F'\t' '/^ *[0-9a-f]+:/ {print $2; exit}' | tr -s ' ' | sed 's/ *$//')
		echo "$sym: $bytes"
		[ "$bytes" = "0f 1f 44 00 00" ]
	done
}

@test "the semaphore is a 2-byte exported variable in .probes, file-backed" {
	run readelf -SW "$LIB"
	assert_line --regexp '\.probes +PROGBITS'
	run bash -c "readelf -sW --dyn-syms '$LIB' | awk '\$8 == \"fvbpf_semaphore\" {print \$3, \$4, \$5}' | head -n1"
	assert_output "2 OBJECT GLOBAL"
}

@test "the library needs nothing beyond libc" {
	run bash -c "readelf -d '$LIB' | awk '/NEEDED/ {print \$NF}' | grep -vx '\[libc.so.6\]'"
	assert_output ""
	# every symbol it takes from outside is glibc's (or a weak toolchain
	# hook): CUDA and CUPTI are dlopen()ed, never linked
	run bash -c "nm -D --undefined-only '$LIB' | awk '\$1 != \"w\" && \$2 !~ /@GLIBC_/'"
	assert_output ""
	run bash -c "nm -D --undefined-only '$LIB' | grep -ci 'cu'"
	assert_output "0"
}

@test "the library exports the CUDA injection entry point and the markers' API" {
	run bash -c "nm -D --defined-only '$LIB' | awk '{print \$3}' | sort"
	assert_line "InitializeInjection"
	assert_line "fvbpf_region_begin"
	assert_line "fvbpf_region_end"
	assert_line "fvbpf_attached"
	assert_line "fvbpf_semaphore"
	assert_line "fvbpf_control"
	# test doubles' hooks live only in the test build of the library
	refute_line --partial "fvbpf_agent_test_"
	run bash -c "nm -D --defined-only '$BUILD/test-lib/libfvbpf.so' | awk '{print \$3}'"
	assert_line "fvbpf_agent_test_activate"
}

@test "the header works from C++ and markers are inert when not attached" {
	command -v g++ >/dev/null || skip "g++ missing"
	cat >"$BATS_TEST_TMPDIR/t.cpp" <<'CPP'
#include <fvbpf/fvbpf.h>
#include <cstdio>
int main() {
	fvbpf_region_begin("training_forward");
	fvbpf_region_end("training_forward");
	fvbpf_region_begin(nullptr);
	std::printf("attached=%d\n", fvbpf_attached());
	return 0;
}
CPP
	g++ -Wall -Werror -I"$ROOT/include" "$BATS_TEST_TMPDIR/t.cpp" -o "$BATS_TEST_TMPDIR/t" \
		-L"$BUILD" -lfvbpf -Wl,-rpath,"$BUILD"
	run "$BATS_TEST_TMPDIR/t"
	assert_success
	assert_output "attached=0"
}

@test "fvbpf regions lists the 18 FastVideo regions" {
	run "$FVBPF" regions
	assert_success
	[ "${#lines[@]}" -eq 18 ]
	assert_line --regexp '^training_train_one_step +one optimisation step$'
	assert_line --regexp '^dmd2_critic_loss '
}
