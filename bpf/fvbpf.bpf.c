// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Region marker probes.  Attached per traced process to
 * fvbpf_probe_region_begin/end in whichever ELF of the target exports them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "fvbpf_events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* fvbpf_region_hash(name) -> registry index, enabled regions only. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FVBPF_REGION_SLOTS);
	__type(key, __u32);
	__type(value, struct fvbpf_region_slot);
} enabled_regions SEC(".maps");

/* Slot (from the uprobe cookie) -> state of a traced process. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FVBPF_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct fvbpf_proc_state);
} procs SEC(".maps");

/* tgid & (FVBPF_TGID_SLOTS - 1) -> slot, written by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FVBPF_TGID_SLOTS);
	__type(key, __u32);
	__type(value, struct fvbpf_tgid_slot);
} tgid_slots SEC(".maps");

/* api_id -> what to capture beyond the registers. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FVBPF_MAX_APIS);
	__type(key, __u32);
	__type(value, struct fvbpf_api_cfg);
} api_cfg SEC(".maps");

/* Session uprobes (kernel 6.13+): one program sees entry and return. */
extern bool bpf_session_is_return(void) __ksym;
extern __u64 *bpf_session_cookie(void) __ksym;

/* Loss counters, read by the loader at exit. */
__u64 ringbuf_drops = 0;
__u64 unbalanced_ends = 0;

/*
 * A wakeup per record costs several times the probe itself: records are
 * submitted without one and the reader drains the ring on a short timer.
 */
#define SUBMIT_FLAGS BPF_RB_NO_WAKEUP

/* The traced process this probe hit belongs to, or NULL. */
static __always_inline struct fvbpf_proc_state *proc_of(__u64 cookie, __u32 tgid)
{
	__u32 slot = (__u32)(cookie & 0xffff);
	struct fvbpf_proc_state *ps = bpf_map_lookup_elem(&procs, &slot);

	return ps && ps->tgid == tgid ? ps : NULL;
}

/*
 * The same for the marker probes, whose cookie is the slot: by the tgid
 * index first (an inlined array lookup), by the cookie (a helper call) only
 * when another process holds the index.
 */
static __always_inline struct fvbpf_proc_state *proc_by_tgid(struct pt_regs *ctx, __u32 tgid,
							     int slot_shift)
{
	__u32 k = tgid & (FVBPF_TGID_SLOTS - 1);
	struct fvbpf_tgid_slot *ts = bpf_map_lookup_elem(&tgid_slots, &k);

	if (ts && ts->tgid == tgid)
		return proc_of(ts->slot, tgid);
	return proc_of(bpf_get_attach_cookie(ctx) >> slot_shift, tgid);
}

static __always_inline struct fvbpf_proc_state *marker_proc(struct pt_regs *ctx, __u32 tgid)
{
	return proc_by_tgid(ctx, tgid, 0);
}

static __always_inline bool region_enabled(__u64 hash, __u32 *region)
{
	__u32 k = fvbpf_region_slot1(hash);
	struct fvbpf_region_slot *rs = bpf_map_lookup_elem(&enabled_regions, &k);

	if (rs && rs->hash == hash) {
		*region = rs->region_id;
		return true;
	}
	k = fvbpf_region_slot2(hash);
	rs = bpf_map_lookup_elem(&enabled_regions, &k);
	if (rs && rs->hash == hash) {
		*region = rs->region_id;
		return true;
	}
	return false;
}

static __always_inline void fill_hdr(struct fvbpf_event_hdr *h, __u16 type, __u32 size,
				     __u64 pid_tgid)
{
	h->type = type;
	h->version = FVBPF_EVENT_VERSION;
	h->size = size;
	h->tgid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	h->ts_ns = bpf_ktime_get_ns();
}

/* Reserve a record, or count the drop against the process and in total. */
static __always_inline void *reserve(struct fvbpf_proc_state *ps, __u32 size)
{
	void *ev = bpf_ringbuf_reserve(&events, size, 0);

	if (!ev) {
		__sync_fetch_and_add(&ps->drops, 1);
		__sync_fetch_and_add(&ringbuf_drops, 1);
	}
	return ev;
}

static __always_inline int on_region(struct pt_regs *ctx, __u64 hash, __u16 type)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, region;
	struct fvbpf_proc_state *ps;
	struct fvbpf_region_event *ev;
	__s32 depth;
	__u32 outer;
	__u64 drops;

	ps = marker_proc(ctx, tgid);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED))
		return 0;
	if (!hash || !region_enabled(hash, &region))
		return 0;

	if (type == FVBPF_EV_REGION_BEGIN) {
		depth = __sync_fetch_and_add(&ps->depth, 1) + 1;
		if (depth == 1)
			__sync_fetch_and_add(&ps->outer, 1);
	} else {
		depth = __sync_fetch_and_add(&ps->depth, -1) - 1;
		if (depth < 0) {
			/* An end without its begin (begun before we attached). */
			__sync_fetch_and_add(&ps->depth, 1);
			__sync_fetch_and_add(&ps->unbalanced, 1);
			__sync_fetch_and_add(&unbalanced_ends, 1);
			depth = 0;
		}
	}

	/* Read with the depth, before the reservation: the count then holds
	 * only drops that came before this record. */
	outer = ps->outer;
	drops = ps->drops;
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 0;
	fill_hdr(&ev->hdr, type, sizeof(*ev), pid_tgid);
	ev->region_id = region;
	ev->depth = depth;
	ev->drops = drops;
	ev->outer = outer;
	ev->pad = 0;
	bpf_ringbuf_submit(ev, SUBMIT_FLAGS);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(region_begin, const char *name, __u64 hash)
{
	return on_region(ctx, hash, FVBPF_EV_REGION_BEGIN);
}

SEC("uprobe")
int BPF_KPROBE(region_end, const char *name, __u64 hash)
{
	return on_region(ctx, hash, FVBPF_EV_REGION_END);
}

/*
 * A thread's first marker after attach: copy out the names of the regions
 * it already had open, outermost first.  Rare (once per thread per attach),
 * so it may be slow; the loader decides which of them are enabled.
 */
SEC("uprobe")
int BPF_KPROBE(thread_sync, const struct fvbpf_thread_stack *st, __u32 depth,
	       const __u64 *hashes)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, i, n;
	struct fvbpf_proc_state *ps;
	struct fvbpf_sync_event *ev;
	__u64 name;
	__u32 region;

	ps = marker_proc(ctx, tgid);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED))
		return 0;
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 0;
	n = depth < FVBPF_SYNC_NAMES ? depth : FVBPF_SYNC_NAMES;
	/* Enabled regions already open count towards "inside a segment". */
	for (i = 0; i < FVBPF_SYNC_NAMES; i++) {
		__u64 h = 0;

		if (i >= n)
			break;
		bpf_probe_read_user(&h, sizeof(h), &hashes[i]);
		if (h && region_enabled(h, &region))
			__sync_fetch_and_add(&ps->depth, 1);
	}
	fill_hdr(&ev->hdr, FVBPF_EV_THREAD_SYNC, sizeof(*ev), pid_tgid);
	ev->depth = depth;
	ev->nnames = n;
	for (i = 0; i < FVBPF_SYNC_NAMES; i++) {
		ev->names[i][0] = '\0';
		if (i >= n)
			continue;
		name = 0;
		bpf_probe_read_user(&name, sizeof(name), &st->names[i]);
		if (name)
			bpf_probe_read_user_str(ev->names[i], FVBPF_NAME_LEN, (const void *)name);
	}
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	return 0;
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
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, api;
	struct fvbpf_proc_state *ps;
	struct fvbpf_api_enter *ev;
	struct fvbpf_api_cfg *cfg;
	__u64 *cookie, attach_cookie;
	__u64 ptr, sp, stack[4];

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
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 1; /* no entry record: skip the return too, keeping pairs whole */
	fill_hdr(&ev->hdr, FVBPF_EV_API_ENTER, sizeof(*ev), pid_tgid);
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
	if (cfg->deref_len && cfg->deref_arg < FVBPF_API_ARGS) {
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

/*
 * The CUPTI agent's API-entry callback: which call a correlation id belongs
 * to.  Only inside segments, like the calls themselves.
 */
SEC("uprobe")
int BPF_KPROBE(correlation, __u32 corr, __u32 cbid, __u32 domain)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct fvbpf_proc_state *ps;
	struct fvbpf_corr_event *ev;

	ps = marker_proc(ctx, pid_tgid >> 32);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED) || ps->depth <= 0)
		return 0;
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 0;
	fill_hdr(&ev->hdr, FVBPF_EV_CORRELATION, sizeof(*ev), pid_tgid);
	ev->correlation = corr;
	ev->cbid = cbid;
	ev->domain = domain;
	ev->pad = 0;
	bpf_ringbuf_submit(ev, SUBMIT_FLAGS);
	return 0;
}

/*
 * A batch of the agent's GPU records, copied in whole chunks: the agent
 * passes its own FVBPF_GPU_BATCH-byte buffer, so reading a full chunk past
 * `len` stays inside it, and the verifier sees constant sizes.  GPU work
 * finishes after its segment closed, so this is not gated on segments.
 */
SEC("uprobe")
int BPF_KPROBE(gpu_batch, const __u8 *buf, __u32 len)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct fvbpf_proc_state *ps;
	struct fvbpf_gpu_chunk *ev;
	__u32 i, off;

	ps = marker_proc(ctx, pid_tgid >> 32);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED))
		return 0;
	if (len > FVBPF_GPU_BATCH)
		len = FVBPF_GPU_BATCH;
	for (i = 0; i < FVBPF_GPU_BATCH / FVBPF_GPU_CHUNK; i++) {
		off = i * FVBPF_GPU_CHUNK;
		if (off >= len)
			break;
		ev = reserve(ps, sizeof(*ev));
		if (!ev)
			return 0;
		fill_hdr(&ev->hdr, FVBPF_EV_GPU_CHUNK, sizeof(*ev), pid_tgid);
		ev->len = len - off > FVBPF_GPU_CHUNK ? FVBPF_GPU_CHUNK : len - off;
		ev->index = (__u16)i;
		ev->last = off + FVBPF_GPU_CHUNK >= len;
		if (bpf_probe_read_user(ev->data, FVBPF_GPU_CHUNK, buf + off))
			ev->len = 0;
		bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	}
	return 0;
}

/* The agent says what it could or could not do. */
SEC("uprobe")
int BPF_KPROBE(agent_status, __u32 code, __s32 detail, __s64 value, const char *msg)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct fvbpf_agent_status_event *ev;
	struct fvbpf_proc_state *ps;

	ps = marker_proc(ctx, pid_tgid >> 32);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED))
		return 0;
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 0;
	fill_hdr(&ev->hdr, FVBPF_EV_AGENT_STATUS, sizeof(*ev), pid_tgid);
	ev->code = code;
	ev->detail = detail;
	ev->value = value;
	ev->msg[0] = '\0';
	if (msg)
		bpf_probe_read_user_str(ev->msg, sizeof(ev->msg), msg);
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	return 0;
}

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

__u64 scope_untracked = 0;

/*
 * Every probed operator and autograd node, entry and return.  Outside a
 * segment the entry returns 1: no return probe, a bare uprobe's cost.
 */
SEC("uprobe")
int torch_call(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), attach_cookie;
	struct fvbpf_proc_state *ps;
	struct fvbpf_torch_event *ev;
	bool ret = bpf_session_is_return();
	__u64 drops;

	attach_cookie = bpf_get_attach_cookie(ctx);
	ps = proc_of(attach_cookie >> FVBPF_COOKIE_SLOT_SHIFT, pid_tgid >> 32);
	if (!ps)
		return 1;
	if (!ret && (!(ps->flags & FVBPF_PROC_ARMED) || ps->depth <= 0))
		return 1;
	drops = ps->drops; /* before the reservation: only drops before this record */
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 1; /* no entry record: skip the return too */
	fill_hdr(&ev->hdr, ret ? FVBPF_EV_TORCH_EXIT : FVBPF_EV_TORCH_ENTER, sizeof(*ev), pid_tgid);
	ev->id = (__u32)attach_cookie;
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

__u64 eval_unknown = 0;  /* evaluate_function on a node class not in the map */

/*
 * Engine::evaluate_function, entry and return, inside segments: the node's
 * vtable names it; the entry keeps the id for the return.
 */
SEC("uprobe")
int torch_eval(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), attach_cookie, *sc, drops;
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
			__sync_fetch_and_add(&eval_unknown, 1);
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
 * record_function_enter_new(const std::string &name, ...): sret in rdi, the
 * name in rsi.  The entry keeps &name; the return reads it (the caller
 * still holds the string) and the handle the sret slot got.
 */
SEC("uprobe")
int scope_enter(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), attach_cookie, *cookie, str[2], handle = 0;
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
	if (!ev)
		return 0; /* not gated either: BPF and the loader agree */
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
		__sync_fetch_and_add(&scope_untracked, 1);
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
	__u64 pid_tgid = bpf_get_current_pid_tgid();
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

/*
 * Process trees (--children, --match): the processes followed, kept current
 * by the fork/exec/exit tracepoints so that a process forked while the
 * loader looks elsewhere is never missed; the loader seeds it with the
 * processes alive at attach.  Value: unused.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FVBPF_TREE_MAX);
	__type(key, __u32);
	__type(value, __u32);
} tree SEC(".maps");

/* --match: every exec is reported, the loader matches command lines. */
const volatile bool report_all_execs = false;
__u64 tree_full = 0;      /* children not followed: the tree map was full */
__u64 tree_drops = 0;     /* process records lost to a full ring */

static __always_inline void proc_record(__u32 kind, __u32 pid, __u32 ppid, __u64 start)
{
	struct fvbpf_proc_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);

	if (!ev) {
		__sync_fetch_and_add(&tree_drops, 1);
		return;
	}
	fill_hdr(&ev->hdr, FVBPF_EV_PROC, sizeof(*ev), bpf_get_current_pid_tgid());
	ev->kind = kind;
	ev->pid = pid;
	ev->ppid = ppid;
	ev->pad = 0;
	ev->start_boot_ns = start;
	/* Rare and waited for: wake the loader at once. */
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(tree_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, one = 1;

	/* A new thread is no new process. */
	if (ptgid == ctgid || !bpf_map_lookup_elem(&tree, &ptgid))
		return 0;
	if (bpf_map_update_elem(&tree, &ctgid, &one, BPF_ANY))
		__sync_fetch_and_add(&tree_full, 1);
	proc_record(FVBPF_PROC_FORK, ctgid, ptgid, child->start_boottime);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(tree_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;

	if (!report_all_execs && !bpf_map_lookup_elem(&tree, &tgid))
		return 0;
	proc_record(FVBPF_PROC_EXEC, tgid, 0, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(tree_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid = p->tgid;

	/* The process ends with its last thread; the leader may go first. */
	if (!group_dead || bpf_map_delete_elem(&tree, &tgid))
		return 0;
	proc_record(FVBPF_PROC_EXIT, tgid, 0, 0);
	return 0;
}
