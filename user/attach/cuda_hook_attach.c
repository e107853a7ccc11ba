// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * CUDA launches through libfvbpf.so's hook: where the library is in the
 * process and fvbpf probes its libcudart, fvbpf asks the library to point
 * the PLT slots that call cudaLaunchKernel at its wrapper, which records a
 * launch inside a segment into the fast path's rings instead of trapping
 * into the uprobe (two traps and two BPF runs a call).  The uprobes stay:
 * they take every call the wrapper does not record.
 *
 * The library answers at its first marker of the attach (or its watch
 * thread's next look), not before the epoch turns odd, so the answer is
 * picked up on the run loop's tick; until fvbpf has mapped the rings and
 * said so (the CUDA channel's request word), the wrapper sends every call
 * through the uprobe.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "attach/cuda_hook_attach.h"
#include "fvbpf_fast.h"
#include "model/options.h"
#include "pipeline/torch/callback_ops.h"
#include "probes/cuda_api.h"
#include "proc/control/channel.h"
#include "proc/control/cuda_hook_channel.h"
#include "util/log.h"
#include "probes/cuda_probes.h"
#include "pipeline/registry.h"

/* Why the hook is not for @t, or NULL when it may be asked for. */
static const char *not_for(const struct session *s, const struct session_target *t)
{
	if (s->launch_source == LAUNCH_SOURCE_UPROBES)
		return "--launch-source uprobes";
	if (!s->api_probes || !t->cuda->attached)
		return "no CUDA function is probed in it";
	if (t->fast->launch_id < 0)
		return "cudaLaunchKernel is not in fvbpf's call table";
	if (s->pystacks)
		return "--with-stack takes a launch's Python stack from its uprobe";
	if ((s->nfast_gates || s->nfast_steps) && t->ops != OPS_CALLBACKS)
		return "segments open at torch scopes, which the library follows only with "
		       "PyTorch's callbacks (--op-source)";
	return NULL;
}

static void refuse(struct session_target *t, const char *why)
{
	snprintf(t->fast->hook_why, sizeof(t->fast->hook_why), "%s", why);
}

void cuda_hook_request(struct session *s, struct session_target *t)
{
	uint64_t regions[FVBPF_FAST_REGIONS];
	struct callback_tables tb = {
		.regions = regions, .gates = s->fast_gates, .ngates = s->nfast_gates,
		.steps = s->fast_steps, .nsteps = s->nfast_steps, .window = s->window_ns != 0,
	};
	const char *why;
	unsigned int i;
	int id = cuda_api_find("cudaLaunchKernel");

	t->fast->hook_gen = 0;
	t->fast->hook_live = t->fast->hook_used = false;
	t->fast->launch_id = id;
	why = not_for(s, t);
	if (why) {
		refuse(t, why);
		return;
	}
	for (i = 0; i < s->reg->count; i++) {
		if (!s->reg->defs[i].enabled)
			continue;
		if (tb.nregions == FVBPF_FAST_REGIONS) {
			refuse(t, "more regions are enabled than the library follows (64)");
			return;
		}
		regions[tb.nregions++] = s->reg->defs[i].hash;
	}
	if (cuda_hook_channel_request(t->ctl, &tb, &t->fast->hook_gen)) {
		t->fast->hook_gen = 0;
		refuse(t, "its control page could not be written");
	}
}

static const char *answer_text(uint32_t state)
{
	switch (state) {
	case FVBPF_HOOK_NO_CUDART: return "the library found no libcudart.so with cudaLaunchKernel";
	case FVBPF_HOOK_PROLOGUE:
		return "cudaLaunchKernel starts with an instruction the hook does not run";
	case FVBPF_HOOK_NO_CALLER: return "no loaded object calls cudaLaunchKernel through its PLT";
	case FVBPF_HOOK_NO_MEMORY: return "the library could not make its shared rings";
	case FVBPF_HOOK_OFF: return "FVBPF_FAST=off in the job's environment";
	case FVBPF_HOOK_UNSUPPORTED: return "the library has no hook for this architecture";
	default: return "the library's answer made no sense";
	}
}

void cuda_hook_stop(struct session_target *t)
{
	if (t->fast->hook_gen && !t->fast->hook_why[0])
		refuse(t, "the library had not answered when fvbpf stopped (none of its markers "
			  "ran after the attach)");
	t->fast->hook_gen = 0;
	t->fast->hook_live = false;
}

void cuda_hook_check(struct session *s, struct session_target *t)
{
	struct channel_answer a = { 0 };
	int r;

	(void)s;
	if (!t->fast->hook_gen || t->exited || t->finished || !t->epoch)
		return;
	r = channel_answered(t->ctl, CHANNEL_CUDA, t->fast->hook_gen, &a);
	if (r == 0)
		return;
	t->fast->hook_gen = 0;
	if (r < 0) {
		refuse(t, "its control page could not be read");
		return;
	}
	if (a.state != FVBPF_HOOK_READY) {
		refuse(t, answer_text(a.state));
		log_info("PID %d: CUDA launches through uprobes: %s", t->proc->pid, t->fast->hook_why);
		return;
	}
	t->fast->hook_slots = a.slots;
	if (!t->fast->map && callback_ops_open(t->fast, t->proc->pid, a.fd, a.bytes)) {
		refuse(t, "its shared rings could not be mapped (not a sealed memfd of the "
			  "expected size)");
		log_info("PID %d: CUDA launches through uprobes: %s", t->proc->pid, t->fast->hook_why);
		return;
	}
	if (cuda_hook_channel_set_live(t->ctl, t->epoch)) {
		refuse(t, "its control page could not be written");
		return;
	}
	t->fast->hook_live = t->fast->hook_used = true;
	log_info("PID %d: cudaLaunchKernel inside segments through libfvbpf.so's hook (%u call "
		 "site%s), no trap per launch", t->proc->pid, a.slots, a.slots == 1 ? "" : "s");
}
