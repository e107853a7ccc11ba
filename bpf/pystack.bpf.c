// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * --with-stack: the calling thread's CPython frames, copied into a record
 * written just before a torch entry record (include/fvbpf_pystack.h).
 * Everything read here is the target's memory: each read is bounded, a
 * failed read ends the walk, and the walk stops after cfg->depth frames
 * whatever the chain does (a cycle only repeats frames until then).
 */
#include "fvbpf_common.bpf.h"
#include "fvbpf_pystack.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FVBPF_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct fvbpf_py_cfg);
} py_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct fvbpf_py_tstate);
} py_tstates SEC(".maps");

/* api id -> 1 for the CUDA calls that get a stack (launches), by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FVBPF_MAX_APIS);
	__type(key, __u32);
	__type(value, __u8);
} py_apis SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fvbpf_pystack_event);
} py_scratch SEC(".maps");

/* Set by the loader once a process has stacks (--with-stack): until then
 * the probes that could walk pay one load. */
__u32 py_active = 0;
/* Set before the load when the session may want stacks (--with-stack or
 * FASTVIDEO_TORCH_PROFILER_WITH_STACK): read-only, so without it the
 * verifier drops the walk from every program that could take it.  The
 * walk was most of the load's verification time, and that time is the
 * kernel's CPU in every attach (about 0.2 s on the 2-vCPU VM). */
const volatile bool py_wanted = false;

static __always_inline __u64 py_read_u64(__u64 addr)
{
	__u64 v = 0;

	if (!addr || bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/* 0, or non-zero when @addr could not be read (not mapped, or not resident:
 * a uprobe cannot fault pages in). */
static __always_inline long py_read(__u64 addr, __u64 *v)
{
	*v = 0;
	return addr ? bpf_probe_read_user(v, sizeof(*v), (const void *)addr) : -1;
}

/* How a thread state names its thread: the kernel's tid, or for 3.10 the
 * pthread_t, which on x86-64 glibc is the thread pointer (the fs base). */
static __always_inline __u64 py_thread_name(const struct fvbpf_py_cfg *cfg, __u64 pid_tgid)
{
	if (!(cfg->mode & FVBPF_PY_FRAME_OBJECT))
		return (__u32)pid_tgid;
#if defined(__TARGET_ARCH_x86)
	return bpf_get_current_task_btf()->thread.fsbase;
#else
	return 0; /* no thread pointer known here: never matches */
#endif
}

/* This thread's entry (its PyThreadState): the cached one if it still
 * names this thread, else after a bounded walk of the interpreter's thread
 * list; NULL when the thread runs no Python. */
static __always_inline struct fvbpf_py_tstate *py_tstate(const struct fvbpf_py_cfg *cfg,
							 __u64 pid_tgid)
{
	struct fvbpf_py_tstate *c, nv = {};
	__u64 ts, now, in, v, tid = py_thread_name(cfg, pid_tgid);
	__u32 i;
	bool fault;

	if (!tid)
		return NULL;
	c = bpf_map_lookup_elem(&py_tstates, &pid_tgid);
	if (c && c->tstate && py_read_u64(c->tstate + cfg->ts_native_tid) == tid)
		return c;
	now = bpf_ktime_get_ns();
	if (c && !c->tstate && now - c->checked_ns < FVBPF_PY_NEG_NS)
		return NULL;
	fault = py_read(cfg->interp_head, &in) || py_read(in + cfg->interp_threads, &ts);
	for (i = 0; i < FVBPF_PY_THREADS_MAX && ts && !fault; i++) {
		if (py_read(ts + cfg->ts_native_tid, &v)) {
			fault = true;
			break;
		}
		if (v == tid) {
			nv.tstate = ts;
			break;
		}
		fault = py_read(ts + cfg->ts_next, &ts) != 0;
	}
	if (!nv.tstate && fault) {
		/* unreadable now, not "no Python": look again at the next entry */
		__sync_fetch_and_add(&counters.py_fault, 1);
		return NULL;
	}
	if (!nv.tstate)
		__sync_fetch_and_add(&counters.py_no_thread, 1);
	nv.checked_ns = now;
	bpf_map_update_elem(&py_tstates, &pid_tgid, &nv, BPF_ANY);
	return nv.tstate ? bpf_map_lookup_elem(&py_tstates, &pid_tgid) : NULL;
}

#define PY_NONE 0   /* no stack */
#define PY_WALKED 1 /* a stack record went out */
#define PY_SAME 2   /* an operator inside the last walked one: its stack */

/*
 * The stack record before an entry at @ts; @sp: an operator's entry stack
 * pointer (nesting, see struct fvbpf_py_tstate), 0 for launches and region
 * begins, which always walk.
 */
/* Not inlined: its 128-byte window stays out of the callers' frames (torch_call
 * with --record-shapes calls down three more levels; BPF allows 512 bytes). */
static __noinline int py_stack_emit(__u32 slot, __u64 pid_tgid, __u64 ts_ns, __u64 sp)
{
	__u64 win[16] = {}, frame, first = 0, first_instr = 0, owner, imask;
	struct fvbpf_pystack_event *ev;
	struct fvbpf_py_tstate *st;
	struct fvbpf_py_cfg *cfg;
	__u32 zero = 0, i, n = 0, size;

	if (!py_wanted || !py_active)
		return PY_NONE;
	cfg = bpf_map_lookup_elem(&py_cfg, &slot);
	if (!cfg || !cfg->tgid || cfg->tgid != pid_tgid >> 32)
		return PY_NONE;
	st = py_tstate(cfg, pid_tgid);
	if (!st)
		return PY_NONE;
	frame = py_read_u64(st->tstate + cfg->ts_cframe);
	if (cfg->cf_current != FVBPF_PY_NO_CFRAME)
		frame = py_read_u64(frame + cfg->cf_current);
	/* 3.10's f_lasti is an int: the next one is f_lineno */
	imask = cfg->mode & FVBPF_PY_FRAME_OBJECT ? 0xffffffffull : ~0ull;
	if (sp && st->op_sp && sp < st->op_sp && frame && frame == st->op_frame &&
	    !bpf_probe_read_user(win, FVBPF_PY_WINDOW, (const void *)(frame + cfg->fr_base)) &&
	    (win[(cfg->fr_instr >> 3) & 15] & imask) == st->op_instr)
		return PY_SAME;
	ev = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!ev)
		return PY_NONE;
	ev->flags = 0;
	first = frame;
	for (i = 0; i <= FVBPF_PY_DEPTH_MAX; i++) {
		if (!frame)
			break;
		if (i >= cfg->depth || i >= FVBPF_PY_DEPTH_MAX) { /* one more frame: cut */
			ev->flags |= FVBPF_PYSTACK_CUT;
			break;
		}
		if (bpf_probe_read_user(win, FVBPF_PY_WINDOW, (const void *)(frame + cfg->fr_base))) {
			ev->flags |= FVBPF_PYSTACK_FAULT;
			break;
		}
		if (!i)
			first_instr = win[(cfg->fr_instr >> 3) & 15] & imask;
		owner = (win[(cfg->fr_owner >> 3) & 15] >> ((cfg->fr_owner & 7) * 8)) & 0xff;
		/* an entry frame of C code (3.12+) has no Python line: code 0,
		 * which user space leaves out */
		ev->frames[i].code = cfg->owner_cstack && owner == cfg->owner_cstack ?
					     0 : win[(cfg->fr_code >> 3) & 15];
		ev->frames[i].instr = win[(cfg->fr_instr >> 3) & 15] & imask;
		frame = win[(cfg->fr_previous >> 3) & 15];
		n = i + 1;
	}
	if (!n)
		return PY_NONE;
	ev->hdr.type = FVBPF_EV_PYSTACK;
	ev->hdr.version = FVBPF_EVENT_VERSION;
	ev->hdr.tgid = pid_tgid >> 32;
	ev->hdr.tid = (__u32)pid_tgid;
	ev->hdr.ts_ns = ts_ns;
	ev->nframes = n;
	size = 32 + 16 * n;
	if (size > sizeof(*ev))
		size = sizeof(*ev);
	ev->hdr.size = size;
	if (bpf_ringbuf_output(&events, ev, size, SUBMIT_FLAGS)) {
		__sync_fetch_and_add(&counters.py_drops, 1);
		return PY_NONE;
	}
	__sync_fetch_and_add(&counters.py_stacks, 1);
	if (sp) {
		st->op_sp = sp;
		st->op_frame = first;
		st->op_instr = first_instr;
	}
	return PY_WALKED;
}

/* An operator's return (stack pointer @sp, after its ret): the one walked
 * last is over. */
static __always_inline void py_stack_return(__u32 slot, __u64 pid_tgid, __u64 sp)
{
	struct fvbpf_py_cfg *cfg;
	struct fvbpf_py_tstate *st;

	if (!py_wanted || !py_active)
		return;
	cfg = bpf_map_lookup_elem(&py_cfg, &slot);
	if (!cfg || !cfg->tgid || cfg->tgid != pid_tgid >> 32)
		return;
	st = bpf_map_lookup_elem(&py_tstates, &pid_tgid);
	if (st && st->op_sp && st->op_sp + 8 == sp)
		st->op_sp = 0;
}

/* A CUDA call's stack, for the calls py_apis names: its timestamp (the
 * call's entry record takes it), 0 when not wanted. */
static __always_inline __u64 py_stack_api(__u32 slot, __u32 api, __u64 pid_tgid)
{
	__u8 *want;
	__u64 ts;

	if (!py_wanted || !py_active)
		return 0;
	want = bpf_map_lookup_elem(&py_apis, &api);
	if (!want || !*want)
		return 0;
	ts = bpf_ktime_get_ns();
	py_stack_emit(slot, pid_tgid, ts, 0);
	return ts;
}

/* A region begin's stack: the marker probes find their slot by the tgid
 * (or the cookie, which is the slot); same contract as py_stack_api. */
static __always_inline __u64 py_stack_at(struct pt_regs *ctx, __u64 pid_tgid, __u64 now)
{
	__u32 tgid = pid_tgid >> 32, k = tgid & (FVBPF_TGID_SLOTS - 1), slot;
	struct fvbpf_tgid_slot *ts;
	struct fvbpf_py_cfg *cfg;

	if (!py_wanted || !py_active)
		return 0;
	ts = bpf_map_lookup_elem(&tgid_slots, &k);
	slot = ts && ts->tgid == tgid ? ts->slot : (__u32)(bpf_get_attach_cookie(ctx) & 0xffff);
	cfg = bpf_map_lookup_elem(&py_cfg, &slot);
	if (!cfg || cfg->tgid != tgid)
		return 0;
	if (!now)
		now = bpf_ktime_get_ns();
	py_stack_emit(slot, pid_tgid, now, 0);
	return now;
}

static __always_inline __u64 py_stack_marker(struct pt_regs *ctx, __u64 pid_tgid, __u64 now)
{
	return py_stack_at(ctx, pid_tgid, now);
}

/*
 * fvbpf_probe_py_stack(ts): the operator fast path's --with-stack (the
 * library calls it at an outermost operator's begin, which it records
 * with the same timestamp); the cookie is the process's slot, as the
 * markers'.  Only inside segments, as the operator probes.
 */
SEC("uprobe")
int BPF_KPROBE(py_stack_probe, __u64 ts)
{
	__u64 pid_tgid = current_pid_tgid();
	struct fvbpf_proc_state *ps = marker_proc(ctx, pid_tgid >> 32);

	if (!ps || !(ps->flags & FVBPF_PROC_ARMED) || ps->depth <= 0 || !ts)
		return 0;
	py_stack_at(ctx, pid_tgid, ts);
	return 0;
}
