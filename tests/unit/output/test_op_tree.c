// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The op tree of a segment's threads (pipeline/torch/op_tree.c): parents from
 * entry order and depth per thread, none where the caller began before the
 * segment, none at TORCH_STACK_MAX, the same-name only-child merges; and
 * its three readers (memory columns, summary self time, folded stacks) on
 * a thread first seen at depth > 0.  The heap is perturbed (glibc's
 * M_PERTURB) so that an index read from never-written memory is huge.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "output/memory/mem_output.h"
#include "output/stacks/pystack_fold.h"
#include "output/summary/torch_summary.h"
#include "pipeline/torch/op_tree.h"
#include "pipeline/memory/seg_memory.h"
#include "pipeline/torch/torch_pairing.h"
#include "probes/torch_ops.h"
#include "unit.h"

#include "fvbpf_mem.h"

static struct torch_call op(uint32_t tid, uint16_t depth, uint64_t start, uint64_t end)
{
	struct torch_call o = { .start_ns = start, .end_ns = end, .tid = tid, .depth = depth,
				.kind = TORCH_OP, .name = 1 };

	return o;
}

static void test_first_seen_deep(void)
{
	/* thread 1's step; thread 2 inside a scope begun before the segment */
	struct torch_call ops[] = {
		op(1, 0, 0, 100),       /* 0: the step's scope */
		op(2, 1, 5, 20),        /* 1: its caller is older than the segment */
		op(2, 2, 6, 10),        /* 2: inside 1 */
		op(1, 1, 7, 30),        /* 3: inside 0 */
		op(2, 1, 25, 40),       /* 4: a sibling of 1, no parent either */
		op(2, 3, 26, 27),       /* 5: its depth-2 caller was not recorded */
	};
	struct segment seg = { .ops = ops, .nops = 6, .end_ns = 100 };
	struct op_tree t;

	CHECK_EQ(op_tree_build(&seg, &t), 0);
	CHECK_EQ(t.parent[0], -1);
	CHECK_EQ(t.parent[1], -1);
	CHECK_EQ(t.parent[2], 1);
	CHECK_EQ(t.parent[3], 0);
	CHECK_EQ(t.parent[4], -1);
	CHECK_EQ(t.parent[5], -1);
	CHECK_EQ(t.kids[0], 1);
	CHECK_EQ(t.kids[1], 1);
	CHECK_EQ(t.kids[4], 0);
	CHECK_EQ(t.too_deep, 0);
	op_tree_free(&t);
}

static void test_stale_chain(void)
{
	/* a call two levels below a new root: its caller was lost; the
	 * depth-1 call of the earlier chain has returned and is no parent */
	struct torch_call ops[] = {
		op(1, 0, 0, 10),
		op(1, 1, 1, 5),
		op(1, 0, 20, 30),
		op(1, 2, 22, 25),
		op(1, 1, 40, 50),       /* a caller that returned before it began */
	};
	struct segment seg = { .ops = ops, .nops = 5, .end_ns = 100 };
	struct op_tree t;

	CHECK_EQ(op_tree_build(&seg, &t), 0);
	CHECK_EQ(t.parent[1], 0);
	CHECK_EQ(t.parent[3], -1);
	CHECK_EQ(t.parent[4], -1);
	CHECK_EQ(t.kids[2], 0);
	op_tree_free(&t);
}

static void test_stack_max(void)
{
	struct torch_call *ops = calloc(TORCH_STACK_MAX + 3, sizeof(*ops));
	struct segment seg = { .ops = ops, .nops = TORCH_STACK_MAX + 3, .end_ns = 1000 };
	struct op_tree t;
	size_t i;

	/* one chain 0..TORCH_STACK_MAX+1 deep, then one more at TORCH_STACK_MAX */
	for (i = 0; i < TORCH_STACK_MAX + 2; i++)
		ops[i] = op(9, (uint16_t)i, i, 1000 - i);
	ops[i] = op(9, TORCH_STACK_MAX, 500, 501);
	ops[i - 1].depth = UINT16_MAX; /* a depth from the target's word */
	CHECK_EQ(op_tree_build(&seg, &t), 0);
	for (i = 1; i < TORCH_STACK_MAX; i++)
		if (t.parent[i] != (long)i - 1)
			break;
	CHECK_EQ(i, TORCH_STACK_MAX);
	CHECK_EQ(t.parent[TORCH_STACK_MAX], -1);
	CHECK_EQ(t.parent[TORCH_STACK_MAX + 1], -1);
	CHECK_EQ(t.parent[TORCH_STACK_MAX + 2], -1);
	CHECK_EQ(t.too_deep, 3);
	CHECK_EQ(t.kids[TORCH_STACK_MAX - 1], 0);
	op_tree_free(&t);
	free(ops);
}

static void test_merges(void)
{
	struct torch_call ops[] = {
		op(1, 0, 0, 100),       /* 0: div */
		op(1, 1, 1, 50),        /* 1: div, its only child: merged */
		op(1, 2, 2, 10),        /* 2: mul */
		op(1, 0, 200, 300),     /* 3: div */
		op(1, 1, 201, 210),     /* 4: div, one of two children: kept */
		op(1, 1, 220, 230),     /* 5: div */
		op(1, 0, 400, 500),     /* 6: div (op) */
		op(1, 1, 401, 410),     /* 7: div (node): another kind, kept */
	};
	struct segment seg = { .ops = ops, .nops = 8, .end_ns = 1000 };
	struct op_tree t;

	ops[2].name = 2;
	ops[7].kind = TORCH_NODE;
	CHECK_EQ(op_tree_build(&seg, &t), 0);
	CHECK(!t.merged[0] && t.merged[1] && !t.merged[2]);
	CHECK(!t.merged[4] && !t.merged[5] && !t.merged[7]);
	CHECK_EQ(op_tree_resolve(&t, 2), 2);
	CHECK_EQ(op_tree_resolve(&t, 1), 0);
	CHECK_EQ(op_tree_resolve(&t, t.parent[2]), 0);
	CHECK_EQ(op_tree_resolve(&t, -1), -1);
	CHECK_EQ(t.kids[3], 2);
	op_tree_free(&t);
}

/* Threads interleaved, thousands of them: each keeps its own chain. */
static void test_many_threads(void)
{
	size_t nth = 5000, i;
	struct torch_call *ops = calloc(nth * 2, sizeof(*ops));
	struct segment seg = { .ops = ops, .nops = nth * 2, .end_ns = 100000 };
	struct op_tree t;
	int bad = 0;

	for (i = 0; i < nth; i++) {
		ops[i] = op((uint32_t)i, 0, i, 100000);
		ops[nth + i] = op((uint32_t)i, 1, nth + i, nth + i + 1);
	}
	CHECK_EQ(op_tree_build(&seg, &t), 0);
	for (i = 0; i < nth; i++)
		bad += t.parent[i] != -1 || t.parent[nth + i] != (long)i || t.kids[i] != 1;
	CHECK_EQ(bad, 0);
	op_tree_free(&t);
	free(ops);
}


static int mem_row(void *ctx, const char *name, const char *kind, const struct mem_usage *u)
{
	(void)kind;
	if (!strcmp(name, "step"))
		*(int64_t *)ctx = u->cpu;
	return 0;
}

static int sum_row(void *ctx, const char *name, const char *kind, uint64_t cpu, uint64_t self,
		   uint64_t dev, uint64_t self_dev, const struct torch_row_shapes *sh)
{
	(void)kind, (void)cpu, (void)dev, (void)self_dev, (void)sh;
	if (!strcmp(name, "step"))
		*(uint64_t *)ctx = self;
	return 0;
}

/*
 * The three readers on a side thread first seen at depth 1: its
 * allocation is charged to none of the step's calls, its time is not
 * taken from the step's self time.
 */
static void test_readers(void)
{
	struct torch_call ops[] = {
		op(1, 0, 0, 100),       /* step, thread 1 */
		op(2, 1, 10, 40),       /* aten::empty on thread 2, in an older scope */
		op(1, 1, 50, 60),       /* aten::empty in the step */
	};
	struct mem_rec recs[] = {
		{ .ts_ns = 20, .addr = 0x10, .bytes = 4096, .op = 1, .tid = 2 },
		{ .ts_ns = 55, .addr = 0x20, .bytes = 64, .op = 2, .tid = 1 },
	};
	struct seg_memory m = { .recs = recs, .n = 2 };
	struct segment seg = { .ops = ops, .nops = 3, .end_ns = 100, .memory = &m };
	struct name_table names;
	uint64_t self[3], self_ns = 0;
	uint32_t sid[3];
	int64_t cpu = -1;
	struct op_tree t;

	name_table_init(&names);
	ops[0].name = name_table_intern(&names, "step");
	ops[0].kind = TORCH_SCOPE;
	ops[1].name = ops[2].name = name_table_intern(&names, "aten::empty");
	recs[0].dev_type = recs[1].dev_type = FVBPF_DEV_CPU;
	CHECK_EQ(mem_summary_rows(&seg, &names, mem_row, &cpu), 0);
	CHECK_EQ(cpu, 64);
	CHECK_EQ(torch_summary_rows(&seg, &names, sum_row, &self_ns, &(uint64_t){ 0 }), 0);
	CHECK_EQ(self_ns, 90);
	CHECK_EQ(op_tree_build(&seg, &t), 0);
	CHECK_EQ(pystack_op_walk(&seg, &t, self, sid), 0);
	CHECK_EQ(self[0], 90);
	CHECK_EQ(self[1], 30);
	op_tree_free(&t);
	name_table_free(&names);
}

int main(void)
{
	/* fresh heap bytes 0x01, freed ones 0xfe: junk is a huge index */
	mallopt(M_PERTURB, 254);
	RUN(test_first_seen_deep);
	RUN(test_stale_chain);
	RUN(test_stack_max);
	RUN(test_merges);
	RUN(test_many_threads);
	RUN(test_readers);
	UNIT_DONE();
}
