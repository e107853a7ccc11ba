// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Region rows of a segment's summary (issue 35): self time less what a
 * region encloses directly on its thread (regions, torch calls, outermost
 * CUDA calls), as torch counts a user_annotation row's; a row per region
 * and the region it lies in; a torch scope with the region's own bounds
 * (-r torch:GLOB) gives the region the scope's self time.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/summary/summary.h"
#include "output/summary/summary_regions.h"
#include "probes/torch_ops.h"
#include "unit.h"

struct fixture {
	struct region_registry reg;
	struct name_table names;
	struct proc_target proc;
	struct session_meta meta;
	struct segment seg;
	struct seg_output_ctx ctx;
	int step, fwd, opt, scope;
};

static struct seg_slice slice(uint32_t tid, int region, uint64_t s, uint64_t e, uint32_t depth)
{
	return (struct seg_slice){ tid, (uint32_t)region, s, e, depth, 0, 0 };
}

static struct torch_call op(struct fixture *x, uint32_t tid, const char *name, uint64_t s,
			    uint64_t e, uint16_t depth, uint8_t kind)
{
	struct torch_call o;

	memset(&o, 0, sizeof(o));
	o.start_ns = s;
	o.end_ns = e;
	o.tid = tid;
	o.name = name_table_intern(&x->names, name);
	o.depth = depth;
	o.kind = kind;
	return o;
}

/*
 * thread 1: step [0,1000] holds forward [100,500] (aten::mm [150,300] with
 * aten::add [160,200] inside it, a CUDA call [310,350] outside any op),
 * aten::relu [600,700] and optimizer [700,900].
 * thread 2: forward [0,100] alone.
 * thread 3: scope [2000,2050] with the torch scope "scope" of the same
 * bounds, aten::mm [2010,2020] inside.
 */
static void setup(struct fixture *x)
{
	struct segment *g = &x->seg;

	memset(x, 0, sizeof(*x));
	registry_init(&x->reg);
	x->step = registry_add(&x->reg, "step", NULL);
	x->fwd = registry_add(&x->reg, "forward", NULL);
	x->opt = registry_add(&x->reg, "optimizer", NULL);
	x->scope = registry_add(&x->reg, "scope", NULL);
	name_table_init(&x->names);
	x->proc.pid = getpid();
	g->pid = getpid();
	g->region = (uint32_t)x->step;
	g->start_ns = 0;
	g->end_ns = 3000;
	g->slices = calloc(6, sizeof(*g->slices));
	g->ops = calloc(6, sizeof(*g->ops));
	g->calls = calloc(2, sizeof(*g->calls));
	if (!g->slices || !g->ops || !g->calls)
		return;
	g->slices[g->nslices++] = slice(1, x->step, 0, 1000, 0);
	g->slices[g->nslices++] = slice(2, x->fwd, 0, 100, 0);
	g->slices[g->nslices++] = slice(1, x->fwd, 100, 500, 1);
	g->slices[g->nslices++] = slice(1, x->opt, 700, 900, 1);
	g->slices[g->nslices++] = slice(3, x->scope, 2000, 2050, 0);
	g->cap = 6;
	g->ops[g->nops++] = op(x, 1, "aten::mm", 150, 300, 0, TORCH_OP);
	g->ops[g->nops++] = op(x, 1, "aten::add", 160, 200, 1, TORCH_OP);
	g->ops[g->nops++] = op(x, 1, "aten::relu", 600, 700, 0, TORCH_OP);
	g->ops[g->nops++] = op(x, 3, "scope", 2000, 2050, 0, TORCH_SCOPE);
	g->ops[g->nops++] = op(x, 3, "aten::mm", 2010, 2020, 1, TORCH_OP);
	g->calls[0].tid = 1;
	g->calls[0].start_ns = 310;
	g->calls[0].end_ns = 350;
	/* a driver call inside it: in its time, not a child of its own */
	g->calls[1].tid = 1;
	g->calls[1].start_ns = 320;
	g->calls[1].end_ns = 330;
	g->calls[1].depth = 1;
	g->ncalls = g->capcalls = 2;
	x->ctx = (struct seg_output_ctx){ g, &x->proc, &x->reg, &x->meta, &x->names, TRACE_JSON,
					  false, false, NULL };
}

static void teardown(struct fixture *x)
{
	free(x->seg.slices);
	free(x->seg.ops);
	free(x->seg.calls);
	proc_target_free(&x->proc);
	name_table_free(&x->names);
}

static void test_times(void)
{
	struct fixture x;
	struct region_times t;

	setup(&x);
	CHECK_EQ(region_times_build(&x.seg, &t), 0);
	/* step: 1000 less forward 400, aten::relu 100, optimizer 200 */
	CHECK_EQ(t.self_ns[0], 300);
	CHECK_EQ(t.parent[0], -1);
	CHECK_EQ(t.self_ns[1], 100);
	CHECK_EQ(t.parent[1], -1);
	/* forward: 400 less aten::mm 150 and the CUDA call 40 (its driver call is in it) */
	CHECK_EQ(t.self_ns[2], 210);
	CHECK_EQ(t.parent[2], 0);
	CHECK_EQ(t.self_ns[3], 200);
	CHECK_EQ(t.parent[3], 0);
	/* the scope's region: inside the scope, aten::mm its child */
	CHECK_EQ(t.self_ns[4], 40);
	CHECK_EQ(t.parent[4], -1);
	region_times_free(&t);
	teardown(&x);
}

static const struct summary_row *row(const struct summary *s, const char *name, const char *kind,
				     const char *parent)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->rows[i].name, name) && !strcmp(s->rows[i].kind, kind) &&
		    !strcmp(s->rows[i].parent ? s->rows[i].parent : "", parent))
			return &s->rows[i];
	return NULL;
}

/* In the summary JSON, the "parent" of the region row @name of @cpu_ns:
 * 1 "step", 0 "", -1 none or absent. */
static int json_parent_of(const char *text, const char *name, int cpu_ns)
{
	json_object *root = json_tokener_parse(text), *rows, *r, *v;
	int ret = -1;
	size_t i;

	if (!root || !json_object_object_get_ex(root, "rows", &rows))
		goto out;
	for (i = 0; i < json_object_array_length(rows); i++) {
		r = json_object_array_get_idx(rows, i);
		if (!json_object_object_get_ex(r, "name", &v) || strcmp(json_object_get_string(v), name) ||
		    !json_object_object_get_ex(r, "cpu_us", &v) || (int)(json_object_get_double(v) * 1000 + 0.5) != cpu_ns ||
		    !json_object_object_get_ex(r, "parent", &v))
			continue;
		ret = !strcmp(json_object_get_string(v), "step") ? 1 :
		      !strcmp(json_object_get_string(v), "") ? 0 : -1;
	}
out:
	json_object_put(root);
	return ret;
}

static void test_rows(void)
{
	const struct summary_row *r;
	struct summary s;
	struct fixture x;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	setup(&x);
	CHECK_EQ(summary_build(&s, &x.ctx), 0);
	r = row(&s, "step", "region", "");
	CHECK(r && r->cpu_total_ns == 1000 && r->cpu_self_ns == 300);
	/* forward in step and forward alone on thread 2: two rows */
	r = row(&s, "forward", "region", "step");
	CHECK(r && r->count == 1 && r->cpu_total_ns == 400 && r->cpu_self_ns == 210);
	r = row(&s, "forward", "region", "");
	CHECK(r && r->count == 1 && r->cpu_total_ns == 100 && r->cpu_self_ns == 100);
	r = row(&s, "optimizer", "region", "step");
	CHECK(r && r->cpu_self_ns == 200);
	/* the region of a torch scope: the scope's self time, as torch's row says */
	r = row(&s, "scope", "region", "");
	CHECK(r && r->cpu_self_ns == 40);
	r = row(&s, "scope", "user_annotation", "");
	CHECK(r && r->cpu_self_ns == 40);
	f = open_memstream(&text, &len);
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ(summary_write_json(f, &s, &x.ctx), 0);
		fclose(f);
		CHECK_EQ(json_parent_of(text, "forward", 400), 1);
		CHECK_EQ(json_parent_of(text, "forward", 100), 0);
		CHECK_EQ(json_parent_of(text, "step", 1000), 0);
		free(text);
	}
	summary_free(&s);
	teardown(&x);
}

/* Events that overlap without nesting, on one thread: nothing is counted
 * twice, a self time is never below 0, nothing wraps. */
static void test_partial_overlap(void)
{
	struct fixture x;
	struct region_times t;

	setup(&x);
	x.seg.nslices = 2;
	x.seg.slices[0] = slice(1, x.step, 100, 200, 0);
	x.seg.slices[1] = slice(1, x.fwd, 150, 250, 0);
	x.seg.nops = 1;
	x.seg.ops[0] = op(&x, 1, "aten::mm", 90, 300, 0, TORCH_OP);
	x.seg.ncalls = 1;
	x.seg.calls[0].start_ns = 400;
	x.seg.calls[0].end_ns = 10; /* ends before it starts */
	CHECK_EQ(region_times_build(&x.seg, &t), 0);
	CHECK_EQ(t.self_ns[0], 100);
	CHECK_EQ(t.self_ns[1], 100);
	region_times_free(&t);
	teardown(&x);
}

int main(void)
{
	RUN(test_times);
	RUN(test_rows);
	RUN(test_partial_overlap);
	UNIT_DONE();
}
