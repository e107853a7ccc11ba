// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <string.h>

#include "dump/py_nscheck.h"

#define GLIBC_PTHREAD_TID 0x2d0 /* x86-64 glibc's struct pthread (py_runtime.c) */

static bool rd64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return !py_mem_read(pid, addr, v, sizeof(*v));
}

static bool is_main(const struct py_runtime *r, uint64_t name, pid_t ns_pid)
{
	uint64_t self;
	uint32_t tid;

	if (!r->lay->frame_object)
		return name == (uint64_t)ns_pid;
	return rd64(r->pid, name, &self) && self == name &&
	       !py_mem_read(r->pid, name + GLIBC_PTHREAD_TID, &tid, sizeof(tid)) &&
	       tid == (uint32_t)ns_pid;
}

bool py_nscheck(const struct py_runtime *r, pid_t ns_pid)
{
	const struct py_layout *L = r->lay;
	uint64_t interp, ts, back, name, d[2];
	int i;

	if (!L || !r->runtime || ns_pid <= 0 || ns_pid == r->pid)
		return false;
	/* 3.13: _PyRuntime starts with _Py_DebugOffsets, its cookie and version */
	if (L->debug_offsets && (py_mem_read(r->pid, r->runtime, d, sizeof(d)) ||
				 memcmp(d, "xdebugpy", 8) || d[1] != r->version))
		return false;
	if (!rd64(r->pid, r->runtime + L->rt_interp_head, &interp) || !interp ||
	    !rd64(r->pid, interp + L->interp_threads, &ts))
		return false;
	for (i = 0; i < 64 && ts; i++) {
		if (!rd64(r->pid, ts + L->ts_interp, &back) || back != interp ||
		    !rd64(r->pid, ts + L->ts_native_tid, &name))
			return false;
		if (is_main(r, name, ns_pid))
			return true;
		if (!rd64(r->pid, ts + L->ts_next, &ts))
			return false;
	}
	return false;
}
