// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/pftrace/pftrace_fields.h"
#include "output/pftrace/pftrace_pystack.h"
#include "output/stacks/pystack_fold.h"
#include "output/stacks/pystack_trace.h"
#include "pipeline/pystack.h"
#include "pipeline/torch/torch_pairing.h"
#include "util/name_table.h"
#include "util/text_sanitize.h"

/* Debug annotation names, interned per sequence by these iids. */
static const char *const da_names[] = { NULL, "Python stack", "Python line", "derived" };
enum { DA_STACK = 1, DA_LINE, DA_DERIVED };

int pf_py_tracks(struct pf *p, const struct seg_output_ctx *c)
{
	if (!c->pystacks)
		return 0;
	p->py = malloc(PYSTACK_THREADS_MAX * sizeof(*p->py));
	if (!p->py)
		return -ENOMEM;
	p->npy = pystack_trace_tids(c->seg, p->py, PYSTACK_THREADS_MAX);
	return 0;
}

struct derive_ctx {
	struct pf *p;
	const struct seg_output_ctx *c;
	uint32_t track;
	uint32_t note;       /* the "derived" string's iid */
};

/* As pystack_trace.c's emit(): "file.py(first_line): function". */
static void derived_slice(void *ctx, uint32_t tid, const struct pystack_derived *d)
{
	struct derive_ctx *x = ctx;
	char func[512], file[1024], name[1600];

	(void)tid;
	name_table_get(x->c->knames, d->func, func, sizeof(func));
	name_table_get(x->c->knames, d->file, file, sizeof(file));
	snprintf(name, sizeof(name), "%s(%d): %s", pystack_short_file(file), d->firstline, func);
	pf_add_slice(x->p, x->track, d->start, d->end > d->start ? d->end - d->start : 0, name,
		     "python_function", 0, 0);
	if (x->p->nsl && !x->p->err)
		x->p->sl[x->p->nsl - 1].pyline = x->note; /* marks it derived: see annotations */
}

void pf_py_collect(struct pf *p, const struct seg_output_ctx *c)
{
	struct derive_ctx x = { p, c, 0, 0 };
	struct pystack_derived *open;
	size_t k;

	if (!p->npy)
		return;
	open = calloc(TORCH_STACK_MAX, sizeof(*open));
	x.note = strtab_intern(&p->lines, PYSTACK_DERIVED_NOTE);
	if (!open || !x.note) {
		p->err = -ENOMEM;
		free(open);
		return;
	}
	for (k = 0; k < p->npy && !p->err; k++) {
		x.track = (uint32_t)(1 + p->ncpu + p->ngpu + k);
		pystack_derive(c, p->py[k], open, derived_slice, &x);
	}
	free(open);
}

void pf_py_mark(struct pf *p, const struct seg_output_ctx *c, uint32_t stack)
{
	const struct pystack_entry *e;
	struct pf_slice *sl;
	char label[1200];

	if (!c->pystacks || !stack || p->err || !p->nsl)
		return;
	e = pystack_get(c->pystacks, stack);
	if (!e || !e->n)
		return; /* as the JSON trace: no frames, no args */
	sl = &p->sl[p->nsl - 1];
	pystack_frame_label(c->knames, &e->f[0], label, sizeof(label));
	sl->stack = stack;
	sl->pyline = strtab_intern(&p->lines, label);
	if (!sl->pyline)
		p->err = -ENOMEM;
}

bool pf_py_needs_interning(const struct pf *p, const struct pf_seq *q, const struct pf_slice *sl)
{
	(void)p;
	return sl->pyline && (!q->da_named || !q->lined[sl->pyline]);
}

void pf_py_intern(struct pf *p, struct pf_seq *q, const struct pf_slice *sl)
{
	size_t m, k;

	if (!sl->pyline)
		return;
	for (k = 1; !q->da_named && k < sizeof(da_names) / sizeof(da_names[0]); k++) {
		m = pb_begin(&p->b, ID_DA_NAMES);
		pb_uint(&p->b, IID, k);
		pb_string(&p->b, IID_NAME, da_names[k]);
		pb_end(&p->b, m);
	}
	q->da_named = true;
	pf_intern_once(p, ID_DA_STRINGS, sl->pyline, &p->lines, q->lined);
}

void pf_py_annotations(struct pf *p, const struct pf_slice *sl)
{
	size_t m;

	if (!sl->pyline)
		return;
	if (sl->stack) {
		m = pb_begin(&p->b, TE_DEBUG_ANNOTATIONS);
		pb_uint(&p->b, DA_NAME_IID, DA_STACK);
		pb_int(&p->b, DA_INT, sl->stack);
		pb_end(&p->b, m);
	}
	m = pb_begin(&p->b, TE_DEBUG_ANNOTATIONS);
	pb_uint(&p->b, DA_NAME_IID, sl->stack ? DA_LINE : DA_DERIVED);
	pb_uint(&p->b, DA_STRING_IID, sl->pyline);
	pb_end(&p->b, m);
}

void pf_py_descriptors(struct pf *p, uint64_t proc_uuid)
{
	char name[64];
	size_t k, m;

	for (k = 0; k < p->npy; k++) {
		snprintf(name, sizeof(name), "Python of thread %u (derived)", p->py[k]);
		pb_uint(&p->b, TP_SEQ_ID, 1);
		m = pb_begin(&p->b, TP_TRACK_DESCRIPTOR);
		pb_uint(&p->b, TD_UUID, track_uuid(1 + p->ncpu + p->ngpu + k));
		pb_uint(&p->b, TD_PARENT, proc_uuid);
		pb_string(&p->b, TD_NAME, name);
		pb_end(&p->b, m);
		pf_put_packet(p);
	}
}
