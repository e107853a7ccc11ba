// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Region marker probes.  Attached per traced process to
 * fvbpf_probe_region_begin/end and fvbpf_probe_thread_sync in whichever ELF
 * of the target exports them.
 */
#include "fvbpf_common.bpf.h"

/* fvbpf_region_hash(name) -> registry index, enabled regions only. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FVBPF_REGION_SLOTS);
	__type(key, __u32);
	__type(value, struct fvbpf_region_slot);
} enabled_regions SEC(".maps");

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

/*
 * @user_ts: the library's own CLOCK_MONOTONIC reading, taken just before it
 * called the probe (the _ts probe functions), or 0: read the clock here.
 * The kernel's clock read costs about 70 ns a run on this kind of machine,
 * the largest part of the program; the library's vDSO read costs 27.  The
 * loader checks the value (events.c): the target controls it.
 */
static __always_inline int on_region(struct pt_regs *ctx, __u64 hash, __u16 type, __u64 user_ts)
{
	__u64 pid_tgid = current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, region;
	struct fvbpf_proc_state *ps;
	struct fvbpf_region_event *ev;
	__s32 depth;
	__u32 outer;
	__u64 drops, stack_ts = 0;

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
			__sync_fetch_and_add(&counters.unbalanced_ends, 1);
			depth = 0;
		}
	}

	/* Read with the depth, before the reservation: the count then holds
	 * only drops that came before this record. */
	outer = ps->outer;
	drops = ps->drops;
	if (type == FVBPF_EV_REGION_BEGIN) /* --with-stack: its stack just before it */
		stack_ts = py_stack_marker(ctx, pid_tgid, user_ts);
	if (!stack_ts)
		stack_ts = user_ts;
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 0;
	fill_hdr_at(&ev->hdr, type, sizeof(*ev), pid_tgid, stack_ts);
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
	return on_region(ctx, hash, FVBPF_EV_REGION_BEGIN, 0);
}

SEC("uprobe")
int BPF_KPROBE(region_end, const char *name, __u64 hash)
{
	return on_region(ctx, hash, FVBPF_EV_REGION_END, 0);
}

/* The same with the library's own clock reading (libraries from 2026-12 on). */
SEC("uprobe")
int BPF_KPROBE(region_begin_ts, const char *name, __u64 hash, __u64 ts)
{
	return on_region(ctx, hash, FVBPF_EV_REGION_BEGIN, ts);
}

SEC("uprobe")
int BPF_KPROBE(region_end_ts, const char *name, __u64 hash, __u64 ts)
{
	return on_region(ctx, hash, FVBPF_EV_REGION_END, ts);
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
	__u64 pid_tgid = current_pid_tgid();
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
