// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach/pystack_attach.h"
#include "pipeline/pystack.h"
#include "probes/bpf_setup.h"
#include "probes/cuda_api.h"
#include "proc/control/callback_channel.h"
#include "util/log.h"
#include "pipeline/torch/callback_ops.h"

bool pystack_wanted(const struct attach_opts *o)
{
	const char *v = getenv("FASTVIDEO_TORCH_PROFILER_WITH_STACK");

	if (o->with_stack)
		return true;
	return v && *v && strcmp(v, "0") && strcasecmp(v, "false") && strcasecmp(v, "no");
}

int pystack_session_start(struct session *s, const struct attach_opts *o)
{
	if (!pystack_wanted(o)) {
		if (!o->group_by_stack)
			return 0;
		log_error("--group-by-stack needs Python stacks: add --with-stack (or set "
			  "FASTVIDEO_TORCH_PROFILER_WITH_STACK=1)");
		return -EINVAL;
	}
	s->pystacks = malloc(sizeof(*s->pystacks));
	if (!s->pystacks) {
		log_error("out of memory");
		return -ENOMEM;
	}
	pystack_table_init(s->pystacks, &s->knames);
	s->pystacks->group_n = o->group_by_stack ? o->group_by_stack : 1;
	s->pystacks->summary_n = o->group_by_stack; /* absent: the summaries stay as they were */
	return 0;
}

void pystack_session_free(struct session *s)
{
	if (!s->pystacks)
		return;
	pystack_table_free(s->pystacks);
	free(s->pystacks);
	s->pystacks = NULL;
}

static int put_cfg(struct session *s, struct session_target *t, unsigned int slot)
{
	const struct py_layout *L = t->pystk->rt.lay;
	struct fvbpf_py_cfg cfg = {
		.tgid = (uint32_t)t->proc->pid, .depth = FVBPF_PY_DEPTH_MAX,
		.interp_head = t->pystk->rt.runtime + L->rt_interp_head,
		.interp_threads = L->interp_threads, .ts_next = L->ts_next,
		.ts_native_tid = L->ts_native_tid, .ts_cframe = L->ts_cframe,
		.cf_current = L->cf_current, .fr_code = L->fr_code - L->fr_base,
		.fr_previous = L->fr_previous - L->fr_base, .fr_instr = L->fr_instr - L->fr_base,
		.fr_owner = L->fr_owner - L->fr_base, .owner_cstack = L->owner_cstack,
		.fr_base = L->fr_base, .mode = L->frame_object ? FVBPF_PY_FRAME_OBJECT : 0,
	};
	int fd = bpf_setup_map_fd(s->skel, FVBPF_MAP_PY_CFG);

	/* BPF picks the fields out of one FVBPF_PY_WINDOW-byte read at fr_base */
	if (L->fr_code < L->fr_base || L->fr_previous < L->fr_base || L->fr_instr < L->fr_base ||
	    L->fr_owner < L->fr_base || (cfg.fr_code | cfg.fr_previous | cfg.fr_instr) & 7 ||
	    cfg.fr_code >= FVBPF_PY_WINDOW || cfg.fr_previous >= FVBPF_PY_WINDOW ||
	    cfg.fr_instr >= FVBPF_PY_WINDOW || cfg.fr_owner >= FVBPF_PY_WINDOW)
		return -EPROTO;
	if (fd < 0)
		return fd;
	if (bpf_map_update_elem(fd, &slot, &cfg, BPF_ANY))
		return -errno;
	/* operators through the callbacks: the library walks its own frames
	 * with the same offsets (else BPF does, through its probe) */
#ifdef FVBPF_TEST_HOOKS
	/* tests: a layout whose code objects are not code objects, which the
	 * library's check must refuse (BPF keeps the right one) */
	if (getenv("FVBPF_TEST_BAD_PY_CFG"))
		cfg.fr_code = cfg.fr_previous;
#endif
	/* not 3.10's PyFrameObjects, which the library's walk does not know:
	 * it calls its probe and BPF walks them */
	if (t->ops == OPS_CALLBACKS && !cfg.mode && callback_channel_py(t->ctl, &cfg, sizeof(cfg)))
		log_warn("pid %d: --with-stack: the library cannot be told where the frames are; "
			 "BPF walks them", t->proc->pid);
	return 0;
}

/* Launches get stacks: the loader's table says which calls launch. */
static void log_found(pid_t pid, const struct py_runtime *r)
{
	char micro[16] = "";

	/* 3.10 has no Py_Version: its name says 3.10, not which micro (a
	 * Py_Version's low byte, the release level, is never 0) */
	if (r->version & 0xff)
		snprintf(micro, sizeof(micro), ".%lu", (r->version >> 8) & 0xff);
	log_info("pid %d: --with-stack: CPython %lu.%lu%s in %s, _PyRuntime at 0x%llx", pid,
		 (r->version >> 24) & 0xff, (r->version >> 16) & 0xff, micro, r->path,
		 (unsigned long long)r->runtime);
}

static void put_apis(struct session *s)
{
	int fd = bpf_setup_map_fd(s->skel, FVBPF_MAP_PY_APIS);
	uint8_t one = 1;
	uint32_t id;

	if (s->pystacks->apis_set || fd < 0)
		return;
	s->pystacks->apis_set = true;
	for (id = 0; id < FVBPF_MAX_APIS; id++)
		if (cuda_api_is_launch(id) && bpf_map_update_elem(fd, &id, &one, BPF_ANY))
			log_warn("--with-stack: launches will have no stacks: %s", strerror(errno));
}

void pystack_attach_target(struct session *s, struct session_target *t)
{
	unsigned int slot = (unsigned int)(t - s->targets);
	struct py_runtime *r;
	int err;

	if (!s->pystacks || t->pystk)
		return;
	t->pystk = calloc(1, sizeof(*t->pystk));
	if (!t->pystk)
		return;
	err = pystack_target_init(t->pystk, t->proc->pid);
	r = &t->pystk->rt;
	if (!err)
		err = put_cfg(s, t, slot);
	if (!err) {
		put_apis(s);
		bpf_setup_py_active(s->skel);
	}
	t->pystk->status = err;
	if (err == -ENOENT)
		log_warn("pid %d: --with-stack: no CPython (libpython3*/python3* exporting "
			 "_PyRuntime) is mapped; its operators get no Python stacks", t->proc->pid);
	else if (err == -ENOTSUP)
		log_warn("pid %d: --with-stack: CPython %lu.%lu in %s is not supported (3.10 to 3.13 are); "
			 "its operators get no Python stacks", t->proc->pid, (r->version >> 24) & 0xff,
			 (r->version >> 16) & 0xff, r->path);
	else if (err)
		log_warn("pid %d: --with-stack: CPython in %s does not look as fvbpf expects "
			 "(%s); its operators get no Python stacks", t->proc->pid, r->path,
			 strerror(-err));
	else
		log_found(t->proc->pid, r);
}

void pystack_target_release(struct session *s, struct session_target *t)
{
	unsigned int slot = (unsigned int)(t - s->targets);
	struct fvbpf_py_cfg zero = { 0 };
	int fd;

	if (!t->pystk)
		return;
	if (!t->pystk->status) {
		const struct pystack_counts *n = &t->pystk->n;
		struct fvbpf_counters bc = { 0 };

		bpf_counters_read(s->skel, &bc);
		log_info("pid %d: --with-stack: %llu stack records, %llu given to their operator, "
			 "launch or region begin, %llu operators inside the last walked one (%llu "
			 "without its stack), %llu "
			 "distinct stacks; %llu backward nodes given their forward op's stack, %llu "
			 "without (not seen, older than the pairing keeps, or without a stack), "
			 "%llu forward ops not kept (out of memory); %llu frames without a line, %llu bad code objects, %llu "
			 "line tables too big, %llu unreadable, %llu refused (bounds, --max-memory); walked in the "
			 "process by libfvbpf.so: %llu; BPF (all "
			 "processes): %llu stacks, %llu lost to a full ring, %llu thread lookups "
			 "without a Python thread, %llu unreadable", t->proc->pid,
			 (unsigned long long)n->records,
			 (unsigned long long)n->matched, (unsigned long long)n->same,
			 (unsigned long long)n->same_lost, (unsigned long long)n->stacks,
			 (unsigned long long)t->pystk->fwd.linked,
			 (unsigned long long)t->pystk->fwd.unlinked,
			 (unsigned long long)t->pystk->fwd.no_memory,
			 (unsigned long long)n->frames_unknown, (unsigned long long)n->bad_code,
			 (unsigned long long)n->huge_tables, (unsigned long long)n->unreadable,
			 (unsigned long long)n->refused, (unsigned long long)t->fast->stacks,
			 (unsigned long long)bc.py_stacks,
			 (unsigned long long)bc.py_drops, (unsigned long long)bc.py_no_thread,
			 (unsigned long long)bc.py_fault);
	}
	fd = bpf_setup_map_fd(s->skel, FVBPF_MAP_PY_CFG);
	if (fd >= 0 && !t->pystk->status)
		bpf_map_update_elem(fd, &slot, &zero, BPF_ANY);
	t->pystk_refused = t->pystk->n.refused; /* the manifest's, after the detach */
	pystack_target_free(t->pystk);
	free(t->pystk);
	t->pystk = NULL;
}
