// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The operator fast path at attach: where libfvbpf.so is in a PyTorch
 * process with a thread of its own watching the control page, and the
 * process's torch is a version whose RecordFunction callback layout was
 * checked, fvbpf asks the library to register PyTorch callbacks instead of
 * putting ~3,800 uprobes on operators and nodes.  The scopes stay uprobes:
 * they are few and BPF's segment gates need them.
 */
#define _GNU_SOURCE
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "attach/callback_attach.h"
#include "model/session.h"
#include "probes/torch_probes.h"
#include "fvbpf_fast.h"
#include "model/options.h"
#include "probes/bpf_setup.h"
#include "proc/control/callback_channel.h"
#include "proc/control/channel.h"
#include "proc/torch/torch_version.h"
#include "util/clock.h"
#include "util/log.h"
#include "pipeline/torch/callback_ops.h"
#include "pipeline/registry.h"

/* The library's watch thread looks every 250 ms; a loaded machine may take
 * a few ticks. */
#define FAST_ANSWER_WAIT_NS 3000000000ull

/* Why the fast path is not for @t, or NULL when it may be asked for;
 * *@say: a reason worth a line (the job has torch and the library). */
static const char *not_for(struct session *s, struct session_target *t, unsigned int *layout,
			   bool *say)
{
	char lib[PATH_MAX];
	int w;

	if (s->op_source == OP_SOURCE_UPROBES)
		return "--op-source uprobes";
	if (!s->torch_ops)
		return "--no-torch-ops";
	*say = s->torch_ops && torch_probes_mapped(t->proc->pid, lib, sizeof(lib));
	if (s->record_shapes || s->with_flops)
		return "--record-shapes and --with-flops read operator arguments from uprobes";
	if (s->profile_memory)
		return "--profile-memory attributes allocations through the operator uprobes";
	if (!torch_probes_mapped(t->proc->pid, lib, sizeof(lib)))
		return "libtorch_cpu.so was not mapped at attach";
	*say = true;
	if (torch_version_read(t->proc->pid, lib, t->fast->version, sizeof(t->fast->version)))
		return "its torch/version.py could not be read";
	*layout = torch_version_layout(t->fast->version);
	if (!*layout)
		return "its torch version's callback layout is not one fvbpf checked (2.13, 2.14)";
	if (!t->proc->marker.syms[MARKER_SCOPE_END].found)
		return "its libfvbpf.so predates the operator fast path";
	if (s->pystacks && !t->proc->marker.syms[MARKER_PY_STACK].found)
		return "its libfvbpf.so predates --with-stack through the operator fast path";
	w = callback_channel_watched(t->ctl);
	if (w <= 0)
		return "no thread of libfvbpf.so watches for fvbpf in it (a C++ job with markers: "
		       "its operators come from uprobes)";
	return NULL;
}

static int refuse(struct session *s, struct session_target *t, const char *why, bool say)
{
	snprintf(t->fast->why, sizeof(t->fast->why), "%s", why);
	if (s->op_source != OP_SOURCE_CALLBACKS) {
		if (say)
			log_info("PID %d: PyTorch operators through uprobes, not its own callbacks: %s",
				 t->proc->pid, why);
		return 0;
	}
	log_error("PID %d (%s): --op-source callbacks cannot be had: %s; use --op-source auto",
		  t->proc->pid, t->proc->comm, why);
	return -EINVAL;
}

int callback_attach_request(struct session *s, struct session_target *t)
{
	uint64_t regions[FVBPF_FAST_REGIONS];
	struct callback_tables tb = {
		.regions = regions, .gates = s->fast_gates, .ngates = s->nfast_gates,
		.steps = s->fast_steps, .nsteps = s->nfast_steps, .window = s->window_ns != 0,
		.stacks = s->pystacks != NULL,
	};
	unsigned int layout = 0, i;
	bool say = false;
	const char *why;

	t->ops = OPS_UPROBES;
	t->fast->gen = 0;
	why = not_for(s, t, &layout, &say);
	if (why)
		return refuse(s, t, why, say);
	for (i = 0; i < s->reg->count; i++) {
		if (!s->reg->defs[i].enabled)
			continue;
		if (tb.nregions == FVBPF_FAST_REGIONS)
			return refuse(s, t, "more regions are enabled than the callbacks follow (64)",
				      true);
		regions[tb.nregions++] = s->reg->defs[i].hash;
	}
	if (callback_channel_request(t->ctl, layout, &tb, &t->fast->gen))
		return refuse(s, t, "its control page could not be written", true);
	return 0;
}

static const char *answer_text(const struct channel_answer *a)
{
	switch (a->state) {
	case FVBPF_FAST_NO_TORCH: return "the library found no libtorch_cpu.so";
	case FVBPF_FAST_NO_SYMBOL: return "libtorch_cpu.so lacks at::addGlobalCallback";
	case FVBPF_FAST_BAD_LAYOUT: return "the library does not know that callback layout";
	case FVBPF_FAST_NO_MEMORY: return "the library could not make its shared rings";
	case FVBPF_FAST_OFF: return "FVBPF_FAST=off in the job's environment";
	default: return "the library's answer made no sense";
	}
}

/* Torch scopes end through the library's probe function, called from our
 * USER_SCOPE callback, not through a uprobe on RecordFunction::end(): with
 * callbacks registered every operator runs end(), and would trap. */
static int scope_end_attach(struct session *s, struct session_target *t)
{
	const struct marker_lib *m = &t->proc->marker;
	uint64_t slot = (uint64_t)(t - s->targets);
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = slot << FVBPF_COOKIE_SLOT_SHIFT);
	LIBBPF_OPTS(bpf_uprobe_opts, us, .bpf_cookie = slot);

	t->links[MARKER_SCOPE_END] = bpf_program__attach_uprobe_opts(
		bpf_setup_prog(s->skel, FVBPF_PROG_SCOPE_END), t->proc->pid, m->open_path,
		m->syms[MARKER_SCOPE_END].file_off, &uo);
	if (!t->links[MARKER_SCOPE_END])
		return -errno;
	if (!s->pystacks)
		return 0;
	/* --with-stack: BPF walks the Python frames when the library asks */
	t->links[MARKER_PY_STACK] = bpf_program__attach_uprobe_opts(
		bpf_setup_prog(s->skel, FVBPF_PROG_PY_STACK), t->proc->pid, m->open_path,
		m->syms[MARKER_PY_STACK].file_off, &us);
	return t->links[MARKER_PY_STACK] ? 0 : -errno;
}

int callback_attach_finish(struct session *s, struct session_target *t)
{
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + FAST_ANSWER_WAIT_NS;
	struct timespec tick = { 0, 5000000L };
	struct channel_answer a = { 0 };
	int r, err;

	if (!t->fast->gen)
		return 0;
	while ((r = channel_answered(t->ctl, CHANNEL_FAST, t->fast->gen, &a)) == 0 &&
	       clock_ns(CLOCK_MONOTONIC) < deadline)
		nanosleep(&tick, NULL);
	t->fast->gen = 0;
	if (r < 0)
		return refuse(s, t, "its control page could not be read", true);
	if (r == 0)
		return refuse(s, t, "the library did not answer within 3 s", true);
	if (a.state != FVBPF_FAST_READY)
		return refuse(s, t, answer_text(&a), true);
	err = callback_ops_open(t->fast, t->proc->pid, a.fd, a.bytes);
	if (err)
		return refuse(s, t, "its shared rings could not be mapped (not a sealed memfd of "
				    "the expected size)", true);
	err = scope_end_attach(s, t);
	if (err) {
		callback_ops_close(t->fast);
		return refuse(s, t, "the library's probe functions could not be probed", true);
	}
	t->ops = OPS_CALLBACKS;
	t->torchp->ops_via_callbacks = true;
	log_info("PID %d: PyTorch %s operators through its own callbacks (libfvbpf.so in the "
		 "process), no operator uprobes", t->proc->pid, t->fast->version);
	return 0;
}

void callback_attach_stop(struct session *s, struct session_target *t)
{
	(void)s;
	callback_ops_close(t->fast); /* the operator callbacks' rings, or the hook's */
}
