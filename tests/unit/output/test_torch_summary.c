// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Torch calls: per-thread pairing (exceptions, scopes ended elsewhere) and
 * the key_averages rules of the summary (self time, device time, the
 * same-name only-child merge), on segments built by hand.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probes/torch_ops.h"
#include "pipeline/torch/torch_pairing.h"
#include "output/summary/torch_summary.h"
#include "unit.h"

struct row {
	char name[64];
	unsigned int count;
	uint64_t cpu, self, dev, self_dev;
};

struct rows {
	struct row r[16];
	size_t n;
};

static int collect(void *ctx, const char *name, const char *kind, uint64_t cpu, uint64_t self,
		   uint64_t dev, uint64_t self_dev, const struct torch_row_shapes *sh)
{
	struct rows *rs = ctx;
	struct row *r = NULL;
	size_t i;

	(void)kind;
	if (!sh || (strcmp(sh->key, "") && strcmp(sh->key, "[]")) || sh->flops)
		return -EINVAL; /* no shapes recorded in these segments */
	for (i = 0; i < rs->n; i++)
		if (!strcmp(rs->r[i].name, name))
			r = &rs->r[i];
	if (!r) {
		if (rs->n == 16)
			return -1;
		r = &rs->r[rs->n++];
		memset(r, 0, sizeof(*r));
		snprintf(r->name, sizeof(r->name), "%s", name);
	}
	r->count++;
	r->cpu += cpu;
	r->self += self;
	r->dev += dev;
	r->self_dev += self_dev;
	return 0;
}

static const struct row *get(const struct rows *rs, const char *name)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (!strcmp(rs->r[i].name, name))
			return &rs->r[i];
	return NULL;
}

static struct name_table names;

static void enter(struct torch_pairing *p, struct segment *seg, uint32_t tid, uint32_t id,
		  const char *name, uint8_t kind, uint64_t ts, uint64_t handle)
{
	struct torch_call op = { .start_ns = ts, .tid = tid, .kind = kind };

	op.name = name_table_intern(&names, name);
	CHECK_EQ(torch_pairing_enter(p, seg, id, &op, handle, -1), 0);
}

/*
 * scope S [0,100] holds div [10,50] > div [15,45] > mul [20,30], and
 * add [60,70] with a launch [62,68] whose kernel ran 5 ns.
 */
static void build(struct segment *seg, struct torch_pairing *p)
{
	static struct api_call call;
	static struct gpu_activity gpu;
	int region;
	uint32_t tid;

	memset(seg, 0, sizeof(*seg));
	seg->start_ns = 0;
	seg->end_ns = 200;
	enter(p, seg, 7, TORCH_SCOPE_ID, "S", TORCH_SCOPE, 0, 0x1000);
	enter(p, seg, 7, 1, "aten::div", TORCH_OP, 10, 0);
	enter(p, seg, 7, 2, "aten::div", TORCH_OP, 15, 0);
	enter(p, seg, 7, 3, "aten::mul", TORCH_OP, 20, 0);
	CHECK_EQ(torch_pairing_exit(p, seg, 7, 3, 30), 1);
	CHECK_EQ(torch_pairing_exit(p, seg, 7, 2, 45), 1);
	CHECK_EQ(torch_pairing_exit(p, seg, 7, 1, 50), 1);
	enter(p, seg, 7, 4, "aten::add", TORCH_OP, 60, 0);
	CHECK_EQ(torch_pairing_exit(p, seg, 7, 4, 70), 1);
	/* the scope ends on another thread, by its handle */
	CHECK_EQ(torch_pairing_scope_end(p, seg, 0x1000, 100, &region, &tid), 1);
	CHECK_EQ(tid, 7);
	call.tid = 7;
	call.start_ns = 62;
	call.end_ns = 68;
	seg->calls = &call;
	seg->ncalls = 1;
	gpu.kind = FVBPF_GPU_KERNEL;
	gpu.start = 1000;
	gpu.end = 1005;
	gpu.call = 0;
	seg->gpu = &gpu;
	seg->ngpu = 1;
}

static void test_key_averages_rules(void)
{
	struct torch_pairing p = { 0 };
	struct segment seg;
	struct rows rs = { .n = 0 };
	const struct row *r;
	uint64_t skipped = 1;

	build(&seg, &p);
	CHECK_EQ(seg.nops, 5);
	CHECK_EQ(torch_summary_rows(&seg, &names, collect, &rs, &skipped), 0);
	CHECK_EQ(skipped, 0);
	CHECK((r = get(&rs, "S")) && r->count == 1 && r->cpu == 100 && r->self == 100 - 40 - 10);
	CHECK(r && r->dev == 5 && r->self_dev == 0);
	/* the inner div is its parent's only child with its name: merged */
	CHECK((r = get(&rs, "aten::div")) && r->count == 1 && r->cpu == 40 && r->self == 30);
	CHECK((r = get(&rs, "aten::mul")) && r->count == 1 && r->self == 10);
	CHECK((r = get(&rs, "aten::add")) && r->cpu == 10 && r->self == 4);
	CHECK(r && r->dev == 5 && r->self_dev == 5);
	free(seg.ops);
	torch_pairing_free(&p);
}

static void test_two_children_not_merged(void)
{
	struct torch_pairing p = { 0 };
	struct segment seg = { .end_ns = 100 };
	struct rows rs = { .n = 0 };
	uint64_t skipped;

	enter(&p, &seg, 1, 1, "aten::div", TORCH_OP, 0, 0);
	enter(&p, &seg, 1, 2, "aten::div", TORCH_OP, 1, 0);
	torch_pairing_exit(&p, &seg, 1, 2, 2);
	enter(&p, &seg, 1, 3, "aten::mul", TORCH_OP, 3, 0);
	torch_pairing_exit(&p, &seg, 1, 3, 4);
	torch_pairing_exit(&p, &seg, 1, 1, 5);
	CHECK_EQ(torch_summary_rows(&seg, &names, collect, &rs, &skipped), 0);
	CHECK(get(&rs, "aten::div") && get(&rs, "aten::div")->count == 2);
	free(seg.ops);
	torch_pairing_free(&p);
}

static void test_exception_and_unmatched(void)
{
	struct torch_pairing p = { 0 };
	struct segment seg = { .end_ns = 100 };

	enter(&p, &seg, 1, 1, "aten::a", TORCH_OP, 0, 0);
	enter(&p, &seg, 1, 2, "aten::throws", TORCH_OP, 1, 0);
	/* b threw: the return of a closes it, marked */
	CHECK_EQ(torch_pairing_exit(&p, &seg, 1, 1, 9), 1);
	CHECK_EQ(p.lost_returns, 1);
	CHECK_EQ(seg.ops[1].end_ns, 9);
	CHECK(seg.ops[1].flags & TORCH_CALL_NO_RETURN);
	CHECK(!(seg.ops[0].flags & TORCH_CALL_NO_RETURN));
	CHECK_EQ(torch_pairing_exit(&p, &seg, 1, 1, 10), 0);
	CHECK_EQ(torch_pairing_exit(&p, &seg, 2, 5, 10), 0);
	CHECK_EQ(p.unmatched, 2);
	/* an entry outside a segment is tracked, not stored */
	enter(&p, NULL, 1, 3, "aten::c", TORCH_OP, 20, 0);
	CHECK_EQ(torch_pairing_exit(&p, &seg, 1, 3, 21), 1);
	CHECK_EQ(seg.nops, 2);
	free(seg.ops);
	torch_pairing_free(&p);
}

static void test_deep_stack_bounded(void)
{
	struct torch_pairing p = { 0 };
	struct segment seg = { .end_ns = 100 };
	unsigned int i;

	for (i = 0; i < TORCH_STACK_MAX + 5; i++)
		enter(&p, &seg, 1, i, "aten::x", TORCH_OP, i, 0);
	CHECK_EQ(p.too_deep, 5);
	CHECK_EQ(seg.nops, TORCH_STACK_MAX);
	free(seg.ops);
	torch_pairing_free(&p);
}

/* A segment that opens while ops of a thread are open (their entries
 * stored nowhere): its first op of that thread is deep, with no parent in
 * the segment; whatever lay in the summary's scratch memory before. */
static void test_first_op_deep(void)
{
	struct torch_pairing p = { 0 };
	struct segment seg = { .end_ns = 100 };
	struct rows rs = { .n = 0 };
	uint64_t skipped;
	void *junk;

	junk = malloc(sizeof(long) * TORCH_STACK_MAX * 4); /* freed scratch, reused below */
	memset(junk, 0x7f, sizeof(long) * TORCH_STACK_MAX * 4);
	free(junk);
	enter(&p, NULL, 1, 1, "aten::outer", TORCH_OP, 0, 0);
	enter(&p, NULL, 1, 2, "aten::mid", TORCH_OP, 1, 0);
	enter(&p, &seg, 1, 3, "aten::inner", TORCH_OP, 2, 0);
	torch_pairing_exit(&p, &seg, 1, 3, 5);
	enter(&p, &seg, 2, 4, "aten::other", TORCH_OP, 6, 0);
	torch_pairing_exit(&p, &seg, 2, 4, 7);
	CHECK_EQ(seg.ops[0].depth, 2);
	CHECK_EQ(torch_summary_rows(&seg, &names, collect, &rs, &skipped), 0);
	CHECK(get(&rs, "aten::inner") && get(&rs, "aten::inner")->self == 5 - 2);
	CHECK(get(&rs, "aten::other") && get(&rs, "aten::other")->count == 1);
	free(seg.ops);
	torch_pairing_free(&p);
}

struct stacks {
	char name[4][32];
	uint32_t stack[4];
	size_t n;
};

static int collect_stack(void *ctx, const char *name, const char *kind, uint64_t cpu,
			 uint64_t self, uint64_t dev, uint64_t self_dev,
			 const struct torch_row_shapes *sh)
{
	struct stacks *st = ctx;

	(void)kind, (void)cpu, (void)self, (void)dev, (void)self_dev;
	if (st->n == 4)
		return -1;
	snprintf(st->name[st->n], sizeof(st->name[0]), "%s", name);
	st->stack[st->n++] = sh->stack;
	return 0;
}

/* --group-by-stack: a call without a stack of its own has its caller's
 * (torch gives a nested op its parent's Python stack); one with its own
 * keeps it; an outermost one without stays without. */
static void test_stack_inherited(void)
{
	struct torch_call ops[4] = {
		{ .start_ns = 0, .end_ns = 50, .tid = 1, .depth = 0, .kind = TORCH_OP, .stack = 5 },
		{ .start_ns = 10, .end_ns = 20, .tid = 1, .depth = 1, .kind = TORCH_OP },
		{ .start_ns = 30, .end_ns = 40, .tid = 1, .depth = 1, .kind = TORCH_OP, .stack = 7 },
		{ .start_ns = 60, .end_ns = 70, .tid = 1, .depth = 0, .kind = TORCH_OP },
	};
	struct segment seg = { .ops = ops, .nops = 4, .end_ns = 100 };
	struct stacks st = { .n = 0 };
	uint64_t skipped;

	ops[0].name = name_table_intern(&names, "aten::linear");
	ops[1].name = name_table_intern(&names, "aten::t");
	ops[2].name = name_table_intern(&names, "aten::addmm");
	ops[3].name = name_table_intern(&names, "aten::add");
	CHECK_EQ(torch_summary_rows(&seg, &names, collect_stack, &st, &skipped), 0);
	CHECK_EQ(st.n, 4);
	CHECK_STR(st.name[1], "aten::t");
	CHECK_EQ(st.stack[0], 5);
	CHECK_EQ(st.stack[1], 5);
	CHECK_EQ(st.stack[2], 7);
	CHECK_EQ(st.stack[3], 0);
}

int main(void)
{
	name_table_init(&names);
	RUN(test_key_averages_rules);
	RUN(test_two_children_not_merged);
	RUN(test_exception_and_unmatched);
	RUN(test_deep_stack_bounded);
	RUN(test_first_op_deep);
	RUN(test_stack_inherited);
	name_table_free(&names);
	UNIT_DONE();
}
