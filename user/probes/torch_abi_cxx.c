// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The other half of a plan (torch_abi.h): the C++ parameter types the
 * library's own symbol names (`at::_ops::cat::call(c10::IListRef<at::Tensor>
 * const&, long)`), placed by the same System V rules.  A schema says what
 * an argument is; the symbol says how the build passes it (cat's Tensor[]
 * is an ITensorListRef by reference, not an ArrayRef by value).  A plan is
 * kept only where both agree on every argument.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "proc/elf/demangle.h"
#include "probes/torch_abi.h"

enum { C_INT1, C_INT2, C_XMM, C_XMM_INT1, C_MEM3 };

struct cxx_type {
	const char *prefix;     /* the demangled type starts with this ... */
	bool whole;             /* ... or is exactly this */
	uint8_t cls, kind;
};

/* First match wins: the specific before the general. */
static const struct cxx_type cxx_types[] = {
	{ "at::Tensor const&", true, C_INT1, FVBPF_ARG_TENSOR },
	{ "at::Tensor&", true, C_INT1, FVBPF_ARG_TENSOR },
	{ "std::optional<at::Tensor> const&", true, C_INT1, FVBPF_ARG_OPT },
	{ "c10::ArrayRef<at::Tensor>", true, C_INT2, FVBPF_ARG_LIST },
	{ "c10::IListRef<at::Tensor> const&", true, C_INT1, FVBPF_ARG_ILIST },
	{ "long", true, C_INT1, FVBPF_ARG_INT },
	{ "c10::SymInt", true, C_INT1, FVBPF_ARG_SYMINT },     /* non-trivial: by reference */
	{ "c10::ArrayRef<long>", true, C_INT2, FVBPF_ARG_INTS },
	{ "c10::ArrayRef<c10::SymInt>", true, C_INT2, FVBPF_ARG_INTS },
	{ "c10::ArrayRef<", false, C_INT2, FVBPF_ARG_OTHER },
	{ "double", true, C_XMM, FVBPF_ARG_OTHER },
	{ "std::optional<double>", true, C_XMM_INT1, FVBPF_ARG_OTHER },
	{ "std::optional<long>", true, C_INT2, FVBPF_ARG_OTHER },
	{ "std::optional<at::Dimname>", true, C_INT2, FVBPF_ARG_OTHER },
	{ "std::optional<c10::SymInt>", true, C_INT1, FVBPF_ARG_OTHER },   /* by reference */
	{ "std::optional<at::Generator>", true, C_INT1, FVBPF_ARG_OTHER }, /* by reference */
	{ "std::optional<c10::ScalarType>", true, C_INT1, FVBPF_ARG_OTHER },
	{ "std::optional<c10::Layout>", true, C_INT1, FVBPF_ARG_OTHER },
	{ "std::optional<c10::MemoryFormat>", true, C_INT1, FVBPF_ARG_OTHER },
	{ "std::optional<c10::Device>", true, C_INT1, FVBPF_ARG_OTHER },
	{ "std::optional<bool>", true, C_INT1, FVBPF_ARG_OTHER },
	{ "std::optional<std::basic_string_view<", false, C_MEM3, FVBPF_ARG_OTHER },
	{ "std::optional<c10::basic_string_view<", false, C_MEM3, FVBPF_ARG_OTHER },
	{ "c10::OptionalArrayRef<", false, C_MEM3, FVBPF_ARG_OTHER },
	{ "std::optional<c10::ArrayRef<", false, C_MEM3, FVBPF_ARG_OTHER },
	{ "c10::Stream", true, C_INT2, FVBPF_ARG_OTHER },
	{ "std::basic_string_view<", false, C_INT2, FVBPF_ARG_OTHER },
	{ "c10::basic_string_view<", false, C_INT2, FVBPF_ARG_OTHER },
	{ "std::array<bool, ", false, C_INT1, FVBPF_ARG_OTHER },
	{ "bool", true, C_INT1, FVBPF_ARG_OTHER },
	{ "c10::ScalarType", true, C_INT1, FVBPF_ARG_OTHER },
	{ "c10::Layout", true, C_INT1, FVBPF_ARG_OTHER },
	{ "c10::MemoryFormat", true, C_INT1, FVBPF_ARG_OTHER },
	{ "c10::Device", true, C_INT1, FVBPF_ARG_OTHER },
	{ "c10::QScheme", true, C_INT1, FVBPF_ARG_OTHER },
	{ "at::Dimname", true, C_INT1, FVBPF_ARG_OTHER },
};

static const struct cxx_type *cxx_lookup(const char *t, size_t n)
{
	static const struct cxx_type any_ref = { "&", false, C_INT1, FVBPF_ARG_OTHER };
	size_t i, pl;

	for (i = 0; i < sizeof(cxx_types) / sizeof(cxx_types[0]); i++) {
		pl = strlen(cxx_types[i].prefix);
		if (cxx_types[i].whole ? pl == n && !strncmp(t, cxx_types[i].prefix, n) :
					 pl < n && !strncmp(t, cxx_types[i].prefix, pl))
			return &cxx_types[i];
	}
	/* any other reference (Scalar, List<optional<Tensor>>, Storage): a pointer */
	if (n && t[n - 1] == '&')
		return &any_ref;
	return NULL;
}

/* The same rules as torch_abi.c's place(), for one class. */
static void place(uint8_t cls, int *ireg, int *xmm, int *slot, uint8_t *loc)
{
	*loc = 0;
	if (cls == C_INT1) {
		*loc = (uint8_t)(*ireg < 6 ? (*ireg)++ : 6 + (*slot)++);
	} else if (cls == C_INT2) {
		if (*ireg <= 4) {
			*loc = (uint8_t)*ireg;
			*ireg += 2;
		} else {
			*loc = (uint8_t)(6 + *slot);
			*slot += 2;
		}
	} else if (cls == C_XMM) {
		if (*xmm < 8)
			(*xmm)++;
		else
			(*slot)++;
	} else if (cls == C_XMM_INT1) {
		if (*xmm < 8 && *ireg < 6) {
			(*xmm)++;
			(*ireg)++;
		} else {
			*slot += 2;
		}
	} else {
		*slot += 3;
	}
}

/* The parameter list of "at::_ops::X::call(...)" in @d: [*b, *e). */
static int params_of(const char *d, const char **b, const char **e)
{
	const char *p = strstr(d, "::call(");
	int depth = 0;

	if (!p)
		return -EINVAL;
	*b = p + 7;
	for (p = *b; *p; p++) {
		if (*p == '(' || *p == '<')
			depth++;
		else if (*p == '>' || (*p == ')' && depth))
			depth--;
		else if (*p == ')')
			break;
	}
	if (*p != ')' || p[1])
		return -EINVAL; /* a cut name, or not a plain function */
	*e = p;
	return 0;
}

int torch_abi_cxx_plan(const char *mangled, bool sret, struct fvbpf_shape_plan *plan)
{
	char d[DEMANGLE_OUT_MAX + 1];
	const char *b, *e, *p, *start;
	const struct cxx_type *t;
	int ireg = sret ? 1 : 0, xmm = 0, slot = 0, n = 0, depth = 0;

	if (!mangled || demangle(mangled, d, sizeof(d)) || params_of(d, &b, &e))
		return -ENOTSUP;
	memset(plan->args, 0, sizeof(plan->args));
	for (start = p = b; p <= e; p++) {
		if (p < e && (*p == '<' || *p == '('))
			depth++;
		else if (p < e && (*p == '>' || *p == ')'))
			depth--;
		if (p < e && (*p != ',' || depth))
			continue;
		while (*start == ' ')
			start++;
		if (p == start)
			break; /* "()" */
		if (n >= FVBPF_SHAPE_ARGS || !(t = cxx_lookup(start, (size_t)(p - start))))
			return -ENOTSUP;
		plan->args[n].kind = t->kind;
		place(t->cls, &ireg, &xmm, &slot, &plan->args[n].loc);
		if (slot > 32)
			return -ENOTSUP;
		n++;
		start = p + 1;
	}
	plan->nargs = (uint8_t)n;
	return 0;
}

int torch_abi_agree(struct fvbpf_shape_plan *schema, const struct fvbpf_shape_plan *cxx)
{
	int i;

	if (schema->nargs != cxx->nargs)
		return -ENOTSUP;
	for (i = 0; i < schema->nargs; i++) {
		uint8_t s = schema->args[i].kind, c = cxx->args[i].kind;

		if (!(s == c || (s == FVBPF_ARG_LIST && c == FVBPF_ARG_ILIST)))
			return -ENOTSUP;
		schema->args[i] = cxx->args[i];
	}
	return 0;
}
