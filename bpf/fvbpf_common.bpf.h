/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What every probe family shares: the ring buffer, the traced processes'
 * state (procs, tgid_slots), finding the process a probe hit belongs to,
 * the record header and the reservation that counts drops.  Included by
 * each family file; fvbpf.bpf.c includes the families, so all of them
 * build into one object and one skeleton.  It defines maps and variables:
 * no other unit may include it.
 */
#ifndef FVBPF_COMMON_BPF_H
#define FVBPF_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "fvbpf_counters.h"
#include "fvbpf_events.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

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

/* Session uprobes (kernel 6.13+): one program sees entry and return. */
extern bool bpf_session_is_return(void) __ksym;
extern __u64 *bpf_session_cookie(void) __ksym;

/* Every family's loss counters, one .bss variable the loader reads at exit. */
struct fvbpf_counters counters = {};

/*
 * A wakeup per record costs several times the probe itself: records are
 * submitted without one and the reader drains the ring on a short timer.
 */
#define SUBMIT_FLAGS BPF_RB_NO_WAKEUP

/*
 * bpf_get_current_pid_tgid() without its helper call: the task pointer
 * helper is inlined by the x86-64 JIT (a per-CPU load), and on this kind
 * of VM every helper's return pays SRSO's safe RET.  The same values: the
 * initial namespace's pid and tgid.
 */
static __always_inline __u64 current_pid_tgid(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return (__u64)(__u32)t->tgid << 32 | (__u32)t->pid;
}

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

/* @ts: the record's time when the caller has it already, or 0. */
static __always_inline void fill_hdr_at(struct fvbpf_event_hdr *h, __u16 type, __u32 size,
					__u64 pid_tgid, __u64 ts)
{
	h->type = type;
	h->version = FVBPF_EVENT_VERSION;
	h->size = size;
	h->tgid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	h->ts_ns = ts ? ts : bpf_ktime_get_ns();
}

static __always_inline void fill_hdr(struct fvbpf_event_hdr *h, __u16 type, __u32 size,
				     __u64 pid_tgid)
{
	fill_hdr_at(h, type, size, pid_tgid, 0);
}

/* Reserve a record, or count the drop against the process and in total. */
static __always_inline void *reserve(struct fvbpf_proc_state *ps, __u32 size)
{
	void *ev = bpf_ringbuf_reserve(&events, size, 0);

	if (!ev) {
		__sync_fetch_and_add(&ps->drops, 1);
		__sync_fetch_and_add(&counters.ringbuf_drops, 1);
	}
	return ev;
}

#endif /* FVBPF_COMMON_BPF_H */
