// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * --profile-memory: allocator events of libc10.so inside segments
 * (include/fvbpf_mem.h).  A session program that always returns 1 at the
 * entry: no return probe, one trap per allocator call, and outside a
 * segment nothing but the process check.
 */
#include "fvbpf_mem.h"

SEC("uprobe")
int mem_call(struct pt_regs *ctx)
{
	__u64 pid_tgid = current_pid_tgid(), attach_cookie, drops, dev;
	struct fvbpf_proc_state *ps;
	struct fvbpf_mem_event *ev;
	__u8 kind;

	if (bpf_session_is_return())
		return 1;
	attach_cookie = bpf_get_attach_cookie(ctx);
	ps = proc_of(attach_cookie >> FVBPF_COOKIE_SLOT_SHIFT, pid_tgid >> 32);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED) || ps->depth <= 0)
		return 1;
	kind = (__u8)attach_cookie;
	dev = PT_REGS_PARM5(ctx);
	if (kind == FVBPF_MEM_REPORT && (__u8)dev == FVBPF_DEV_CPU)
		return 1; /* seen by New/Delete */
	drops = ps->drops;
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 1;
	fill_hdr(&ev->hdr, FVBPF_EV_MEM, sizeof(*ev), pid_tgid);
	ev->kind = kind;
	ev->pad = 0;
	ev->drops = (__u32)drops;
	ev->total_allocated = 0;
	ev->total_reserved = 0;
	ev->dev_type = FVBPF_DEV_CPU;
	ev->dev_index = -1;
	ev->bytes = 0;
	if (kind == FVBPF_MEM_REPORT) {
		ev->addr = PT_REGS_PARM1(ctx);
		ev->bytes = (__s64)PT_REGS_PARM2(ctx);
		ev->total_allocated = PT_REGS_PARM3(ctx);
		ev->total_reserved = PT_REGS_PARM4(ctx);
		ev->dev_type = (__u8)dev;
		ev->dev_index = (__s8)(dev >> 8);
	} else {
		/* member functions: this in rdi */
		ev->addr = PT_REGS_PARM2(ctx);
		if (kind == FVBPF_MEM_CPU_NEW)
			ev->bytes = (__s64)PT_REGS_PARM3(ctx);
	}
	bpf_ringbuf_submit(ev, SUBMIT_FLAGS);
	return 1;
}
