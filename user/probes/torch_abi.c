// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Schemas to BPF plans (torch_abi.h).  The report is the target's: every
 * line is bounded, every number range-checked, and what does not parse
 * gives no plan.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/torch_abi.h"

/* How an argument travels (x86-64 System V). */
enum abi_class {
	C_INT1,         /* one integer register (or stack slot) */
	C_INT2,         /* two: an ArrayRef, a string_view, an optional<int64_t> */
	C_XMM,          /* double */
	C_XMM_INT1,     /* optional<double>: an XMM and an integer register */
	C_MEM3,         /* 24 bytes on the stack: optional<ArrayRef>, optional<string_view> */
};

struct abi_type {
	const char *name;
	uint8_t cls, kind;
	char sig;
};

static const struct abi_type abi_types[] = {
	{ "Tensor", C_INT1, FVBPF_ARG_TENSOR, TORCH_SIG_TENSOR },
	{ "Tensor?", C_INT1, FVBPF_ARG_OPT, TORCH_SIG_OPT },
	{ "Tensor[]", C_INT2, FVBPF_ARG_LIST, TORCH_SIG_LIST },
	{ "Tensor?[]", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OTHER },   /* const List<optional<Tensor>> & */
	{ "int", C_INT1, FVBPF_ARG_INT, TORCH_SIG_SCALAR },
	{ "SymInt", C_INT1, FVBPF_ARG_SYMINT, TORCH_SIG_SCALAR },    /* by invisible reference */
	{ "int[]", C_INT2, FVBPF_ARG_INTS, TORCH_SIG_INTS },
	{ "SymInt[]", C_INT2, FVBPF_ARG_INTS, TORCH_SIG_INTS },
	{ "bool", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_SCALAR },
	{ "ScalarType", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_SCALAR },
	{ "Layout", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_SCALAR },
	{ "MemoryFormat", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_SCALAR },
	{ "Device", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OTHER },
	{ "QScheme", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_SCALAR },
	{ "Dimname", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OTHER },
	{ "ScalarType?", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "Layout?", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "MemoryFormat?", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "Device?", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "bool?", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "int?", C_INT2, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "SymInt?", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },  /* by invisible reference */
	{ "Dimname?", C_INT2, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "float", C_XMM, FVBPF_ARG_OTHER, TORCH_SIG_SCALAR },
	{ "float?", C_XMM_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "Scalar", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_SCALAR },     /* const Scalar & */
	{ "Scalar?", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "Generator?", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "str", C_INT2, FVBPF_ARG_OTHER, TORCH_SIG_OTHER },         /* string_view */
	{ "str?", C_MEM3, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "int[]?", C_MEM3, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "SymInt[]?", C_MEM3, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "float[]?", C_MEM3, FVBPF_ARG_OTHER, TORCH_SIG_OPTIONAL },
	{ "float[]", C_INT2, FVBPF_ARG_OTHER, TORCH_SIG_INTS },
	{ "Scalar[]", C_INT2, FVBPF_ARG_OTHER, TORCH_SIG_INTS },
	{ "Dimname[]", C_INT2, FVBPF_ARG_OTHER, TORCH_SIG_OTHER },
	{ "Stream", C_INT2, FVBPF_ARG_OTHER, TORCH_SIG_OTHER },        /* 16 bytes, trivial */
};

/* Returns in rax/xmm0: everything else is a class returned through sret. */
static const char *const reg_returns[] = {
	"void", "Tensor!", "bool", "int", "float", "ScalarType", "QScheme", "Layout", "Device",
};

/* "int[2]" -> "int[]", "SymInt[3]?" -> "SymInt[]?", "bool[3]" stays (std::array). */
static void normalise(const char *t, char *out, size_t len)
{
	const char *b = strchr(t, '[');
	size_t i = 0;

	if (!b || !strncmp(t, "bool[", 5)) {
		snprintf(out, len, "%s", t);
	} else {
		snprintf(out, len, "%.*s[]", (int)(b - t), t);
		i = strlen(out);
		b = strchr(b, ']');
		if (b && i < len)
			snprintf(out + i, len - i, "%s", b + 1);
	}
	i = strlen(out);
	if (i && out[i - 1] == '!')
		out[i - 1] = '\0'; /* written or not, the same C++ type but for const */
}

static const struct abi_type *abi_lookup(const char *t)
{
	static const struct abi_type bool_array = { "bool[N]", C_INT1, FVBPF_ARG_OTHER, TORCH_SIG_INTS };
	char n[64];
	size_t i;

	if (strlen(t) >= sizeof(n))
		return NULL;
	normalise(t, n, sizeof(n));
	if (!strncmp(n, "bool[", 5) && n[5] >= '1' && n[5] <= '8' && n[6] == ']' && !n[7])
		return &bool_array; /* std::array<bool, N>, N <= 8 bytes */
	for (i = 0; i < sizeof(abi_types) / sizeof(abi_types[0]); i++)
		if (!strcmp(abi_types[i].name, n))
			return &abi_types[i];
	return NULL;
}

static bool ret_in_regs(const char *ret)
{
	size_t i;

	for (i = 0; i < sizeof(reg_returns) / sizeof(reg_returns[0]); i++)
		if (!strcmp(reg_returns[i], ret))
			return true;
	return false;
}

/* Where an argument of class @cls goes: a register or stack slot in *@loc. */
static void place(uint8_t cls, int *ireg, int *xmm, int *slot, uint8_t *loc)
{
	switch (cls) {
	case C_INT1:
		*loc = (uint8_t)(*ireg < 6 ? (*ireg)++ : 6 + (*slot)++);
		break;
	case C_INT2:
		if (*ireg <= 4) {
			*loc = (uint8_t)*ireg;
			*ireg += 2;
		} else {
			*loc = (uint8_t)(6 + *slot);
			*slot += 2;
		}
		break;
	case C_XMM:
		if (*xmm < 8)
			(*xmm)++;
		else
			(*slot)++;
		break;
	case C_XMM_INT1:
		if (*xmm < 8 && *ireg < 6) {
			(*xmm)++;
			(*ireg)++;
		} else {
			*slot += 2;
		}
		break;
	default:
		*slot += 3;
		break;
	}
}

int torch_abi_plan(const char *ret, char *const *types, int ntypes, struct fvbpf_shape_plan *plan,
		   char *sig)
{
	int ireg, xmm = 0, slot = 0, i;
	const struct abi_type *t;

	if (ntypes < 0 || ntypes > FVBPF_SHAPE_ARGS)
		return -ENOTSUP;
	ireg = ret_in_regs(ret) ? 0 : 1;
	if (ireg && (!strcmp(ret, "Tensor[]!") || !strcmp(ret, "SymBool") || ret[0] == '_'))
		return -ENOTSUP; /* not sure how these come back */
	memset(plan->args, 0, sizeof(plan->args));
	for (i = 0; i < ntypes; i++) {
		t = abi_lookup(types[i]);
		if (!t)
			return -ENOTSUP;
		plan->args[i].kind = t->kind;
		place(t->cls, &ireg, &xmm, &slot, &plan->args[i].loc);
		if (slot > 32)
			return -ENOTSUP;
		sig[i] = t->sig;
	}
	sig[ntypes] = '\0';
	plan->nargs = (uint8_t)ntypes;
	return 0;
}

int torch_abi_undef_dtype(const char *text)
{
	const char *l = strstr(text, "\nundef ");
	unsigned int v;

	return l && sscanf(l + 7, "%u", &v) == 1 && v < 65536 ? (int)v : -1;
}

int torch_abi_layout(const char *text, uint64_t c10_base, struct fvbpf_tensor_layout *lay)
{
	const char *l = strstr(text, "\nimpl "), *v = strstr(text, "\nvtable "), *u;
	unsigned int so, inl, numel, dt, end;
	unsigned long long dense, undef;

	if (!l || sscanf(l + 6, "%u %u %u %u", &so, &inl, &numel, &dt) != 4 || !v ||
	    sscanf(v + 8, "%llu", &dense) != 1 || !dense || !c10_base)
		return -EINVAL;
	if (so % 8 || numel % 8 || inl < 1 || inl > FVBPF_SHAPE_MAXDIM ||
	    so > FVBPF_SHAPE_WINDOW - 8 * (FVBPF_SHAPE_MAXDIM + 1) || numel > FVBPF_SHAPE_WINDOW - 8 ||
	    dt > FVBPF_SHAPE_WINDOW - 2)
		return -EINVAL;
	memset(lay, 0, sizeof(*lay));
	lay->sizes_at = (uint8_t)so;
	lay->sizes_inline = (uint8_t)inl;
	lay->numel_at = (uint8_t)numel;
	lay->dtype_at = (uint8_t)dt;
	end = so + 8 * (inl + 1);
	end = numel + 8 > end ? numel + 8 : end;
	end = dt + 2 > end ? dt + 2 : end;
	lay->win_len = (uint16_t)end;
	lay->vptr_dense = c10_base + dense;
	u = strstr(text, "\nundef ");
	if (u && sscanf(u + 7, "%*u %llu", &undef) == 1 && undef)
		lay->vptr_undef = c10_base + undef;
	return 0;
}

#define SCHEMA_MAX 65536        /* schemas kept (torch 2.14: 4,400) */

struct schema {
	const char *name, *overload, *ret;
	char *types[FVBPF_SHAPE_ARGS + 1];
	int ntypes;             /* > FVBPF_SHAPE_ARGS: too many to plan */
};

struct torch_schemas {
	char *buf;              /* the report's copy, cut into words */
	struct schema *s;
	size_t n;
};

static int cmp_schema(const void *a, const void *b)
{
	const struct schema *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->overload, y->overload);
}

/* "op NAME OVERLOAD RET TYPE..." (words cut in place): 0, or -EINVAL. */
static int parse_line(char *line, struct schema *s)
{
	char *w[4 + FVBPF_SHAPE_ARGS + 1], *save = NULL, *t;
	int n = 0;

	for (t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		if (n < (int)(sizeof(w) / sizeof(w[0])))
			w[n++] = t;
		else
			n++;
	if (n < 5 || strcmp(w[0], "op"))
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->name = w[1];
	s->overload = strcmp(w[2], "-") ? w[2] : "";
	s->ret = w[3];
	s->ntypes = strcmp(w[4], "-") || n > 5 ? n - 4 : 0;
	for (n = 0; n < s->ntypes && n <= FVBPF_SHAPE_ARGS; n++)
		s->types[n] = w[4 + n];
	return 0;
}

int torch_schemas_parse(const char *text, struct torch_schemas **out)
{
	struct torch_schemas *ts = calloc(1, sizeof(*ts));
	char *line, *save = NULL;
	size_t cap = 0;

	if (!ts || !(ts->buf = strdup(text))) {
		free(ts);
		return -ENOMEM;
	}
	for (line = strtok_r(ts->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "op ", 3) || strlen(line) > 4096 || ts->n >= SCHEMA_MAX)
			continue;
		if (ts->n == cap) {
			struct schema *s = realloc(ts->s, (cap ? cap * 2 : 1024) * sizeof(*s));

			if (!s) {
				torch_schemas_free(ts);
				return -ENOMEM;
			}
			ts->s = s;
			cap = cap ? cap * 2 : 1024;
		}
		if (!parse_line(line, &ts->s[ts->n]))
			ts->n++;
	}
	if (ts->n)
		qsort(ts->s, ts->n, sizeof(*ts->s), cmp_schema);
	*out = ts;
	return 0;
}

int torch_schemas_plan(const struct torch_schemas *ts, const char *name, const char *overload,
		       const char *mangled, struct fvbpf_shape_plan *plan, char *sig)
{
	struct schema key = { .name = name, .overload = overload };
	struct fvbpf_shape_plan cxx;
	const struct schema *s;
	int err;

	s = ts->n ? bsearch(&key, ts->s, ts->n, sizeof(*ts->s), cmp_schema) : NULL;
	if (!s)
		return -ENOENT;
	if (s->ntypes > FVBPF_SHAPE_ARGS)
		return -ENOTSUP;
	err = torch_abi_plan(s->ret, s->types, s->ntypes, plan, sig);
	if (!err)
		err = torch_abi_cxx_plan(mangled, !ret_in_regs(s->ret), &cxx);
	return err ? err : torch_abi_agree(plan, &cxx);
}

size_t torch_schemas_count(const struct torch_schemas *ts)
{
	return ts->n;
}

void torch_schemas_free(struct torch_schemas *ts)
{
	if (!ts)
		return;
	free(ts->s);
	free(ts->buf);
	free(ts);
}
