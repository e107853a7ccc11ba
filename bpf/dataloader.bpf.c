// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * DataLoader workers (issue 38): the messages of a trainer's DataLoader
 * queues, where CPython's _pickle module turns them into objects
 * (_pickle_loads' return) or bytes (_pickle_Pickler_dump's entry), and
 * where a worker's collate begins (torch's first new shared storage of
 * its batch: default_collate stacks into one).  The
 * link has no PID filter, since a worker forked before or after the attach
 * must be seen without being attached to: a hit counts only in the slot's
 * trainer or a process it or a child of it started (its real parent or
 * grandparent: the spawn and forkserver start methods), everything else
 * returns at once.  What is read is the target's: a 2-tuple whose first
 * item is a small non-negative int, told by its type's name; anything
 * else is not a DataLoader message and sends nothing.
 */

#define DL_COOKIE_FN(c) ((__u32)((c) >> 32) & 0xff)

/* The trainer in @cookie's slot when this process is it, one it started or
 * one its forkserver started;
 * *@worker: 0 for the trainer, else the worker's tgid. */
static __always_inline struct fvbpf_proc_state *dl_owner(__u64 cookie, __u32 *worker)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 slot = (__u32)(cookie & 0xffff), tgid = task->tgid;
	struct fvbpf_proc_state *ps = bpf_map_lookup_elem(&procs, &slot);

	if (!ps || !ps->tgid || !(ps->flags & FVBPF_PROC_ARMED))
		return NULL;
	*worker = 0;
	if (ps->tgid == tgid)
		return ps;
	/* a fork of the trainer, a process the spawn method started, or one
	 * its forkserver (a child of the trainer) forked */
	if (task->real_parent->tgid != ps->tgid &&
	    task->real_parent->real_parent->tgid != ps->tgid)
		return NULL;
	*worker = tgid;
	return ps;
}

/* The first @n bytes of @obj's type's name are @want's. */
static __always_inline bool dl_type_is(__u64 obj, __u64 want, __u64 mask)
{
	__u64 type = 0, name = 0, text = 0;

	if (!obj || bpf_probe_read_user(&type, 8, (const void *)(obj + 8)) || !type ||
	    bpf_probe_read_user(&name, 8, (const void *)(type + 24)) || !name ||
	    bpf_probe_read_user(&text, 8, (const void *)name))
		return false;
	return (text & mask) == want;
}

/* Little-endian names with their NUL, masked to their length. */
#define DL_NAME_TUPLE 0x00656c707574ull /* "tuple\0" */
#define DL_MASK_TUPLE 0xffffffffffffull
#define DL_NAME_INT 0x00746e69ull       /* "int\0" */
#define DL_MASK_INT 0xffffffffull
#define DL_NAME_LIST 0x007473696cull    /* "list\0" */
#define DL_MASK_LIST 0xffffffffffull

/*
 * A non-negative int of at most two 30-bit digits, or -1.  3.11 keeps the
 * digit count in ob_size (0, 1, 2); 3.12 on in lv_tag (count << 3, sign
 * in the low bits: 1 is zero, whose digit is 0 too): 1 and 8 mean one
 * digit, 2 and 16 two, whichever the version.
 */
static __always_inline __s64 dl_small_int(__u64 obj)
{
	__u64 tag = 0;
	__u32 d[2] = {};

	if (!dl_type_is(obj, DL_NAME_INT, DL_MASK_INT) ||
	    bpf_probe_read_user(&tag, 8, (const void *)(obj + 16)))
		return -1;
	if (tag == 0)
		return 0;
	if (bpf_probe_read_user(d, sizeof(d), (const void *)(obj + 24)))
		return -1;
	if (tag == 1 || tag == 8)
		return d[0] & 0x3fffffff;
	if (tag == 2 || tag == 16)
		return (__s64)(d[0] & 0x3fffffff) | (__s64)(d[1] & 0x3fffffff) << 30;
	return -1;
}

/* @obj is (idx, x): 0 and *@idx, *@second; else -1. */
static __always_inline int dl_pair(__u64 obj, __s64 *idx, __u64 *second)
{
	__u64 v[3] = {};

	if (!dl_type_is(obj, DL_NAME_TUPLE, DL_MASK_TUPLE) ||
	    bpf_probe_read_user(v, sizeof(v), (const void *)(obj + 16)) || v[0] != 2)
		return -1;
	*idx = dl_small_int(v[1]);
	*second = v[2];
	return *idx < 0 ? -1 : 0;
}

static __always_inline void dl_send(struct fvbpf_proc_state *ps, __u32 worker, __u8 kind,
				    __s64 idx, __u64 samples)
{
	__u64 pid_tgid = (__u64)ps->tgid << 32 | (__u32)current_pid_tgid();
	struct fvbpf_dl_event *ev = reserve(ps, sizeof(*ev));

	if (!ev)
		return;
	fill_hdr(&ev->hdr, FVBPF_EV_DL, sizeof(*ev), pid_tgid);
	ev->worker = worker;
	ev->kind = kind;
	ev->pad[0] = ev->pad[1] = ev->pad[2] = 0;
	ev->idx = idx;
	ev->samples = samples;
	bpf_ringbuf_submit(ev, SUBMIT_FLAGS);
}

/* What _pickle_loads returned: a worker's request on its main thread, or
 * a batch the trainer received (on its main or pin-memory thread). */
static __always_inline void dl_loaded(struct pt_regs *ctx, struct fvbpf_proc_state *ps,
				      __u32 worker)
{
	__u64 second = 0, n = 0;
	__s64 idx;

	if (dl_pair(PT_REGS_RC(ctx), &idx, &second))
		return;
	if (!worker) {
		dl_send(ps, 0, FVBPF_DL_RECV, idx, 0);
		return;
	}
	if ((__u32)current_pid_tgid() != worker)
		return; /* another thread of the worker (multiprocessing's resource sharer) */
	if (!dl_type_is(second, DL_NAME_LIST, DL_MASK_LIST) ||
	    bpf_probe_read_user(&n, 8, (const void *)(second + 16)))
		n = 1; /* an iterable-style or unbatched index */
	dl_send(ps, worker, FVBPF_DL_START, idx, n);
}

SEC("uprobe")
int dl_pickle(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), second = 0;
	struct fvbpf_proc_state *ps;
	__u32 worker = 0;
	__s64 idx;

	ps = dl_owner(cookie, &worker);
	if (!ps)
		return 1;
	if (DL_COOKIE_FN(cookie) == FVBPF_DL_FN_LOADS) {
		if (bpf_session_is_return())
			dl_loaded(ctx, ps, worker);
		return 0; /* the entry asks for the return */
	}
	if (DL_COOKIE_FN(cookie) == FVBPF_DL_FN_DUMP && worker &&
	    !dl_pair(PT_REGS_PARM2(ctx), &idx, &second))
		dl_send(ps, worker, FVBPF_DL_END, idx, 0);
	/* default_collate's first shared storage on the worker's main thread:
	 * the loader keeps the first of a batch */
	if (DL_COOKIE_FN(cookie) == FVBPF_DL_FN_SHARED && worker &&
	    (__u32)current_pid_tgid() == worker)
		dl_send(ps, worker, FVBPF_DL_COLLATE, 0, 0);
	return 1;
}
