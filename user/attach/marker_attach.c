// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The marker library's probe functions: which BPF program each gets, and
 * putting them in.  A library that has the _ts region probes hands them its
 * own clock reading, cheaper than BPF's, when the control page asks for it
 * under this attach's epoch; under another (an fvbpf from before them) it
 * calls the plain pair, so either side may be the older one.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>

#include "attach/marker_attach.h"
#include "probes/bpf_setup.h"
#include "probes/uprobe_multi.h"
#include "proc/control/control_page.h"

/* The probe functions, in attach order: the sync probe first and the
 * begin probe last, so that once a begin can be seen, its end and the
 * thread's sync can be too. */
static const enum marker_sym marker_probes[] = {
	MARKER_AGENT_STATUS, MARKER_GPU_BATCH, MARKER_CORRELATION,
	MARKER_SYNC, MARKER_END, MARKER_BEGIN,
};

static bool marker_ts_wanted(const struct marker_lib *m)
{
#ifdef FVBPF_TEST_HOOKS
	/* tests: behave as an fvbpf from before the _ts probes */
	if (getenv("FVBPF_TEST_OLD_LOADER"))
		return false;
#endif
	return m->syms[MARKER_BEGIN_TS].found && m->syms[MARKER_END_TS].found;
}

int marker_ts_choose(struct session_target *t)
{
	t->marker_ts = marker_ts_wanted(&t->proc->marker);
	return control_page_set_marker_ts(t->ctl, t->marker_ts ? t->epoch : 0) ? -1 : 0;
}

/* The region probe the library calls for @sym under this attach. */
static enum marker_sym marker_sym_called(const struct session_target *t, enum marker_sym sym)
{
	if (t->marker_ts && sym == MARKER_BEGIN)
		return MARKER_BEGIN_TS;
	if (t->marker_ts && sym == MARKER_END)
		return MARKER_END_TS;
	return sym;
}

static struct bpf_program *marker_prog(struct session *s, enum marker_sym sym)
{
	switch (sym) {
	case MARKER_BEGIN: return bpf_setup_prog(s->skel, FVBPF_PROG_REGION_BEGIN);
	case MARKER_END: return bpf_setup_prog(s->skel, FVBPF_PROG_REGION_END);
	case MARKER_BEGIN_TS: return bpf_setup_prog(s->skel, FVBPF_PROG_REGION_BEGIN_TS);
	case MARKER_END_TS: return bpf_setup_prog(s->skel, FVBPF_PROG_REGION_END_TS);
	case MARKER_SYNC: return bpf_setup_prog(s->skel, FVBPF_PROG_THREAD_SYNC);
	case MARKER_CORRELATION: return bpf_setup_prog(s->skel, FVBPF_PROG_CORRELATION);
	case MARKER_GPU_BATCH: return bpf_setup_prog(s->skel, FVBPF_PROG_GPU_BATCH);
	case MARKER_AGENT_STATUS: return bpf_setup_prog(s->skel, FVBPF_PROG_AGENT_STATUS);
	default: return NULL;
	}
}

int marker_probes_attach(struct session *s, struct session_target *t, uint32_t key)
{
	const struct marker_lib *m = &t->proc->marker;
	/* The cookie takes BPF straight to this process's slot. */
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = m->syms[MARKER_SEMAPHORE].file_off,
		    .bpf_cookie = key);
	enum marker_sym sym;
	size_t i;
	int err;

	for (i = 0; i < sizeof(marker_probes) / sizeof(marker_probes[0]); i++) {
		sym = marker_sym_called(t, marker_probes[i]);
		if (s->marker_multi) {
			err = uprobe_multi_attach_one(bpf_program__fd(marker_prog(s, sym)),
						      m->open_path, t->proc->pid, m->syms[sym].file_off,
						      m->syms[MARKER_SEMAPHORE].file_off, key);
			if (err < 0) {
				errno = -err;
				return -1;
			}
			t->marker_fds[sym] = err;
			continue;
		}
		t->links[sym] = bpf_program__attach_uprobe_opts(marker_prog(s, sym), t->proc->pid,
								m->open_path, m->syms[sym].file_off, &uo);
		if (!t->links[sym])
			return -1;
	}
	return 0;
}
