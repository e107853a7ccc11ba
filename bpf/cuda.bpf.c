// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * CUDA and NCCL call probes: session uprobes (kernel 6.13+) on every probed
 * function, entry and return, inside segments.
 */
#include "fvbpf_common.bpf.h"

/* api_id -> what to capture beyond the registers. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FVBPF_MAX_APIS);
	__type(key, __u32);
	__type(value, struct fvbpf_api_cfg);
} api_cfg SEC(".maps");

/* slot -> its TensorImpl layout, for a collective's tensors (gloo). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FVBPF_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct fvbpf_coll_layout);
} coll_layout SEC(".maps");

/*
 * A gloo work's input tensors, read while the caller's temporaries live:
 * the optional<vector<at::Tensor>> (begin, end, capacity, engaged), each
 * Tensor a TensorImpl pointer, read only when its vtable is a plain
 * TensorImpl's.  Everything is the target's: counts are bounded, the
 * loader checks the rest.
 */
static __always_inline void coll_tensors(struct fvbpf_coll_tensors *out, __u32 slot, __u64 arg)
{
	struct fvbpf_coll_layout *lay = bpf_map_lookup_elem(&coll_layout, &slot);
	struct { __u64 begin, end, cap; __u8 engaged; } v;
	__u64 impl, vptr, n;
	__u16 dtype;
	int i;

	__builtin_memset(out, 0, sizeof(*out));
	if (!lay || !lay->ok || !arg || bpf_probe_read_user(&v, sizeof(v), (const void *)arg) ||
	    !v.engaged || v.end <= v.begin)
		return;
	n = (v.end - v.begin) / 8;
	out->count = n > 0xffff ? 0xffff : (__u16)n;
	for (i = 0; i < FVBPF_COLL_TENSORS; i++) {
		if (i >= n)
			break;
		if (bpf_probe_read_user(&impl, 8, (const void *)(v.begin + 8 * i)) || !impl ||
		    bpf_probe_read_user(&vptr, 8, (const void *)impl) || vptr != lay->vptr_dense ||
		    bpf_probe_read_user(&out->numel[i], 8, (const void *)(impl + lay->numel_at)) ||
		    bpf_probe_read_user(&dtype, 2, (const void *)(impl + lay->dtype_at)))
			break;
		out->dtype[i] = dtype > 0xff ? 0xff : (__u8)dtype;
		out->read++;
	}
}

/*
 * The session cookie carries what the return needs from the entry: the api
 * id in the top byte (FVBPF_MAX_APIS <= 256) and the out-pointer (cudaMalloc's
 * void **, a user address below 2^56) under it, so the return makes no
 * bpf_get_attach_cookie() call.
 */
#define API_COOKIE_SHIFT 56
#define API_COOKIE_PTR ((1ull << API_COOKIE_SHIFT) - 1)
_Static_assert(FVBPF_MAX_APIS <= 256, "api id fits the session cookie's top byte");

static __always_inline int api_return(struct pt_regs *ctx, __u64 pid_tgid)
{
	__u64 *cookie = bpf_session_cookie();
	struct fvbpf_proc_state *ps;
	struct fvbpf_api_exit *ev;
	__u64 out = 0, c;

	ps = proc_by_tgid(ctx, pid_tgid >> 32, FVBPF_COOKIE_SLOT_SHIFT);
	if (!ps || !cookie)
		return 0;
	c = *cookie;
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 0;
	/* The entry left the out-pointer in the cookie. */
	if (c & API_COOKIE_PTR)
		bpf_probe_read_user(&out, sizeof(out), (const void *)(c & API_COOKIE_PTR));
	fill_hdr(&ev->hdr, FVBPF_EV_API_EXIT, sizeof(*ev), pid_tgid);
	ev->api_id = (__u32)(c >> API_COOKIE_SHIFT);
	ev->ret = (__s32)PT_REGS_RC(ctx);
	ev->out = out;
	bpf_ringbuf_submit(ev, SUBMIT_FLAGS);
	return 0;
}

/*
 * Every probed CUDA/NCCL function, entry and return.  Outside a segment the
 * entry returns 1, which tells the kernel not to hijack the return: a call
 * then costs no more than a plain uprobe.
 */
SEC("uprobe")
int api_call(struct pt_regs *ctx)
{
	__u64 pid_tgid = current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, api;
	struct fvbpf_proc_state *ps;
	struct fvbpf_api_enter *ev;
	struct fvbpf_api_cfg *cfg;
	__u64 *cookie, attach_cookie;
	__u64 ptr, sp, stack[4], stack_ts = 0;

	if (bpf_session_is_return())
		return api_return(ctx, pid_tgid);
	attach_cookie = bpf_get_attach_cookie(ctx);
	ps = proc_of(attach_cookie >> FVBPF_COOKIE_SLOT_SHIFT, tgid);
	if (!ps)
		return 1;
	if (!(ps->flags & FVBPF_PROC_ARMED) ||
	    (ps->depth <= 0 && !(attach_cookie & FVBPF_COOKIE_ALWAYS)))
		return 1;

	api = (__u32)attach_cookie;
	cfg = bpf_map_lookup_elem(&api_cfg, &api);
	if (!cfg)
		return 1;
	if (ps->depth > 0) /* --with-stack: a launch's stack goes just before it */
		stack_ts = py_stack_api((attach_cookie >> FVBPF_COOKIE_SLOT_SHIFT) & 0xffff, api,
					pid_tgid);
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 1; /* no entry record: skip the return too, keeping pairs whole */
	fill_hdr(&ev->hdr, FVBPF_EV_API_ENTER, sizeof(*ev), pid_tgid);
	if (stack_ts)
		ev->hdr.ts_ns = stack_ts;
	ev->api_id = api;
	ev->args[0] = PT_REGS_PARM1(ctx);
	ev->args[1] = PT_REGS_PARM2(ctx);
	ev->args[2] = PT_REGS_PARM3(ctx);
	ev->args[3] = PT_REGS_PARM4(ctx);
	ev->args[4] = PT_REGS_PARM5(ctx);
	ev->args[5] = ctx->r9;
	/* Arguments 7 on sit above the return address: read only as many as
	 * the call takes, into the stack (a user copy straight into ring
	 * memory costs an extra kernel check). */
	sp = PT_REGS_SP(ctx);
	barrier_var(sp); /* one ctx load, not one per branch */
	__builtin_memset(stack, 0, sizeof(stack));
	if (cfg->stack_args > 2)
		bpf_probe_read_user(stack, 4 * sizeof(__u64), (const void *)(sp + 8));
	else if (cfg->stack_args)
		bpf_probe_read_user(stack, 2 * sizeof(__u64), (const void *)(sp + 8));
	ev->args[6] = stack[0];
	ev->args[7] = stack[1];
	ev->args[8] = stack[2];
	ev->args[9] = stack[3];
	ev->deref_len = 0;
	if (cfg->tensors_arg < FVBPF_API_ARGS) {
		coll_tensors((struct fvbpf_coll_tensors *)ev->deref,
			     (attach_cookie >> FVBPF_COOKIE_SLOT_SHIFT) & 0xffff,
			     ev->args[cfg->tensors_arg & 15]);
		ev->deref_len = FVBPF_API_DEREF;
	} else if (cfg->deref_len && cfg->deref_arg < FVBPF_API_ARGS) {
		ptr = ev->args[cfg->deref_arg & 15];
		if (ptr && !bpf_probe_read_user(ev->deref, FVBPF_API_DEREF, (const void *)ptr))
			ev->deref_len = cfg->deref_len;
	}
	cookie = bpf_session_cookie();
	if (cookie)
		*cookie = (__u64)api << API_COOKIE_SHIFT |
			  (cfg->out_arg < FVBPF_API_ARGS ? ev->args[cfg->out_arg & 15] & API_COOKIE_PTR : 0);
	bpf_ringbuf_submit(ev, SUBMIT_FLAGS);
	return 0;
}
