// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Operator discovery: the lea decode and the name rules on synthetic bytes,
 * then the real libtorch_cpu.so of each test venv, when there is one.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probes/torch_ops.h"
#include "unit.h"

static void test_lea_decode(void)
{
	/* push %rbp; lea 0x100(%rip),%rdx; nop; lea -0x20(%rip),%rcx; call */
	const uint8_t code[] = { 0x55, 0x48, 0x8d, 0x15, 0x00, 0x01, 0x00, 0x00, 0x90,
				 0x48, 0x8d, 0x0d, 0xe0, 0xff, 0xff, 0xff, 0xe8, 0, 0, 0, 0 };
	uint64_t n = 0, o = 0;

	CHECK_EQ(torch_lea_decode(code, sizeof(code), 0x1000, &n, &o), 0);
	CHECK_EQ(n, 0x1000 + 1 + 7 + 0x100);
	CHECK_EQ(o, 0x1000 + 9 + 7 - 0x20);
	/* the rcx load missing, or cut by the length: no name */
	CHECK_EQ(torch_lea_decode(code, 9, 0x1000, &n, &o), -ENOENT);
	/* a lea split over the end of the bytes read is not decoded */
	CHECK_EQ(torch_lea_decode(code, 14, 0x1000, &n, &o), -ENOENT);
	CHECK_EQ(torch_lea_decode(code, 0, 0x1000, &n, &o), -ENOENT);
}

static void test_node_names(void)
{
	char out[160];

	CHECK_EQ(torch_node_name("_ZN5torch8autograd9generated14AddmmBackward05applyEOSt6vectorIN2at6TensorESaIS5_EE",
				 out, sizeof(out)), 0);
	CHECK_STR(out, "AddmmBackward0");
	CHECK_EQ(torch_node_name("_ZN5torch8autograd14AccumulateGrad5applyEOSt6vectorIN2at6TensorESaIS4_EE",
				 out, sizeof(out)), 0);
	CHECK_STR(out, "torch::autograd::AccumulateGrad");
	CHECK_EQ(torch_node_name("_ZN5torch11distributed8autograd15SendRpcBackward5applyEOSt6vectorIN2at6TensorESaIS5_EE",
				 out, sizeof(out)), 0);
	CHECK_STR(out, "torch::distributed::autograd::SendRpcBackward");
	/* compiled autograd's twin, clones, a length past the end, not torch */
	CHECK(torch_node_name("_ZN5torch8autograd9generated14AddmmBackward016apply_with_savedERKNS0_18SwapSavedVariablesE", out, sizeof(out)));
	CHECK(torch_node_name("_ZN5torch8autograd9generated14AddmmBackward05applyEOSt6vectorIN2at6TensorESaIS5_EE.cold", out, sizeof(out)));
	CHECK(torch_node_name("_ZN5torch8autograd99Add", out, sizeof(out)));
	CHECK(torch_node_name("_ZN2at4_ops5addmm4callERKNS_6TensorE", out, sizeof(out)));
	CHECK(torch_node_name("_ZN5torch8autograd9generated5applyEOSt6vectorIN2at6TensorESaIS5_EE", out, sizeof(out)));
}

/* evaluate_function names from node vtables, as name() gives them. */
static void test_eval_names(void)
{
	char out[TORCH_NAME_MAX];

	CHECK_EQ(torch_eval_name("_ZTVN5torch8autograd9generated14AddmmBackward0E", out,
				 sizeof(out)), 0);
	CHECK_STR(out, "autograd::engine::evaluate_function: AddmmBackward0");
	CHECK_EQ(torch_eval_name("_ZTVN5torch8autograd14AccumulateGradE", out, sizeof(out)), 0);
	CHECK_STR(out, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad");
	/* not under torch::autograd, too short, not a vtable, anonymous */
	CHECK_EQ(torch_eval_name("_ZTVN5torch3jit5GraphE", out, sizeof(out)), -ENOENT);
	CHECK_EQ(torch_eval_name("_ZTVN5torch8autogradE", out, sizeof(out)), -ENOENT);
	CHECK_EQ(torch_eval_name("_ZTIN5torch8autograd14AccumulateGradE", out, sizeof(out)), -ENOENT);
	CHECK_EQ(torch_eval_name("_ZTVN5torch8autograd12_GLOBAL__N_13FooE", out, sizeof(out)), -ENOENT);
	CHECK_EQ(torch_eval_name("_ZTVN5torch8autograd9generated14AddmmBackward0E", out, 20), -ENOENT);
	/* an identifier that runs past the end */
	CHECK_EQ(torch_eval_name("_ZTVN5torch8autograd99AE", out, sizeof(out)), -ENOENT);
}

static const struct torch_eval *find_eval(const struct torch_file *tf, const char *node)
{
	char want[TORCH_NAME_MAX];
	size_t i;

	snprintf(want, sizeof(want), "%s%s", TORCH_EVAL_PREFIX, node);
	for (i = 0; i < tf->nevals; i++)
		if (!strcmp(tf->evals[i].name, want))
			return &tf->evals[i];
	return NULL;
}

static void test_prefix_names(void)
{
	char *names[] = { "aten::add", "aten::add_", "aten::scatter", "aten::scatter_reduce" };
	char name[160], ov[64];

	CHECK_EQ(torch_prefix_name("add_Tensor", names, 4, name, sizeof(name), ov, sizeof(ov)), 0);
	CHECK_STR(name, "aten::add");
	CHECK_STR(ov, "Tensor");
	CHECK_EQ(torch_prefix_name("add__Tensor", names, 4, name, sizeof(name), ov, sizeof(ov)), 0);
	CHECK_STR(name, "aten::add_");
	CHECK_STR(ov, "Tensor");
	CHECK_EQ(torch_prefix_name("add_", names, 4, name, sizeof(name), ov, sizeof(ov)), 0);
	CHECK_STR(name, "aten::add_");
	CHECK_STR(ov, "");
	/* the documented miss of the fallback */
	CHECK_EQ(torch_prefix_name("scatter_reduce", names, 4, name, sizeof(name), ov, sizeof(ov)), 0);
	CHECK_STR(name, "aten::scatter_reduce");
	CHECK_EQ(torch_prefix_name("mm", names, 4, name, sizeof(name), ov, sizeof(ov)), -ENOENT);
	CHECK(torch_op_unobserved("size_int"));
	CHECK(!torch_op_unobserved("size"));
	CHECK(torch_is_libtorch_cpu("/x/torch/lib/libtorch_cpu.so"));
	CHECK(!torch_is_libtorch_cpu("/x/torch/lib/libtorch_cuda.so"));
}

static const struct torch_sym *find(const struct torch_file *tf, const char *name, const char *ov)
{
	size_t i;

	for (i = 0; i < tf->n; i++)
		if (!strcmp(tf->syms[i].name, name) && (!ov || !strcmp(tf->syms[i].overload, ov)))
			return &tf->syms[i];
	return NULL;
}

/* The venv `make venv` built ($BUILD/venv-torchNNN), or @env's. */
static const char *venv_of(const char *env, const char *name, char *buf, size_t len)
{
	const char *v = getenv(env), *build = getenv("BUILD");

	if (v)
		return v;
	snprintf(buf, len, "%s/%s", build ? build : "build", name);
	return buf;
}

static void check_lib(const char *venv, size_t min_ops, size_t min_nodes)
{
	char path[512];
	struct torch_file tf;
	const struct torch_sym *s;
	size_t i, ops = 0;

	snprintf(path, sizeof(path), "%s/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so", venv);
	if (access(path, R_OK)) {
		/* part of the suite, not optional: CI builds the venvs */
		printf("# %s missing: run `make venv`\n", path);
		CHECK(0);
		return;
	}
	CHECK_EQ(torch_file_discover(path, &tf), 0);
	printf("# %s: %zu ops (%zu exact, %zu prefix, %zu unnamed), %zu nodes, %.3f s\n", path,
	       tf.nops, tf.named_exact, tf.named_prefix, tf.unnamed, tf.nnodes, tf.discover_ns / 1e9);
	CHECK(tf.nops >= min_ops);
	CHECK_EQ(tf.named_exact, tf.nops);
	CHECK(tf.nnodes >= min_nodes);
	CHECK(tf.has_symtab);
	CHECK(tf.scope_enter_off);
	CHECK(tf.scope_end_off);
	CHECK(tf.eval_off);
	CHECK(tf.vaddr_is_off);
	CHECK(tf.nevals >= min_nodes);
	CHECK(find_eval(&tf, "AddmmBackward0"));
	CHECK(find_eval(&tf, "torch::autograd::AccumulateGrad"));
	for (i = 1; i < tf.nevals; i++)
		CHECK(tf.evals[i - 1].va < tf.evals[i].va); /* sorted, each once */
	CHECK((s = find(&tf, "aten::add", "Tensor")) && s->kind == TORCH_OP);
	CHECK(find(&tf, "aten::addmm", ""));
	CHECK(find(&tf, "aten::scatter", "reduce"));
	CHECK(find(&tf, "aten::mm", ""));
	CHECK(!find(&tf, "aten::size", "int"));
	CHECK((s = find(&tf, "AddmmBackward0", NULL)) && s->kind == TORCH_NODE);
	CHECK(find(&tf, "torch::autograd::AccumulateGrad", NULL));
	for (i = 0; i < tf.n; i++)
		ops += tf.syms[i].kind == TORCH_OP;
	CHECK_EQ(ops, tf.nops);
	torch_file_free(&tf);
}

static void test_real_214(void)
{
	char buf[512];

	check_lib(venv_of("FVBPF_TORCH_VENV_214", "venv-torch214", buf, sizeof(buf)), 3098, 700);
}

static void test_real_213(void)
{
	char buf[512];

	check_lib(venv_of("FVBPF_TORCH_VENV_213", "venv-torch213", buf, sizeof(buf)), 3096, 700);
}

/* The op of @tf whose dynamic symbol is @mangled, or NULL. */
static const struct torch_sym *op_by_symbol(const struct torch_file *tf, const char *mangled)
{
	size_t i;

	for (i = 0; i < tf->n; i++)
		if (tf->syms[i].kind == TORCH_OP && tf->syms[i].mangled &&
		    !strcmp(tf->syms[i].mangled, mangled))
			return &tf->syms[i];
	return NULL;
}

/*
 * A stripped copy of libtorch_cpu: objcopy's output, where the caller says
 * (its own layout, which a binutils may choose differently: ops are
 * matched by their dynamic symbol, which stripping keeps, not by offset).
 * 0, or -1 with the reason printed once.
 */
static int strip_copy(const char *path, const char *out)
{
	char cmd[1400];
	int rc;

	snprintf(cmd, sizeof(cmd), "objcopy --strip-all '%s' '%s' 2>&1", path, out);
	rc = system(cmd);
	if (rc) {
		printf("# objcopy --strip-all %s failed (%d); space where it wrote:\n", path, rc);
		snprintf(cmd, sizeof(cmd), "df -h \"$(dirname '%s')\" 2>&1 | sed 's/^/# /'", out);
		if (system(cmd))
			printf("# (df failed too)\n");
		return -1;
	}
	return 0;
}

/*
 * Without .symtab (a stripped build) ops are named by the longest aten::
 * prefix among the file's strings: right for every op of 2.13 but the two
 * the notes document, scatter.reduce and scatter.reduce_out.
 */
static void test_stripped_213(void)
{
	char buf[512], path[512], tmp[] = "/tmp/fvbpf-stripped-XXXXXX";
	struct torch_file full, stripped;
	const struct torch_sym *o;
	size_t i, bad = 0, scatter = 0, missing = 0;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so",
		 venv_of("FVBPF_TORCH_VENV_213", "venv-torch213", buf, sizeof(buf)));
	if (access(path, R_OK) || system("command -v objcopy >/dev/null")) {
		printf("# %s or objcopy (binutils) missing: run `make deps venv`\n", path);
		CHECK(0);
		return;
	}
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	close(fd);
	rc = strip_copy(path, tmp);
	CHECK_EQ(rc, 0);
	if (rc || torch_file_discover(tmp, &stripped)) {
		CHECK(!"a stripped copy to discover");
		unlink(tmp);
		return;
	}
	unlink(tmp);
	CHECK_EQ(torch_file_discover(path, &full), 0);
	CHECK(!stripped.has_symtab);
	CHECK_EQ(stripped.nops, full.nops);
	CHECK_EQ(stripped.named_exact, 0);
	CHECK_EQ(stripped.named_prefix, stripped.nops);
	for (i = 0; i < full.n; i++) {
		if (full.syms[i].kind != TORCH_OP)
			continue;
		o = op_by_symbol(&stripped, full.syms[i].mangled);
		if (!o) {
			if (!missing++)
				printf("# %s (%s) not among the stripped copy's ops\n",
				       full.syms[i].name, full.syms[i].mangled);
			continue;
		}
		if (!strcmp(full.syms[i].name, o->name) &&
		    !strcmp(full.syms[i].overload, o->overload))
			continue;
		bad++;
		scatter += !strcmp(full.syms[i].name, "aten::scatter") &&
			   !strcmp(o->name, "aten::scatter_reduce");
	}
	CHECK_EQ(missing, 0);
	CHECK_EQ(bad, 2);
	CHECK_EQ(scatter, 2);
	torch_file_free(&full);
	torch_file_free(&stripped);
}

int main(void)
{
	RUN(test_lea_decode);
	RUN(test_node_names);
	RUN(test_eval_names);
	RUN(test_prefix_names);
	RUN(test_real_214);
	RUN(test_real_213);
	RUN(test_stripped_213);
	UNIT_DONE();
}
