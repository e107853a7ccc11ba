// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * --inject's policy for one target: whether to load the library (not when
 * it is there already), what to say when that is refused or fails, and the
 * hint for a CUDA process without the agent.  The loading itself is
 * proc/inject/'s.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach/inject_attach.h"
#include "proc/inject/inject.h"
#include "proc/proc_info.h"
#include "util/log.h"

void inject_for_target(struct session *s, struct session_target *t, pid_t pid)
{
	struct inject_info *info = &t->proc->inject;
	struct marker_lib *m;
	int err;

	if (!s->inject)
		return;
	m = malloc(sizeof(*m));
	if (!m)
		return;
	err = proc_find_marker_lib(pid, m);
	free(m);
	if (!err) {
		memset(info, 0, sizeof(*info));
		info->state = INJECT_REUSED;
		log_info("PID %d (%s): libfvbpf.so already loaded, nothing injected (reused)", pid,
			 t->proc->comm);
		return;
	}
	if (err != -ENOENT)
		return; /* gone or unreadable: target_open() says so */
	err = inject_library(pid, s->inject_lib, s->inject_timeout_s, info);
	if (!err) {
		log_info("PID %d (%s): libfvbpf.so injected, the target stopped %llu us", pid,
			 t->proc->comm, (unsigned long long)(info->stopped_ns / 1000));
		return;
	}
	if (err == -ESRCH && !info->why[0])
		return; /* exited before anything: target_open() says so */
	log_warn("PID %d (%s): --inject %s: %s; attaching without the agent", pid, t->proc->comm,
		 info->state == INJECT_REFUSED ? "refused" : "failed",
		 info->why[0] ? info->why : strerror(-err));
}

void inject_hint(struct session *s, struct session_target *t)
{
	unsigned int maps;

	if (s->inject || t->has_markers)
		return;
	maps = inject_cuda_maps(t->proc->pid);
	/* PyTorch's CUDA wheel maps libcudart in every job, CPU-only ones
	 * too: only a loaded driver says that this one uses the GPU. */
	if ((maps & CUDA_MAPS_TORCH) && !(maps & CUDA_MAPS_DRIVER))
		return;
	if (maps & (CUDA_MAPS_RUNTIME | CUDA_MAPS_DRIVER))
		log_info("PID %d (%s) maps CUDA but has no fvbpf agent: no GPU time; add --inject "
			 "to load it without a restart (stops the process for about a millisecond)",
			 t->proc->pid, t->proc->comm);
}
