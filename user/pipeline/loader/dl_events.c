// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * DataLoader records into the trainer's join.  A worker's worker_id is
 * its place among the trainer's forked children, or among those the spawn
 * method or its forkserver started (proc_children.h), read once, at its
 * first batch: the loader starts them in worker_id order.
 */
#include "pipeline/loader/dl_events.h"
#include "pipeline/loader/dl_join.h"
#include "proc/proc_children.h"
#include "proc/proc_info.h"

bool dl_events_handle(struct session_target *t, const struct fvbpf_dl_event *ev)
{
	pid_t w = (pid_t)ev->worker;
	int32_t id = -1;

	switch (ev->kind) {
	case FVBPF_DL_START:
		if (!w || w == t->proc->pid)
			return false;
		if (!dl_worker_known(t->dl, w))
			id = proc_worker_rank(t->proc->pid, w);
		dl_batch_start(t->dl, w, id, ev->idx, ev->samples, ev->hdr.ts_ns);
		return true;
	case FVBPF_DL_END:
		if (!w || w == t->proc->pid)
			return false;
		dl_batch_end(t->dl, w, ev->idx, ev->hdr.ts_ns);
		return true;
	case FVBPF_DL_COLLATE:
		if (!w || w == t->proc->pid)
			return false;
		dl_batch_collate(t->dl, w, ev->hdr.ts_ns);
		return true;
	case FVBPF_DL_RECV:
		if (w)
			return false;
		dl_receive(t->dl, ev->hdr.tid, ev->idx, ev->hdr.ts_ns);
		return true;
	default:
		return false;
	}
}
