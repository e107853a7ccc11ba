// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A target's probes on the libraries it maps, looked for at attach and
 * every second after: PyTorch's operators (and --with-stack's interpreter,
 * --profile-memory's allocator), CUDA and NCCL calls.
 */
#include <bpf/bpf.h>

#include "attach/target.h"
#include "attach/pystack_attach.h"
#include "probes/bpf_setup.h"
#include "probes/mem_probes.h"
#include "probes/torch_plans.h"
#include "proc/elf/symbolizer.h"
#include "util/log.h"
#include "probes/cuda_probes.h"
#include "probes/dl_probes.h"
#include "proc/proc_children.h"
#include "proc/proc_info.h"

/* PyTorch's operators, nodes and scopes, once libtorch_cpu is mapped. */
static void target_scan_torch(struct session *s, struct session_target *t)
{
	struct torch_progs pr = {
		.call_fd = bpf_setup_prog_fd(s->skel, FVBPF_PROG_TORCH_CALL),
		.enter_fd = bpf_setup_prog_fd(s->skel, FVBPF_PROG_SCOPE_ENTER),
		.eval_fd = bpf_setup_prog_fd(s->skel, FVBPF_PROG_TORCH_EVAL),
		.vtables_fd = bpf_setup_map_fd(s->skel, FVBPF_MAP_TORCH_VTABLES),
		.plans_fd = s->record_shapes || s->with_flops ?
			    bpf_setup_map_fd(s->skel, FVBPF_MAP_TORCH_PLANS) : -1,
		.end_prog = bpf_setup_prog(s->skel, FVBPF_PROG_SCOPE_END),
	};

	torch_probes_scan(t->torchp, s->torch, &pr);
	torch_probes_note_libs(t->torchp);
}

/* A collective's tensors are read by the layout the shapes use, while it
 * holds (installed and not refused). */
static void coll_layout_sync(struct session *s, struct session_target *t)
{
	bool want = t->torchp->lay_state == LAYOUT_CHECKING || t->torchp->lay_state == LAYOUT_TRUSTED;
	struct fvbpf_coll_layout cl = { 0 };
	uint32_t slot = (uint32_t)(t - s->targets);

	/* a slot's last process may have left its layout there: cleared once */
	if ((want == t->coll_layout_set && t->coll_layout_init) || !t->cuda->gloo)
		return;
	t->coll_layout_init = true;
	if (want) {
		cl.ok = 1;
		cl.numel_at = t->torchp->lay.numel_at;
		cl.dtype_at = t->torchp->lay.dtype_at;
		cl.vptr_dense = t->torchp->lay.vptr_dense;
	}
	if (!bpf_map_update_elem(bpf_setup_map_fd(s->skel, FVBPF_MAP_COLL_LAYOUT), &slot, &cl, BPF_ANY))
		t->coll_layout_set = want;
}

void target_shapes_tick(struct session *s, struct session_target *t)
{
	coll_layout_sync(s, t);
	if (!t->torchp->plans_job)
		return;
	if (t->finished)
		torch_plans_stop(t->torchp, "the process ended before its torch build was measured "
				 "(the measurement was killed)");
	else
		torch_plans_poll(t->torchp, s->torch);
	coll_layout_sync(s, t); /* in the tick it was installed: before the cut opens */
}

/* DataLoader workers (issue 38): no flag, any CPython process.  Where the
 * interpreter has no symbols for _pickle, forked children are said to be
 * untraced rather than left out silently. */
static void target_scan_dl(struct session *s, struct session_target *t)
{
	dl_probes_scan(t->dlp, t->proc->pid, (unsigned int)(t - s->targets),
		       bpf_setup_prog_fd(s->skel, FVBPF_PROG_DL_PICKLE));
	if (t->dl_warned || dl_probes_attached(t->dlp) || !dl_probes_unprobed(t->dlp)[0] ||
	    proc_forked_children(t->proc->pid) <= 0)
		return;
	t->dl_warned = true;
	log_warn("PID %d: its forked children (DataLoader workers) are not traced: %s has no "
		 "symbol table for CPython's _pickle; use a Python built with its symbols "
		 "(pyenv, python.org, conda)", t->proc->pid, dl_probes_unprobed(t->dlp));
}

/* Attach to CUDA/NCCL functions mapped since the last look. */
void target_scan_cuda(struct session *s, struct session_target *t, bool first)
{
	int n;

	if (first)
		cuda_probes_init(t->cuda, t->proc->pid, (unsigned int)(t - s->targets),
				 bpf_setup_prog_fd(s->skel, FVBPF_PROG_API_CALL));
	if (s->torch_ops)
		target_scan_torch(s, t);
	pystack_attach_target(s, t); /* --with-stack: once, after torch's probes */
	/* with --no-torch-ops too: records then belong to no operator */
	if (s->profile_memory)
		mem_probes_scan(t->memp, bpf_setup_prog_fd(s->skel, FVBPF_PROG_MEM_CALL));
	target_scan_dl(s, t);
	n = cuda_probes_scan(t->cuda);
	if (n > 0)
		symbolizer_forget_pid(s->sym, t->proc->pid); /* new mappings */
	if (first && !t->cuda->attached && !t->cuda->warned_none) {
		t->cuda->warned_none = true;
		log_warn("PID %d (%s) has no CUDA library mapped: regions are traced, and fvbpf "
			 "looks again every second", t->proc->pid, t->proc->comm);
	}
}
