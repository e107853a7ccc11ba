/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --record-shapes: from the report the target's own torch gave
 * (proc/torch/torch_layout.h), each operator's plan for BPF: where the x86-64
 * System V convention puts each argument of `at::_ops::<op>::call` (the
 * C++ types torch's code generator gives each schema type; an op returning
 * a class by value takes a hidden sret pointer in rdi first; an ArrayRef
 * takes two registers, or two stack slots when fewer are left; a double
 * takes an XMM register; a struct over 16 bytes goes on the stack; a
 * non-trivially-copyable one by invisible reference).  An op with a type
 * this table does not know gets no plan: its shapes are unknown, never
 * guessed.
 */
#ifndef FVBPF_TORCH_ABI_H
#define FVBPF_TORCH_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fvbpf_shapes.h"

/* One character per argument for the output (Kineto's "Input type"). */
#define TORCH_SIG_TENSOR 'T'    /* its dtype */
#define TORCH_SIG_OPT 'O'       /* its dtype, or "" when empty */
#define TORCH_SIG_LIST 'L'      /* "TensorList" */
#define TORCH_SIG_SCALAR 'S'    /* "Scalar" */
#define TORCH_SIG_INTS 'l'      /* "ScalarList" */
#define TORCH_SIG_OPTIONAL 'o'  /* set or not: not known out of process, "" */
#define TORCH_SIG_OTHER '?'     /* "" */
#define TORCH_SIG_VEC 'V'       /* a node's inputs: each its own entry, its dtype */

/*
 * The plan of one schema: @ret its return ("void", "Tensor", "Tensor!" for a
 * Tensor(a!), "tuple", ...), @types its argument types (alias sets
 * stripped, "!" kept).  Fills @plan (layout left alone) and @sig
 * (@nargs + 1 bytes).  0, or -ENOTSUP (a type it does not know, more than
 * FVBPF_SHAPE_ARGS arguments).
 */
int torch_abi_plan(const char *ret, char *const *types, int ntypes, struct fvbpf_shape_plan *plan,
		   char *sig);

/*
 * The placement the library's own symbol gives: @mangled is
 * `at::_ops::<op>::call(...)`'s name, @sret whether a hidden result
 * pointer comes first.  0, or -ENOTSUP for a parameter type it does not
 * know.  (torch_abi_cxx.c)
 */
int torch_abi_cxx_plan(const char *mangled, bool sret, struct fvbpf_shape_plan *plan);
/* Do the schema's plan and the symbol's agree on every argument's kind?
 * 0 and @schema takes the symbol's placement, or -ENOTSUP. */
int torch_abi_agree(struct fvbpf_shape_plan *schema, const struct fvbpf_shape_plan *cxx);

/*
 * The layout from the report's "impl SIZES INLINE NUMEL DTYPE" line and its
 * vtables from "vtable OFF" and "undef DTYPE OFF" (offsets into libc10.so,
 * mapped at @c10_base in the target): 0, or -EINVAL (no plain TensorImpl
 * vtable, an offset past the window).
 */
int torch_abi_layout(const char *text, uint64_t c10_base, struct fvbpf_tensor_layout *lay);

/*
 * The dtype index of c10::UndefinedTensorImpl (an undefined tensor: sizes
 * [0], numel 0, like an empty one but for this) from the "undef N" line,
 * or -1.  The pipeline gets it after the argument letters of a plan's sig
 * string: "TTO@47" (TORCH_SIG_UNDEF).
 */
int torch_abi_undef_dtype(const char *text);
#define TORCH_SIG_UNDEF '@'

struct torch_schemas;
/* The report's "op" lines, indexed: 0 or -errno. */
int torch_schemas_parse(const char *text, struct torch_schemas **out);
/* The plan of (@name, @overload ("" none)) whose entry point is the
 * symbol @mangled, schema and symbol agreeing: 0, -ENOENT (no such
 * schema), -ENOTSUP. */
int torch_schemas_plan(const struct torch_schemas *s, const char *name, const char *overload,
		       const char *mangled, struct fvbpf_shape_plan *plan, char *sig);
size_t torch_schemas_count(const struct torch_schemas *s);
void torch_schemas_free(struct torch_schemas *s);

#endif /* FVBPF_TORCH_ABI_H */
