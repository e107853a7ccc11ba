// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Backward nodes to their forward op's Python stack (--with-stack, the
 * callbacks): the matching by (thread, sequence number) as torch's
 * forward-backward flows pair them, its bounds, and the folded stacks and
 * per-op stacks the output files take from it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/stacks/pystack_fold.h"
#include "pipeline/torch/fwd_link.h"
#include "pipeline/pystack.h"
#include "unit.h"

/* The pairing torch's trace shows for Linear, ReLU, mul, sum and their
 * backward (tests/bats/pystack.bats compares a live run with torch's):
 * aten::linear and aten::t inside it share number 0, and TBackward0 is
 * paired with aten::t, the last begun. */
static void test_match(void)
{
	struct fwd_link l = { 0 };

	CHECK_EQ(fwd_link_op(&l, 0, 1, 1, 0), 0); /* a node before any forward op */
	CHECK_EQ(l.unlinked, 1);
	CHECK_EQ(fwd_link_op(&l, 0, 1, 0, 10), 0); /* aten::linear */
	CHECK_EQ(fwd_link_op(&l, 0, 1, 0, 11), 0); /* aten::t inside it */
	CHECK_EQ(fwd_link_op(&l, 1, 1, 0, 12), 0); /* aten::addmm */
	CHECK_EQ(fwd_link_op(&l, 2, 1, 0, 13), 0); /* aten::relu */
	CHECK_EQ(fwd_link_op(&l, -1, 1, 0, 14), 0); /* no number: not kept */
	CHECK_EQ(fwd_link_op(&l, 2, 7, 0, 20), 0); /* the same number on another thread */
	CHECK_EQ(fwd_link_op(&l, 2, 9, 1, 0), 13); /* ReluBackward0 on a device thread */
	CHECK_EQ(fwd_link_op(&l, 2, 9, 7, 0), 20);
	CHECK_EQ(fwd_link_op(&l, 1, 1, 1, 0), 12);
	CHECK_EQ(fwd_link_op(&l, 0, 1, 1, 0), 11);
	CHECK_EQ(fwd_link_op(&l, 3, 1, 1, 0), 0); /* never seen */
	CHECK_EQ(fwd_link_op(&l, 1, 1, 3, 0), 0); /* another forward thread */
	CHECK_EQ(fwd_link_op(&l, -5, 1, 1, 0), 0); /* hostile: a negative number */
	CHECK_EQ(l.linked, 4);
	CHECK_EQ(l.unlinked, 3);
	/* a forward op without a stack pairs as torch pairs, leaving none */
	CHECK_EQ(fwd_link_op(&l, 1, 1, 0, 0), 0);
	CHECK_EQ(fwd_link_op(&l, 1, 1, 1, 0), 0);
	fwd_link_free(&l);
	CHECK(l.slots == NULL);
}

/* Bounded: a thread keeps its last FWD_LINK_SLOTS forward ops. */
static void test_bounds(void)
{
	struct fwd_link l = { 0 };
	uint32_t i, got = 0;

	for (i = 0; i < 3 * FWD_LINK_SLOTS; i++)
		fwd_link_op(&l, i, 2, 0, i + 1);
	for (i = 0; i < 3 * FWD_LINK_SLOTS; i++)
		got += fwd_link_op(&l, i, 2, 2, 0) == i + 1;
	CHECK_EQ(got, FWD_LINK_SLOTS);
	CHECK_EQ(fwd_link_op(&l, 3 * FWD_LINK_SLOTS - 1, 2, 2, 0), 3 * FWD_LINK_SLOTS);
	CHECK_EQ(fwd_link_op(&l, 0, 2, 2, 0), 0);
	/* huge numbers and ids wrap around the table, never outside it */
	fwd_link_op(&l, INT64_MAX, UINT64_MAX, 0, 5);
	CHECK_EQ(fwd_link_op(&l, INT64_MAX, 1, UINT64_MAX, 0), 5);
	fwd_link_free(&l);
}

static struct pystack_entry *entry(struct name_table *names, const char *func, int line)
{
	struct pystack_entry *e = calloc(1, sizeof(*e) + sizeof(e->f[0]));

	e->n = 1;
	e->f[0] = (struct pystack_frame){ name_table_intern(names, func),
					  name_table_intern(names, "w.py"), line, line };
	return e;
}

/* The segment's folded stacks, sorted, as the file has them. */
static char *folded_text(const struct seg_output_ctx *c)
{
	struct fold_set fs;
	char *buf = NULL;
	size_t blen = 0;
	FILE *f;

	CHECK_EQ(pystack_fold_build(c, &fs), 0);
	pystack_fold_sort(&fs);
	f = open_memstream(&buf, &blen);
	CHECK_EQ(pystack_fold_write(f, &fs), 0);
	fclose(f);
	pystack_fold_free(&fs);
	return buf;
}

/* Backward ops under their node take the forward line: the node, its
 * inner node and the operators it runs; the time outside stays with the
 * backward() line. */
static void test_attribution(void)
{
	struct torch_call ops[5] = {
		/* forward: aten::linear from line 7 (stack 1) */
		{ .start_ns = 0, .end_ns = 10, .tid = 1, .depth = 0, .kind = 1, .stack = 1,
		  .seq1 = 1 },
		/* backward() at line 9 (stack 2): its node, the node's operator */
		{ .start_ns = 20, .end_ns = 60, .tid = 1, .depth = 0, .kind = 2, .stack = 2,
		  .seq1 = 1, .fwd_tid = 1, .fwd_stack = 1 },
		{ .start_ns = 25, .end_ns = 55, .tid = 1, .depth = 1, .kind = 2, .stack = 2,
		  .seq1 = 1, .fwd_tid = 1, .fwd_stack = 1 },
		{ .start_ns = 30, .end_ns = 50, .tid = 1, .depth = 2, .kind = 1, .stack = 2 },
		/* AccumulateGrad: no number, stays on the backward() line */
		{ .start_ns = 70, .end_ns = 75, .tid = 1, .depth = 0, .kind = 2, .stack = 2 },
	};
	struct segment seg = { .ops = ops, .nops = 5, .end_ns = 100 };
	struct name_table names;
	struct pystack_table tab;
	struct seg_output_ctx c = { .seg = &seg, .knames = &names, .pystacks = &tab };
	struct op_tree tree;
	uint64_t self[5];
	uint32_t sid[5];
	char *buf;

	name_table_init(&names);
	pystack_table_init(&tab, &names);
	ops[0].name = name_table_intern(&names, "aten::linear");
	ops[1].name = name_table_intern(&names, "autograd::engine::evaluate_function: AddmmBackward0");
	ops[2].name = name_table_intern(&names, "AddmmBackward0");
	ops[3].name = name_table_intern(&names, "aten::mm");
	ops[4].name = name_table_intern(&names, "torch::autograd::AccumulateGrad");
	tab.e = calloc(2, sizeof(*tab.e));
	tab.e[0] = entry(&names, "fwd", 7);
	tab.e[1] = entry(&names, "<module>", 9);
	tab.n = tab.cap = 2;
	CHECK_EQ(op_tree_build(&seg, &tree), 0);
	CHECK_EQ(pystack_op_walk(&seg, &tree, self, sid), 0);
	op_tree_free(&tree);
	CHECK(sid[0] == 1 && sid[1] == 1 && sid[2] == 1 && sid[3] == 1 && sid[4] == 2);
	CHECK(self[1] == 10 && self[2] == 10 && self[3] == 20);
	buf = folded_text(&c);
	CHECK_STR(buf, "<module> (w.py:9);torch::autograd::AccumulateGrad 5\n"
		       "fwd (w.py:7);aten::linear 10\n"
		       "fwd (w.py:7);autograd::engine::evaluate_function: AddmmBackward0 10\n"
		       "fwd (w.py:7);autograd::engine::evaluate_function: AddmmBackward0;"
		       "AddmmBackward0 10\n"
		       "fwd (w.py:7);autograd::engine::evaluate_function: AddmmBackward0;"
		       "AddmmBackward0;aten::mm 20\n");
	free(buf);
	pystack_table_free(&tab);
	name_table_free(&names);
}

int main(void)
{
	RUN(test_match);
	RUN(test_bounds);
	RUN(test_attribution);
	UNIT_DONE();
}
