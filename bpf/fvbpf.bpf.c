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
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FVBPF_MAX_REGIONS);
	__type(key, __u64);
	__type(value, __u32);
} enabled_regions SEC(".maps");

/* tgid -> state; only traced processes have an entry. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FVBPF_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct fvbpf_proc_state);
} procs SEC(".maps");

/* Loss counters, read by the loader at exit. */
__u64 ringbuf_drops = 0;
__u64 unbalanced_ends = 0;

/* Ring-buffer fill above which a record wakes the reader at once. */
const volatile __u64 wakeup_threshold = 1 << 20;

static __always_inline __u64 submit_flags(void)
{
	/*
	 * A wakeup per record costs several times the probe itself; the
	 * reader polls on a short timer and is only kicked when the ring
	 * starts to fill.
	 */
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_threshold)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

static __always_inline int on_region(__u64 hash, __u16 type)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct fvbpf_proc_state *ps;
	struct fvbpf_region_event *ev;
	__u32 *region;
	__s32 depth;

	ps = bpf_map_lookup_elem(&procs, &tgid);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED))
		return 0;
	region = bpf_map_lookup_elem(&enabled_regions, &hash);
	if (!region)
		return 0;

	if (type == FVBPF_EV_REGION_BEGIN) {
		depth = __sync_fetch_and_add(&ps->depth, 1) + 1;
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

	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&ps->drops, 1);
		__sync_fetch_and_add(&ringbuf_drops, 1);
		return 0;
	}
	ev->hdr.type = type;
	ev->hdr.version = FVBPF_EVENT_VERSION;
	ev->hdr.size = sizeof(*ev);
	ev->hdr.tgid = tgid;
	ev->hdr.tid = (__u32)pid_tgid;
	ev->hdr.ts_ns = bpf_ktime_get_ns();
	ev->region_id = *region;
	ev->depth = depth;
	ev->name_hash = hash;
	bpf_ringbuf_submit(ev, submit_flags());
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(region_begin, const char *name, __u64 hash)
{
	return on_region(hash, FVBPF_EV_REGION_BEGIN);
}

SEC("uprobe")
int BPF_KPROBE(region_end, const char *name, __u64 hash)
{
	return on_region(hash, FVBPF_EV_REGION_END);
}

/*
 * A thread's first marker after attach: copy out the names of the regions
 * it already had open, outermost first.  Rare (once per thread per attach),
 * so it may be slow; the loader decides which of them are enabled.
 */
SEC("uprobe")
int BPF_KPROBE(thread_sync, const struct fvbpf_thread_stack *st, __u32 depth)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, i, n;
	struct fvbpf_proc_state *ps;
	struct fvbpf_sync_event *ev;
	__u64 name;

	ps = bpf_map_lookup_elem(&procs, &tgid);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED))
		return 0;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&ps->drops, 1);
		__sync_fetch_and_add(&ringbuf_drops, 1);
		return 0;
	}
	n = depth < FVBPF_SYNC_NAMES ? depth : FVBPF_SYNC_NAMES;
	ev->hdr.type = FVBPF_EV_THREAD_SYNC;
	ev->hdr.version = FVBPF_EVENT_VERSION;
	ev->hdr.size = sizeof(*ev);
	ev->hdr.tgid = tgid;
	ev->hdr.tid = (__u32)pid_tgid;
	ev->hdr.ts_ns = bpf_ktime_get_ns();
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
