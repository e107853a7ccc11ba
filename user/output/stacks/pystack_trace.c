// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdlib.h>
#include <string.h>

#include "output/stacks/pystack_fold.h"
#include "output/stacks/pystack_trace.h"
#include "pipeline/pystack.h"
#include "pipeline/torch/torch_pairing.h"
#include "probes/torch_ops.h"
#include "util/name_table.h"

static void stack_args(struct obuf *f, const struct seg_output_ctx *c, uint32_t stack,
		       const char *id_key, const char *line_key)
{
	const struct pystack_entry *e;
	char label[1200];

	if (!c->pystacks || !stack || !(e = pystack_get(c->pystacks, stack)) || !e->n)
		return;
	pystack_frame_label(c->knames, &e->f[0], label, sizeof(label));
	ob_write(f, id_key, strlen(id_key));
	ob_u64(f, stack);
	ob_write(f, line_key, strlen(line_key));
	ob_json_string(f, label);
}

void pystack_trace_args(struct obuf *f, const struct seg_output_ctx *c, uint32_t stack)
{
	stack_args(f, c, stack, ",\"Python stack\":", ",\"Python line\":");
}

void pystack_trace_op_args(struct obuf *f, const struct seg_output_ctx *c,
			   const struct torch_call *op)
{
	if (op->seq1) {
		ob_lit(f, ",\"Sequence number\":");
		ob_u64(f, op->seq1 - 1);
		ob_lit(f, ",\"Fwd thread id\":"); /* torch's: 0 on a forward op */
		ob_u64(f, op->kind == TORCH_NODE ? op->fwd_tid : 0);
	}
	pystack_trace_args(f, c, op->stack);
	stack_args(f, c, op->fwd_stack, ",\"Python stack (forward)\":",
		   ",\"Python line (forward)\":");
}

struct emit_ctx {
	struct obuf *f;
	const struct seg_output_ctx *c;
};

static void emit(void *ctx, uint32_t tid, const struct pystack_derived *o)
{
	struct obuf *f = ((struct emit_ctx *)ctx)->f;
	const struct seg_output_ctx *c = ((struct emit_ctx *)ctx)->c;
	char func[512], file[1024];

	name_table_get(c->knames, o->func, func, sizeof(func));
	name_table_get(c->knames, o->file, file, sizeof(file));
	ob_lit(f, ",\n{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":");
	ob_lit(f, "\"");
	ob_json_chars(f, pystack_short_file(file));
	ob_printf(f, "(%d): ", o->firstline);
	ob_json_chars(f, func);
	ob_lit(f, "\",\"pid\":");
	ob_i64(f, c->seg->pid);
	ob_lit(f, ",\"tid\":");
	ob_u64(f, tid | PYSTACK_TRACK_BIT);
	ob_lit(f, ",\"ts\":");
	ob_us(f, o->start);
	ob_lit(f, ",\"dur\":");
	ob_us(f, o->end > o->start ? o->end - o->start : 0);
	ob_lit(f, ",\"args\":{\"derived\":\"" PYSTACK_DERIVED_NOTE "\"}}");
}

void pystack_derive(const struct seg_output_ctx *c, uint32_t tid, struct pystack_derived *open,
		    pystack_derived_fn fn, void *ctx)
{
	const struct segment *s = c->seg;
	uint32_t last_stack = 0, n = 0, i, k, common;
	const struct pystack_entry *e;
	size_t j;

	for (j = 0; j < s->nops; j++) {
		const struct torch_call *op = &s->ops[j];
		uint64_t end;

		if (op->tid != tid || !op->stack)
			continue;
		end = op->end_ns > op->start_ns ? op->end_ns : op->start_ns;
		e = op->stack == last_stack ? NULL : pystack_get(c->pystacks, op->stack);
		if (op->stack != last_stack && e) {
			/* frames outermost first: e->f[e->n - 1] ... e->f[0] */
			for (common = 0; common < n && common < e->n && common < TORCH_STACK_MAX; common++) {
				const struct pystack_frame *fr = &e->f[e->n - 1 - common];
				int32_t cl = common ? e->f[e->n - common].line : 0;

				if (open[common].func != fr->func || open[common].file != fr->file ||
				    open[common].firstline != fr->firstline || open[common].caller_line != cl)
					break;
			}
			for (k = n; k > common; k--)
				fn(ctx, tid, &open[k - 1]);
			n = common;
			for (i = common; i < e->n && i < TORCH_STACK_MAX; i++) {
				const struct pystack_frame *fr = &e->f[e->n - 1 - i];

				open[i].func = fr->func;
				open[i].file = fr->file;
				open[i].firstline = fr->firstline;
				open[i].caller_line = i ? e->f[e->n - i].line : 0;
				open[i].start = op->start_ns;
				open[i].end = end;
				n = i + 1;
			}
			last_stack = op->stack;
		}
		for (i = 0; i < n; i++)
			if (open[i].end < end)
				open[i].end = end;
	}
	for (k = n; k > 0; k--)
		fn(ctx, tid, &open[k - 1]);
}

size_t pystack_trace_tids(const struct segment *s, uint32_t *tids, size_t max)
{
	size_t nt = 0, i, k;

	for (i = 0; i < s->nops; i++) {
		if (!s->ops[i].stack)
			continue;
		for (k = 0; k < nt && tids[k] != s->ops[i].tid; k++)
			;
		if (k == nt && nt < max)
			tids[nt++] = s->ops[i].tid;
	}
	return nt;
}

void pystack_trace_slices(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	struct emit_ctx ec = { f, c };
	uint32_t tids[PYSTACK_THREADS_MAX];
	struct pystack_derived *open;
	size_t nt, k;
	char name[64];

	if (!c->pystacks)
		return;
	nt = pystack_trace_tids(s, tids, PYSTACK_THREADS_MAX);
	open = calloc(TORCH_STACK_MAX, sizeof(*open));
	if (!open)
		return;
	for (k = 0; k < nt; k++) {
		snprintf(name, sizeof(name), "Python of thread %u (derived)", tids[k]);
		ob_lit(f, ",\n{\"ph\":\"M\",\"pid\":");
		ob_i64(f, s->pid);
		ob_lit(f, ",\"tid\":");
		ob_u64(f, tids[k] | PYSTACK_TRACK_BIT);
		ob_lit(f, ",\"name\":\"thread_name\",\"args\":{\"name\":");
		ob_json_string(f, name);
		ob_lit(f, "}}");
		pystack_derive(c, tids[k], open, emit, &ec);
	}
	free(open);
}

static void put_stack(struct obuf *f, const struct seg_output_ctx *c, uint32_t id)
{
	const struct pystack_entry *e = pystack_get(c->pystacks, id);
	char buf[1024];
	uint32_t k;

	ob_lit(f, "\"");
	ob_u64(f, id);
	ob_lit(f, "\":[");
	for (k = 0; e && k < e->n; k++) {
		if (k)
			ob_char(f, ',');
		ob_lit(f, "{\"function\":");
		name_table_get(c->knames, e->f[k].func, buf, sizeof(buf));
		ob_json_string(f, buf);
		ob_lit(f, ",\"file\":");
		name_table_get(c->knames, e->f[k].file, buf, sizeof(buf));
		ob_json_string(f, buf);
		ob_lit(f, ",\"line\":");
		ob_i64(f, e->f[k].line);
		ob_lit(f, ",\"first_line\":");
		ob_i64(f, e->f[k].firstline);
		ob_lit(f, "}");
	}
	if (e && (e->flags & FVBPF_PYSTACK_CUT))
		ob_lit(f, ",{\"function\":\"[outer frames cut]\"}");
	ob_lit(f, "]");
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void pystack_trace_table(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	uint32_t *ids;
	size_t n = 0, i;

	if (!c->pystacks)
		return;
	ids = malloc((2 * s->nops + s->nslices + s->ncalls + 1) * sizeof(*ids));
	if (!ids)
		return;
	for (i = 0; i < s->nops; i++) {
		if (s->ops[i].stack)
			ids[n++] = s->ops[i].stack;
		if (s->ops[i].fwd_stack)
			ids[n++] = s->ops[i].fwd_stack;
	}
	for (i = 0; i < s->nslices; i++)
		if (s->slices[i].stack)
			ids[n++] = s->slices[i].stack;
	for (i = 0; i < s->ncalls; i++)
		if (s->calls[i].stack)
			ids[n++] = s->calls[i].stack;
	qsort(ids, n, sizeof(*ids), cmp_u32);
	ob_lit(f, ",\n\"pythonStacks\":{");
	for (i = 0; i < n; i++) {
		if (i && ids[i] == ids[i - 1])
			continue;
		if (i)
			ob_lit(f, ",\n");
		put_stack(f, c, ids[i]);
	}
	ob_lit(f, "}");
	free(ids);
}
