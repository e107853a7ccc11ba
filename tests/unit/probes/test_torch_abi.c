// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * --record-shapes without a target: plans from schemas and from real
 * libtorch symbol names (torch 2.14.1's, as nm -D lists them), the layout
 * line, shapes records built by hand (good ones, and ones that must come
 * out unknown: numel not the product, a bad read, past the bounds), and
 * the FLOPs of the ops torch counts, with torch.profiler's own figures
 * (measured on torch 2.14.1, CPU: tests/workloads/torch_shapes.py); the
 * evidence a record gives on its layout and the verdict it leads to.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probes/torch_abi.h"
#include "probes/torch_plans.h"
#include "pipeline/torch/torch_flops.h"
#include "pipeline/torch/torch_shapes.h"
#include "unit.h"

#define ADDMM "_ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_RKN3c106ScalarES8_"
#define CAT "_ZN2at4_ops3cat4callERKN3c108IListRefINS_6TensorEEEl"
#define CONV2D "_ZN2at4_ops6conv2d4callERKNS_6TensorES4_RKSt8optionalIS2_EN3c108ArrayRefINS9_6SymIntEEESC_SC_SB_"

static const char report[] =
	"fvbpf-torch-layout 1\ntorch 2.14.1\nlib 1 2 /x/libtorch_cpu.so\nimpl 56 5 152 160\nvtable 1219576\nundef 47 1219952\n"
	"op aten::addmm - Tensor Tensor Tensor Tensor Scalar Scalar\n"
	"op aten::cat - Tensor Tensor[] int\n"
	"op aten::conv2d - Tensor Tensor Tensor Tensor? SymInt[2] SymInt[2] SymInt[2] SymInt\n"
	"op aten::add_ Tensor Tensor! Tensor! Tensor Scalar\n"
	"op aten::weird - Tensor Tensor SomethingNew\n"
	"op broken line\n";

static void test_plans(void)
{
	struct torch_schemas *ts = NULL;
	struct fvbpf_shape_plan p;
	char sig[FVBPF_SHAPE_ARGS + 1];

	CHECK_EQ(torch_schemas_parse(report, &ts), 0);
	CHECK_EQ(torch_schemas_count(ts), 5);
	/* addmm returns a Tensor: sret in rdi, self in rsi, mat1 rdx, mat2 rcx */
	CHECK_EQ(torch_schemas_plan(ts, "aten::addmm", "", ADDMM, &p, sig), 0);
	CHECK_EQ(p.nargs, 5);
	CHECK_STR(sig, "TTTSS");
	CHECK(p.args[0].kind == FVBPF_ARG_TENSOR && p.args[0].loc == 1);
	CHECK(p.args[2].kind == FVBPF_ARG_TENSOR && p.args[2].loc == 3);
	/* cat: the symbol says ITensorListRef by reference, one register */
	CHECK_EQ(torch_schemas_plan(ts, "aten::cat", "", CAT, &p, sig), 0);
	CHECK(p.args[0].kind == FVBPF_ARG_ILIST && p.args[0].loc == 1);
	CHECK(p.args[1].kind == FVBPF_ARG_INT && p.args[1].loc == 2);
	/* conv2d: stride in r8/r9, padding and dilation on the stack, groups by reference */
	CHECK_EQ(torch_schemas_plan(ts, "aten::conv2d", "", CONV2D, &p, sig), 0);
	CHECK_STR(sig, "TTOlllS");
	CHECK(p.args[2].kind == FVBPF_ARG_OPT && p.args[2].loc == 3);
	CHECK(p.args[3].kind == FVBPF_ARG_INTS && p.args[3].loc == 4);
	CHECK(p.args[4].kind == FVBPF_ARG_INTS && p.args[4].loc == 6);
	CHECK(p.args[5].kind == FVBPF_ARG_INTS && p.args[5].loc == 8);
	CHECK(p.args[6].kind == FVBPF_ARG_SYMINT && p.args[6].loc == 10);
	/* a symbol that disagrees with the schema, an unknown type, no schema */
	CHECK_EQ(torch_schemas_plan(ts, "aten::addmm", "", CAT, &p, sig), -ENOTSUP);
	CHECK_EQ(torch_schemas_plan(ts, "aten::weird", "", ADDMM, &p, sig), -ENOTSUP);
	CHECK_EQ(torch_schemas_plan(ts, "aten::nope", "", ADDMM, &p, sig), -ENOENT);
	CHECK_EQ(torch_schemas_plan(ts, "aten::addmm", "", NULL, &p, sig), -ENOTSUP);
	torch_schemas_free(ts);
}

static void test_layout(void)
{
	struct fvbpf_tensor_layout l;

	CHECK_EQ(torch_abi_layout(report, 0x7f0000000000, &l), 0);
	CHECK(l.sizes_at == 56 && l.sizes_inline == 5 && l.numel_at == 152 && l.dtype_at == 160);
	CHECK_EQ(l.win_len, 162);
	CHECK(l.vptr_dense == 0x7f0000000000 + 1219576 && l.vptr_undef == 0x7f0000000000 + 1219952);
	CHECK_EQ(torch_abi_undef_dtype(report), 47);
	/* numel past the window, misaligned, no inline sizes, no vtable, no libc10 */
	CHECK_EQ(torch_abi_layout("x\nimpl 56 5 400 160\nvtable 8\n", 1, &l), -EINVAL);
	CHECK_EQ(torch_abi_layout("x\nimpl 57 5 152 160\nvtable 8\n", 1, &l), -EINVAL);
	CHECK_EQ(torch_abi_layout("x\nimpl 56 0 152 160\nvtable 8\n", 1, &l), -EINVAL);
	CHECK_EQ(torch_abi_layout("x\nimpl 56 5 152 160\n", 1, &l), -EINVAL);
	CHECK_EQ(torch_abi_layout(report, 0, &l), -EINVAL);
	CHECK_EQ(torch_abi_undef_dtype("x\n"), -1);
}

/* A record of tensors given as (ndim, sizes...) with their numel. */
static size_t add_tensor(struct fvbpf_torch_shapes_event *e, int arg, uint8_t kind, int ndim,
			 const __u64 *sizes, uint64_t numel, uint8_t dtype)
{
	struct fvbpf_shape_tensor *t = &e->tensors[e->ntensors];
	int i;

	e->args[arg].kind = kind;
	e->args[arg].first = e->ntensors;
	e->args[arg].count = 1;
	t->ndim = (uint8_t)ndim;
	t->numel = numel;
	t->dtype = dtype;
	t->dim0 = e->ndims;
	for (i = 0; i < ndim; i++)
		e->dims[e->ndims++] = sizes[i];
	e->ntensors++;
	return FVBPF_SHAPES_FIXED + 8 * e->ndims;
}

static void test_format(void)
{
	static const __u64 a[] = { 40 }, b[] = { 8, 24 }, c[] = { 24, 40 }, z[] = { 0 };
	struct fvbpf_torch_shapes_event *e = calloc(1, sizeof(*e));
	struct torch_shapes_view v;
	char out[TORCH_SHAPES_MAX];
	size_t size;

	e->nargs = 5;
	add_tensor(e, 0, FVBPF_ARG_TENSOR, 1, a, 40, 6);
	add_tensor(e, 1, FVBPF_ARG_TENSOR, 2, b, 192, 6);
	size = add_tensor(e, 2, FVBPF_ARG_TENSOR, 2, c, 960, 6);
	e->args[3].kind = e->args[4].kind = FVBPF_ARG_OTHER;
	CHECK_EQ(torch_shapes_format(e, size, "aten::addmm", "TTTSS@47", out, sizeof(out)), 0);
	CHECK_EQ(torch_shapes_split(out, &v), 0);
	CHECK(!strncmp(v.key, "[[40], [8, 24], [24, 40], [], []]", v.key_len) && v.key_len == 33);
	CHECK(!strncmp(v.types, "[\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]", v.types_len));
	CHECK_EQ(v.flops, 15360); /* torch.profiler's */
	/* the sig must describe exactly the record's arguments */
	CHECK_EQ(torch_shapes_format(e, size, "aten::addmm", "TTTS", out, sizeof(out)), -EINVAL);
	/* a record shorter than its dims */
	CHECK_EQ(torch_shapes_format(e, size - 8, "aten::addmm", "TTTSS", out, sizeof(out)), -EINVAL);
	/* numel that is not the product of the sizes: unknown, not a shape */
	e->tensors[1].numel = 191;
	CHECK_EQ(torch_shapes_format(e, size, "aten::addmm", "TTTSS", out, sizeof(out)), -EINVAL);
	e->tensors[1].numel = 192;
	e->tensors[2].bad = 1;
	CHECK_EQ(torch_shapes_format(e, size, "aten::addmm", "TTTSS", out, sizeof(out)), -EINVAL);
	e->tensors[2].bad = 0;
	e->cut = 1;
	CHECK_EQ(torch_shapes_format(e, size, "aten::addmm", "TTTSS", out, sizeof(out)), -EINVAL);
	e->cut = 0;
	e->args[4].kind = FVBPF_ARG_BAD;
	CHECK_EQ(torch_shapes_format(e, size, "aten::addmm", "TTTSS", out, sizeof(out)), -EINVAL);
	/* an undefined tensor (sizes [0], numel 0, the undef dtype) is [] "";
	 * with a dtype that is neither a real one nor the undef one: unknown */
	memset(e, 0, sizeof(*e));
	e->nargs = 1;
	size = add_tensor(e, 0, FVBPF_ARG_OPT, 1, z, 0, 47);
	CHECK_EQ(torch_shapes_format(e, size, "aten::x", "O@47", out, sizeof(out)), 0);
	CHECK(!strncmp(out, "[[]]\x1f[[]]\x1f[\"\"]", 14));
	CHECK_EQ(torch_shapes_format(e, size, "aten::x", "O", out, sizeof(out)), -EINVAL);
	e->tensors[0].dtype = 6; /* a real empty float tensor */
	CHECK_EQ(torch_shapes_format(e, size, "aten::x", "O@47", out, sizeof(out)), 0);
	CHECK(!strncmp(out, "[[0]]", 5));
	free(e);
}

static void test_tally(void)
{
	static const __u64 a[] = { 8, 24 }, big[] = { 1ull << 50, 1 }, z[] = { 0 };
	struct fvbpf_torch_shapes_event *e = calloc(1, sizeof(*e));
	unsigned int fit, misfit;
	size_t size;

	e->nargs = 6;
	add_tensor(e, 0, FVBPF_ARG_TENSOR, 2, a, 192, 6);      /* fits */
	add_tensor(e, 1, FVBPF_ARG_TENSOR, 2, a, 191, 6);      /* numel is not the product */
	add_tensor(e, 2, FVBPF_ARG_TENSOR, 2, big, 1ull << 50, 6); /* a size past 2^48 */
	add_tensor(e, 3, FVBPF_ARG_TENSOR, 0, z, 0, 0);        /* undefined: no evidence */
	add_tensor(e, 4, FVBPF_ARG_TENSOR, 1, z, 0, 47);       /* empty or undefined: fits */
	size = add_tensor(e, 5, FVBPF_ARG_TENSOR, 2, a, 192, 6);
	e->tensors[5].bad = 1;                                  /* unreadable: no evidence */
	torch_shapes_tally(e, size, &fit, &misfit);
	CHECK_EQ(fit, 2);
	CHECK_EQ(misfit, 2);
	/* past the bound (9 dims), or dims the record does not hold: none */
	e->tensors[1].ndim = 9;
	e->tensors[2].dim0 = (uint8_t)(e->ndims - 1);
	torch_shapes_tally(e, size, &fit, &misfit);
	CHECK_EQ(fit, 2);
	CHECK_EQ(misfit, 0);
	/* a record shorter than its dims gives nothing */
	torch_shapes_tally(e, size - 8, &fit, &misfit);
	CHECK_EQ(fit + misfit, 0);
	free(e);
}

static void test_verdict(void)
{
	struct torch_probes tp = { .plans_fd = -1 };

	/* nothing installed: no verdict */
	CHECK(!torch_plans_check(&tp, 0, 9));
	CHECK(!strcmp(torch_plans_layout_word(&tp), "none"));
	tp.lay_state = LAYOUT_CHECKING;
	CHECK(!torch_plans_check(&tp, LAYOUT_TRUST_FIT - 1, LAYOUT_REFUSE_MISFIT - 1));
	CHECK(!strcmp(torch_plans_layout_word(&tp), "checking"));
	CHECK(!torch_plans_check(&tp, 1, 0));
	CHECK(!strcmp(torch_plans_layout_word(&tp), "trusted"));
	CHECK(!torch_plans_check(&tp, 0, 100)); /* trusted stays */
	memset(&tp, 0, sizeof(tp));
	tp.plans_fd = -1;
	tp.plans_ops = 4;
	tp.plans_nodes = 1;
	tp.lay_state = LAYOUT_CHECKING;
	CHECK(!torch_plans_check(&tp, 3, LAYOUT_REFUSE_MISFIT - 1));
	CHECK(torch_plans_check(&tp, 0, 1));
	CHECK(!strcmp(torch_plans_layout_word(&tp), "refused"));
	CHECK_EQ(tp.plans_ops + tp.plans_nodes, 0);
	CHECK(strstr(tp.shapes_why, "does not fit its tensors (4 of 7 read did not)") != NULL);
	CHECK(!torch_plans_check(&tp, 0, 1)); /* once */
}

static void test_flops(void)
{
	static const __u64 x[] = { 2, 3, 10, 10 }, w[] = { 6, 3, 3, 3 };
	static const __u64 one[] = { 1, 1 }, zero[] = { 0, 0 }, pad1[] = { 1, 1 }, g1[] = { 1 };
	static const __u64 b1[] = { 4, 5, 7 }, b2[] = { 4, 7, 3 }, big[] = { 1ull << 40, 1ull << 40 };
	struct shape_arg a[7] = { 0 };

	a[0] = (struct shape_arg){ .kind = FVBPF_ARG_TENSOR, .n = 1, .ndim = { 4 }, .dims = { x } };
	a[1] = (struct shape_arg){ .kind = FVBPF_ARG_TENSOR, .n = 1, .ndim = { 4 }, .dims = { w } };
	a[2].kind = FVBPF_ARG_OTHER;
	a[3] = (struct shape_arg){ .kind = FVBPF_ARG_INTS, .n = 2, .ints = one };
	a[4] = (struct shape_arg){ .kind = FVBPF_ARG_INTS, .n = 2, .ints = zero };
	a[5] = (struct shape_arg){ .kind = FVBPF_ARG_INTS, .n = 2, .ints = one };
	a[6] = (struct shape_arg){ .kind = FVBPF_ARG_INTS, .n = 1, .ints = g1 };
	CHECK_EQ(torch_flops("aten::conv2d", a, 7), 41472);
	a[4].ints = pad1;
	CHECK_EQ(torch_flops("aten::conv2d", a, 7), 64800);
	CHECK_EQ(torch_flops("aten::convolution", a, 7), 0); /* torch counts conv2d only */
	CHECK_EQ(torch_flops("aten::mul", a, 1), 600);
	a[0] = (struct shape_arg){ .kind = FVBPF_ARG_TENSOR, .n = 1, .ndim = { 3 }, .dims = { b1 } };
	a[1] = (struct shape_arg){ .kind = FVBPF_ARG_TENSOR, .n = 1, .ndim = { 3 }, .dims = { b2 } };
	CHECK_EQ(torch_flops("aten::bmm", a, 2), 840);
	a[0].ndim[0] = 2;
	a[0].dims[0] = big;
	a[1].ndim[0] = 2;
	a[1].dims[0] = big;
	CHECK_EQ(torch_flops("aten::mm", a, 2), 0); /* overflow: none, as unknown */
	CHECK_EQ(torch_flops("aten::mm", a, 1), 0);
}

int main(void)
{
	RUN(test_plans);
	RUN(test_layout);
	RUN(test_format);
	RUN(test_tally);
	RUN(test_verdict);
	RUN(test_flops);
	UNIT_DONE();
}
