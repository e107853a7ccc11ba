// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Forward-to-backward links (output/fwdbwd.c), by torch's rule. */
#include <stdlib.h>
#include <string.h>

#include "output/json/fwdbwd.h"
#include "probes/torch_ops.h"
#include "unit.h"

static struct torch_call ops[16];
static struct segment seg = { .ops = ops };

static size_t op(uint8_t kind, uint64_t seq1, uint32_t rf_tid, uint64_t start, uint64_t end)
{
	ops[seg.nops] = (struct torch_call){ .kind = kind, .seq1 = seq1, .fwd_tid = rf_tid,
					     .start_ns = start, .end_ns = end, .tid = 7 };
	return seg.nops++;
}

static void test_torch_rule(void)
{
	struct fwdbwd_pair *p;
	size_t linear, t, addmm, evalf, node, other, late;
	long n;

	seg.nops = 0;
	linear = op(TORCH_OP, 1, 3, 100, 200);  /* seq 0: linear, then t inside it */
	t = op(TORCH_OP, 1, 3, 110, 120);
	addmm = op(TORCH_OP, 2, 3, 130, 190);
	op(TORCH_OP, 2, 4, 140, 150);           /* another thread's seq 1: not addmm's */
	evalf = op(TORCH_NODE, 2, 3, 300, 400); /* evaluate_function around the node */
	node = op(TORCH_NODE, 2, 3, 301, 390);
	other = op(TORCH_NODE, 1, 3, 410, 420);
	late = op(TORCH_NODE, 1, 3, 430, 440);  /* seq 0 again: linked already */
	op(TORCH_NODE, 9, 3, 450, 460);         /* no forward op of seq 8 */
	op(TORCH_NODE, 1, 3, 470, 0);           /* open: no end, no link */
	n = fwdbwd_pairs(&seg, &p);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK_EQ(p[0].fwd, addmm);      /* the node ends first, before evaluate_function */
		CHECK_EQ(p[0].bwd, node);
		CHECK_EQ(p[1].fwd, t);          /* of seq 0, the op that began last */
		CHECK_EQ(p[1].bwd, other);
	}
	(void)linear, (void)evalf, (void)late;
	free(p);
}

static void test_nothing_to_link(void)
{
	struct fwdbwd_pair *p;

	seg.nops = 0;
	CHECK_EQ(fwdbwd_pairs(&seg, &p), 0);
	free(p);
	op(TORCH_OP, 0, 0, 1, 2);               /* uprobes: no sequence numbers */
	op(TORCH_NODE, 0, 0, 3, 4);
	CHECK_EQ(fwdbwd_pairs(&seg, &p), 0);
	free(p);
}

int main(void)
{
	RUN(test_torch_rule);
	RUN(test_nothing_to_link);
	UNIT_DONE();
}
