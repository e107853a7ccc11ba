/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A target's CPython, for --with-stack: where its _PyRuntime is, which
 * version it is, and the layout of the structs BPF and the resolver read.
 * Layouts come from a small per-version table (offsetof() over that
 * version's own internal headers) and are checked at attach against the
 * live interpreter (its thread list must hold the main thread, each thread
 * state must point back at its interpreter) before anything trusts them.
 */
#ifndef FVBPF_PY_RUNTIME_H
#define FVBPF_PY_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct py_layout {
	unsigned int major, minor;
	/* runtime and threads (BPF) */
	uint16_t rt_interp_head, interp_threads, ts_next, ts_interp, ts_native_tid, ts_cframe;
	uint16_t cf_current, fr_code, fr_previous, fr_instr, fr_owner, owner_cstack;
	uint8_t fr_base;            /* fr_*: from here (BPF reads its window there) */
	int frame_object;           /* 3.10: PyFrameObject frames, f_lasti an int index of code
				     * units, thread states named by pthread_t (ts_native_tid) */
	int debug_offsets;          /* _PyRuntime starts with _Py_DebugOffsets (3.13+): checked */
	/* objects (user space) */
	uint16_t ob_type, var_size;
	uint16_t co_firstlineno, co_filename, co_name, co_qualname, co_linetable, co_code;
	uint16_t co_read;           /* bytes of a code object read: past every field above
				     * but co_code (3.11+: its inline bytecode) */
	uint16_t uni_state, uni_ascii_data, uni_compact_data;
	uint16_t bytes_data;
};

struct py_runtime {
	pid_t pid;
	unsigned long version;      /* Py_Version (PY_VERSION_HEX) */
	uint64_t runtime;           /* &_PyRuntime in the target */
	uint64_t code_type;         /* &PyCode_Type: every code object's ob_type */
	uint64_t unicode_type, bytes_type;
	const struct py_layout *lay;
	char path[256];             /* the file that holds _PyRuntime */
};

/* Find and check the CPython of @pid: 0, -ENOENT (none mapped), -ENOTSUP
 * (a version without a layout here: @r->version says which), -EPROTO (the
 * layout does not match what the process holds), other -errno. */
int py_runtime_find(pid_t pid, struct py_runtime *r);
/* @len bytes at @addr of @pid: 0 or -EFAULT (a short or failed read). */
int py_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* The layout for a version, or NULL. */
const struct py_layout *py_layout_for(unsigned int major, unsigned int minor);

#endif /* FVBPF_PY_RUNTIME_H */
