// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Summary rows of a segment's torch calls, as torch's key_averages counts
 * them: self CPU is the time outside child calls (torch calls and CUDA
 * calls), device time is the GPU time of kernels launched inside (device_us)
 * or inside but not in a child (self_device_us), and a child with its
 * parent's name that is the parent's only child is merged into it
 * (profiler_util's _remove_dup_nodes: aten::div calling aten::div).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked_math.h"
#include "probes/torch_ops.h"
#include "pipeline/torch/op_tree.h"
#include "pipeline/torch/torch_shapes.h"
#include "output/summary/torch_summary.h"

#define ATTRIBUTION_MAX_WORK 100000000ull /* calls x ops scanned, at most */

struct tree {
	struct op_tree ops;     /* parents, children, merges */
	uint64_t *child_ns, *dev_self, *dev_total;
	uint32_t *stack;        /* the call's Python stack, else its caller's */
	long *call_op;          /* innermost torch call around each CUDA call */
};

static uint64_t op_end(const struct segment *seg, const struct torch_call *o)
{
	if (o->end_ns)
		return o->end_ns;
	return seg->end_ns > o->start_ns ? seg->end_ns : o->start_ns;
}

/* The innermost torch call on the call's thread that holds it. */
static long enclosing(const struct segment *seg, const struct api_call *c)
{
	long best = -1;
	size_t i;

	for (i = 0; i < seg->nops; i++) {
		const struct torch_call *o = &seg->ops[i];

		if (o->tid != c->tid || o->start_ns > c->start_ns || op_end(seg, o) < c->end_ns)
			continue;
		if (best < 0 || o->depth > seg->ops[best].depth)
			best = (long)i;
	}
	return best;
}

static void attribute_calls(const struct segment *seg, struct tree *t, uint64_t *skipped)
{
	size_t i;
	long o;

	if ((unsigned long long)seg->ncalls * seg->nops > ATTRIBUTION_MAX_WORK) {
		*skipped = seg->ncalls; /* said in the summary, never silent */
		return;
	}
	for (i = 0; i < seg->ncalls; i++) {
		t->call_op[i] = -1;
		if (seg->calls[i].depth)
			continue; /* a driver call inside a runtime call: in its parent */
		o = op_tree_resolve(&t->ops, enclosing(seg, &seg->calls[i]));
		t->call_op[i] = o;
		if (o >= 0)
			t->child_ns[o] = sat_add_u64(t->child_ns[o],
						     span_u64(seg->calls[i].start_ns, seg->calls[i].end_ns));
	}
	for (i = 0; i < seg->ngpu; i++) {
		const struct gpu_activity *a = &seg->gpu[i];
		uint64_t dur = span_u64(a->start, a->end);

		if (a->kind == FVBPF_GPU_SYNC || a->call < 0 || (size_t)a->call >= seg->ncalls)
			continue;
		o = t->call_op[a->call];
		if (o < 0)
			continue;
		t->dev_self[o] = sat_add_u64(t->dev_self[o], dur);
		for (; o >= 0; o = op_tree_resolve(&t->ops, t->ops.parent[o]))
			t->dev_total[o] = sat_add_u64(t->dev_total[o], dur);
	}
}

static int build_tree(const struct segment *seg, struct tree *t, uint64_t *skipped)
{
	size_t n = seg->nops ? seg->nops : 1, i;
	const long *parent;
	long p;

	if (op_tree_build(seg, &t->ops))
		return -ENOMEM;
	parent = t->ops.parent;
	t->child_ns = calloc(n, sizeof(*t->child_ns));
	t->dev_self = calloc(n, sizeof(*t->dev_self));
	t->dev_total = calloc(n, sizeof(*t->dev_total));
	t->stack = calloc(n, sizeof(*t->stack));
	t->call_op = calloc(seg->ncalls ? seg->ncalls : 1, sizeof(*t->call_op));
	if (!t->child_ns || !t->dev_self || !t->dev_total || !t->stack || !t->call_op)
		return -ENOMEM;
	/* Entry order: a parent's stack is known before its children's. */
	for (i = 0; i < seg->nops; i++)
		t->stack[i] = seg->ops[i].stack ? seg->ops[i].stack :
			      parent[i] >= 0 ? t->stack[parent[i]] : 0;
	for (i = 0; i < seg->nops; i++) {
		if (t->ops.merged[i] || (p = op_tree_resolve(&t->ops, parent[i])) < 0)
			continue;
		t->child_ns[p] = sat_add_u64(t->child_ns[p],
					     span_u64(seg->ops[i].start_ns, op_end(seg, &seg->ops[i])));
	}
	attribute_calls(seg, t, skipped);
	return 0;
}

static void free_tree(struct tree *t)
{
	op_tree_free(&t->ops);
	free(t->child_ns);
	free(t->dev_self);
	free(t->dev_total);
	free(t->stack);
	free(t->call_op);
}

/* The call's shapes record, split, in @buf (TORCH_SHAPES_MAX bytes); a
 * scope and evaluate_function have no inputs: [] as torch shows them. */
static void row_shapes(const struct torch_call *o, const char *name, struct name_table *names,
		       char *buf, struct torch_row_shapes *sh)
{
	struct torch_shapes_view v;

	memset(sh, 0, sizeof(*sh));
	sh->key = "";
	if (!o->shapes || !buf) {
		if (o->kind == TORCH_SCOPE ||
		    (o->kind == TORCH_NODE && !strncmp(name, TORCH_EVAL_PREFIX, strlen(TORCH_EVAL_PREFIX))))
			sh->key = "[]";
		return;
	}
	name_table_get(names, o->shapes, buf, TORCH_SHAPES_MAX);
	if (torch_shapes_split(buf, &v))
		return;
	buf[v.key_len] = '\0'; /* the key is the first field */
	sh->key = buf;
	sh->flops = v.flops;
	sh->extra_flops = v.extra;
}

int torch_summary_rows(const struct segment *seg, struct name_table *names, torch_row_fn fn,
		       void *ctx, uint64_t *skipped)
{
	struct torch_row_shapes sh;
	struct tree t = { 0 };
	char name[TORCH_NAME_MAX], *rec = malloc(TORCH_SHAPES_MAX);
	uint64_t dur;
	size_t i;
	int err;

	*skipped = 0;
	err = build_tree(seg, &t, skipped);
	for (i = 0; !err && i < seg->nops; i++) {
		if (t.ops.merged[i])
			continue;
		dur = span_u64(seg->ops[i].start_ns, op_end(seg, &seg->ops[i]));
		name_table_get(names, seg->ops[i].name, name, sizeof(name));
		row_shapes(&seg->ops[i], name, names, rec, &sh);
		sh.stack = t.stack[i];
		err = fn(ctx, name, seg->ops[i].kind == TORCH_SCOPE ? "user_annotation" : "cpu_op", dur,
			 t.child_ns[i] < dur ? dur - t.child_ns[i] : 0, t.dev_total[i], t.dev_self[i],
			 &sh);
	}
	free(rec);
	free_tree(&t);
	return err;
}
