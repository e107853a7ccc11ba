/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A few objects of a target's CPython read from outside, for what a
 * frame's locals say: the process group a collective was given, the name
 * of a region a decorator opened.  CPython 3.11 to 3.13 (their frames keep
 * locals in localsplus, at the same offsets in the three); 3.10: -ENOTSUP.
 * Every object's type is checked by its type's name before its fields are
 * read, every length is bounded; a wrong guess is an error, never a value.
 */
#ifndef FVBPF_PY_OBJ_H
#define FVBPF_PY_OBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dump/py_walk.h"
#include "proc/python/py_runtime.h"

#define PYO_NAMES_MAX 256   /* a frame's locals looked through */
#define PYO_DICT_MAX 64     /* a dict's entries looked through */

/* The object local @name of @f holds (a code object @f->code): 0, -ENOENT
 * (no such local, or unbound), -ENOTSUP (3.10), -EFAULT. */
int pyo_local(const struct py_runtime *r, const struct pyw_frame *f, const char *name,
	      uint64_t *obj);
/* The position of parameter @name among @code's positional ones: >= 0,
 * or -ENOENT (not one), -ENOTSUP, -EFAULT. */
int pyo_param_index(const struct py_runtime *r, uint64_t code, const char *name);
/* The name of @obj's type ("NoneType", "tuple", ...): 0 or -EFAULT. */
int pyo_type_name(const struct py_runtime *r, uint64_t obj, char *buf, size_t len);
bool pyo_is(const struct py_runtime *r, uint64_t obj, const char *type);
/* A str (1-byte kinds) or bytes object as UTF-8 text, cut to @len - 1
 * bytes: 0, or -EINVAL (another type or kind), -EFAULT. */
int pyo_text(const struct py_runtime *r, uint64_t obj, char *buf, size_t len);
/* Item @idx of a tuple: 0, -ENOENT past its end, -EINVAL not a tuple. */
int pyo_tuple_item(const struct py_runtime *r, uint64_t tuple, unsigned int idx, uint64_t *item);
/* The value of str key @key in a dict: 0, -ENOENT absent, -EINVAL not a
 * dict (or a kind not read: split tables). */
int pyo_dict_get(const struct py_runtime *r, uint64_t dict, const char *key, uint64_t *val);
/* The object a cell holds: 0, -ENOENT empty, -EINVAL not a cell. */
int pyo_cell(const struct py_runtime *r, uint64_t cell, uint64_t *val);

#endif /* FVBPF_PY_OBJ_H */
