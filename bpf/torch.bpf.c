// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * PyTorch probes: operators and autograd nodes (torch_call), evaluate_function
 * named by the node's vtable (torch_eval), and RecordFunction scopes
 * (scope_enter, scope_end), some of which delimit segments.
 */
#include "fvbpf_common.bpf.h"
#include "torch_shapes.bpf.c"

/* --record-shapes: set by the loader before load. */
const volatile bool record_shapes = false;

/* Scope name hash -> FVBPF_GATE_*: scopes that delimit segments.  The
 * loader fills it as it learns matching names. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, __u32);
} torch_gates SEC(".maps");

struct live_scope_key {
	__u32 tgid;
	__u32 pad;
	__u64 rf;               /* the at::RecordFunction's address */
};

struct live_scope {
	__u32 flags;            /* FVBPF_SCOPE_* of its begin */
	__u32 tid;
};

/* Scopes begun and not yet ended.  The address is reused at once for the
 * next scope, so an entry goes at the first end() (the second, from the
 * destructor, must not count). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct live_scope_key);
	__type(value, struct live_scope);
} live_scopes SEC(".maps");

/*
 * Every probed operator and autograd node, entry and return.  Outside a
 * segment the entry returns 1: no return probe, a bare uprobe's cost.
 */
SEC("uprobe")
int torch_call(struct pt_regs *ctx)
{
	__u64 pid_tgid = current_pid_tgid(), attach_cookie;
	struct fvbpf_proc_state *ps;
	struct fvbpf_torch_event *ev;
	bool ret = bpf_session_is_return();
	__u64 drops, stack_ts = 0;
	int stack = 0;

	attach_cookie = bpf_get_attach_cookie(ctx);
	ps = proc_of(attach_cookie >> FVBPF_COOKIE_SLOT_SHIFT, pid_tgid >> 32);
	if (!ps)
		return 1;
	if (!ret && (!(ps->flags & FVBPF_PROC_ARMED) || ps->depth <= 0))
		return 1;
	drops = ps->drops; /* before the reservation: only drops before this record */
	if (!ret) { /* --with-stack: its stack goes just before it, same ts */
		stack_ts = bpf_ktime_get_ns();
		stack = py_stack_emit((attach_cookie >> FVBPF_COOKIE_SLOT_SHIFT) & 0xffff, pid_tgid,
				      stack_ts, PT_REGS_SP(ctx));
	} else {
		py_stack_return((attach_cookie >> FVBPF_COOKIE_SLOT_SHIFT) & 0xffff, pid_tgid,
				PT_REGS_SP(ctx));
	}
	if (record_shapes && !ret) {
		int r = torch_shapes_entry(ctx, ps, (__u32)attach_cookie |
					   (stack == PY_SAME ? FVBPF_TORCH_SAME_STACK : 0),
					   pid_tgid, stack_ts);

		if (r >= 0)
			return r; /* written (0), or dropped: skip the return too (1) */
	}
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 1; /* no entry record: skip the return too */
	fill_hdr(&ev->hdr, ret ? FVBPF_EV_TORCH_EXIT : FVBPF_EV_TORCH_ENTER, sizeof(*ev), pid_tgid);
	if (!ret)
		ev->hdr.ts_ns = stack_ts;
	ev->id = (__u32)attach_cookie | (stack == PY_SAME ? FVBPF_TORCH_SAME_STACK : 0);
	ev->drops = (__u32)drops;
	bpf_ringbuf_submit(ev, SUBMIT_FLAGS);
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FVBPF_VTABLES_MAX);
	__type(key, struct fvbpf_vtable_key);
	__type(value, __u32);
} torch_vtables SEC(".maps");

/*
 * Engine::evaluate_function, entry and return, inside segments: the node's
 * vtable names it; the entry keeps the id for the return.
 */
SEC("uprobe")
int torch_eval(struct pt_regs *ctx)
{
	__u64 pid_tgid = current_pid_tgid(), attach_cookie, *sc, drops;
	struct fvbpf_vtable_key key = {};
	struct fvbpf_proc_state *ps;
	struct fvbpf_torch_event *ev;
	bool ret = bpf_session_is_return();
	__u32 *id;

	attach_cookie = bpf_get_attach_cookie(ctx);
	ps = proc_of(attach_cookie >> FVBPF_COOKIE_SLOT_SHIFT, pid_tgid >> 32);
	sc = bpf_session_cookie();
	if (!ps || !sc)
		return 1;
	if (!ret) {
		if (!(ps->flags & FVBPF_PROC_ARMED) || ps->depth <= 0)
			return 1;
		key.tgid = pid_tgid >> 32;
		if (bpf_probe_read_user(&key.vptr, sizeof(key.vptr), (const void *)PT_REGS_PARM3(ctx)))
			return 1;
		id = bpf_map_lookup_elem(&torch_vtables, &key);
		if (!id) {
			__sync_fetch_and_add(&counters.eval_unknown, 1);
			return 1;
		}
		*sc = *id;
	}
	drops = ps->drops;
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 1; /* no entry record: skip the return too */
	fill_hdr(&ev->hdr, ret ? FVBPF_EV_TORCH_EXIT : FVBPF_EV_TORCH_ENTER, sizeof(*ev), pid_tgid);
	ev->id = (__u32)*sc;
	ev->drops = (__u32)drops;
	bpf_ringbuf_submit(ev, SUBMIT_FLAGS);
	return 0;
}

/*
 * A --step-by scope whose begin record found the ring full: watched for its
 * end all the same.  A step runs from one step scope's end to the next, so
 * its end must be numbered even when no record of the scope got through, or
 * the steps it ends merge into one segment that nothing marks (the loader
 * sees the gap in the numbers, or BPF's count at the end).  @strp: the
 * name's std::string.
 */
static __always_inline void step_without_record(struct pt_regs *ctx, __u64 strp, __u64 pid_tgid)
{
	struct live_scope_key key = { .tgid = pid_tgid >> 32 };
	struct live_scope val = { .flags = FVBPF_SCOPE_STEP, .tid = (__u32)pid_tgid };
	char name[FVBPF_SCOPE_NAME];
	__u64 str[2], handle = 0, hash;
	__u32 len, *gate;

	if (bpf_probe_read_user(str, sizeof(str), (const void *)strp))
		return;
	len = str[1] > FVBPF_SCOPE_NAME ? FVBPF_SCOPE_NAME : (__u32)str[1];
	if (!len || bpf_probe_read_user(name, len, (const void *)str[0]))
		return;
	hash = fvbpf_scope_hash(name, len);
	gate = bpf_map_lookup_elem(&torch_gates, &hash);
	if (!gate || *gate != FVBPF_GATE_STEP)
		return;
	bpf_probe_read_user(&handle, sizeof(handle), (const void *)PT_REGS_RC(ctx));
	if (!handle)
		return;
	key.rf = handle + 0x10;
	bpf_map_update_elem(&live_scopes, &key, &val, BPF_ANY);
}

/*
 * record_function_enter_new(const std::string &name, ...): sret in rdi, the
 * name in rsi.  The entry keeps &name; the return reads it (the caller
 * still holds the string) and the handle the sret slot got.
 */
SEC("uprobe")
int scope_enter(struct pt_regs *ctx)
{
	__u64 pid_tgid = current_pid_tgid(), attach_cookie, *cookie, str[2], handle = 0;
	struct live_scope_key key = {};
	struct live_scope val = {};
	struct fvbpf_proc_state *ps;
	struct fvbpf_scope_event *ev;
	__u32 *gate, len;
	__u64 hash, drops;
	__s32 depth;

	attach_cookie = bpf_get_attach_cookie(ctx);
	ps = proc_of(attach_cookie >> FVBPF_COOKIE_SLOT_SHIFT, pid_tgid >> 32);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED))
		return 1;
	cookie = bpf_session_cookie();
	if (!cookie)
		return 1;
	if (!bpf_session_is_return()) {
		*cookie = PT_REGS_PARM2(ctx);
		return 0;
	}
	drops = ps->drops;
	ev = reserve(ps, sizeof(*ev));
	if (!ev) {
		/* a region scope is not gated either: BPF and the loader agree */
		step_without_record(ctx, *cookie, pid_tgid);
		return 0;
	}
	fill_hdr(&ev->hdr, FVBPF_EV_SCOPE_BEGIN, sizeof(*ev), pid_tgid);
	ev->flags = 0;
	ev->name_len = 0;
	ev->drops = drops;
	ev->depth = 0;
	ev->outer = 0;
	/* libstdc++ string: data pointer, then length */
	if (bpf_probe_read_user(str, sizeof(str), (const void *)*cookie))
		str[1] = 0;
	len = str[1] > FVBPF_SCOPE_NAME ? FVBPF_SCOPE_NAME : (__u32)str[1];
	if (str[1] > FVBPF_SCOPE_NAME)
		ev->flags |= FVBPF_SCOPE_CUT;
	if (len && !bpf_probe_read_user(ev->name, len, (const void *)str[0]))
		ev->name_len = len;
	bpf_probe_read_user(&handle, sizeof(handle), (const void *)PT_REGS_RC(ctx));
	/* PythonRecordFunction: a refcounted holder, its RecordFunction at +0x10 */
	ev->handle = handle ? handle + 0x10 : 0;
	hash = fvbpf_scope_hash(ev->name, ev->name_len);
	gate = bpf_map_lookup_elem(&torch_gates, &hash);
	if (gate && *gate == FVBPF_GATE_REGION)
		ev->flags |= FVBPF_SCOPE_GATED;
	else if (gate && *gate == FVBPF_GATE_STEP)
		ev->flags |= FVBPF_SCOPE_STEP;
	key.tgid = pid_tgid >> 32;
	key.rf = ev->handle;
	val.flags = ev->flags;
	val.tid = (__u32)pid_tgid;
	if (!handle || bpf_map_update_elem(&live_scopes, &key, &val, BPF_ANY)) {
		/* its end will not be seen: no gate, and the loader knows */
		ev->flags = (ev->flags & ~FVBPF_SCOPE_GATED) | FVBPF_SCOPE_UNTRACKED;
		__sync_fetch_and_add(&counters.scope_untracked, 1);
	} else if (ev->flags & FVBPF_SCOPE_GATED) {
		/* as a region begin: depth and invocation for the loss logic */
		depth = __sync_fetch_and_add(&ps->depth, 1) + 1;
		if (depth == 1)
			__sync_fetch_and_add(&ps->outer, 1);
		ev->depth = depth;
		ev->outer = ps->outer;
	}
	bpf_ringbuf_submit(ev, SUBMIT_FLAGS);
	return 0;
}

/* at::RecordFunction::end(): this in rdi.  Only ends of watched scopes. */
SEC("uprobe")
int BPF_KPROBE(scope_end, __u64 rf)
{
	__u64 pid_tgid = current_pid_tgid();
	struct live_scope_key key = { .tgid = pid_tgid >> 32, .rf = rf };
	struct fvbpf_proc_state *ps;
	struct fvbpf_scope_event *ev;
	struct live_scope *ls;
	__u32 flags, old, outer = 0;
	__s32 depth = 0;
	__u64 drops;

	ls = bpf_map_lookup_elem(&live_scopes, &key);
	if (!ls)
		return 0;
	flags = ls->flags;
	bpf_map_delete_elem(&live_scopes, &key);
	ps = proc_of(bpf_get_attach_cookie(ctx) >> FVBPF_COOKIE_SLOT_SHIFT, key.tgid);
	if (!ps)
		return 0;
	if (flags & FVBPF_SCOPE_GATED) {
		depth = __sync_fetch_and_add(&ps->depth, -1) - 1;
		outer = ps->outer;
	}
	if (flags & FVBPF_SCOPE_STEP) {
		old = __sync_fetch_and_or(&ps->flags, FVBPF_PROC_STEPPING);
		if (!(old & FVBPF_PROC_STEPPING))
			__sync_fetch_and_add(&ps->depth, 1);
		/* numbered: a lost step end shows as a gap */
		outer = __sync_fetch_and_add(&ps->steps, 1) + 1;
	}
	drops = ps->drops;
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 0;
	fill_hdr(&ev->hdr, FVBPF_EV_SCOPE_END, sizeof(*ev), pid_tgid);
	ev->handle = rf;
	ev->name_len = 0;
	ev->flags = flags;
	ev->depth = depth;
	ev->outer = outer;
	ev->drops = drops;
	bpf_ringbuf_submit(ev, SUBMIT_FLAGS);
	return 0;
}
