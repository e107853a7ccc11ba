// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Process trees: the fork/exec/exit tracepoints. */
#include "fvbpf_common.bpf.h"

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

static __always_inline void proc_record(__u32 kind, __u32 pid, __u32 ppid, __u64 start)
{
	struct fvbpf_proc_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);

	if (!ev) {
		__sync_fetch_and_add(&counters.tree_drops, 1);
		return;
	}
	fill_hdr(&ev->hdr, FVBPF_EV_PROC, sizeof(*ev), current_pid_tgid());
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
		__sync_fetch_and_add(&counters.tree_full, 1);
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
