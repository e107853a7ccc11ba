// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A shapes record to its string (torch_shapes.h).  Everything in the
 * record came from the target's memory through BPF: each index is checked
 * against what was sent, each tensor's numel against the product of its
 * sizes, before a figure is believed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/torch_abi.h"
#include "pipeline/torch/torch_flops.h"
#include "pipeline/torch/torch_shapes.h"

#define SIZE_MAX_OK (1ull << 48)  /* no real size is larger; garbage often is */

/* caffe2::TypeMeta names (what Kineto writes) by ScalarType index. */
static const char *const dtype_names[] = {
	"unsigned char", "signed char", "short int", "int", "long int", "c10::Half", "float",
	"double", "c10::complex<c10::Half>", "c10::complex<float>", "c10::complex<double>",
	"bool", "c10::qint8", "c10::quint8", "c10::qint32", "c10::BFloat16",
};

struct sbuf {
	char *p;
	size_t len, cap;
	bool full;
};

static void put(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len)
		b->full = true;
	else
		b->len += (size_t)n;
}

/*
 * An undefined tensor (c10::UndefinedTensorImpl) reads as sizes [0], numel
 * 0, like an empty tensor but for its dtype index (@undef_dt, the report's,
 * -1 unknown); one with no dims at all is taken as undefined too.  A dtype
 * below DTYPES_REAL is a real one.
 */
#define DTYPES_REAL (sizeof(dtype_names) / sizeof(dtype_names[0]))
static int undefined(const struct fvbpf_shape_tensor *st, const __u64 *d, int undef_dt)
{
	if (st->ndim == 0 && st->numel == 0)
		return 1;
	if (st->ndim != 1 || d[0] != 0 || st->numel != 0 || st->dtype < DTYPES_REAL)
		return 0;
	return undef_dt >= 0 && st->dtype == (undef_dt & 0xff) ? 1 : -1;
}

/* Tensor @t of the record, checked: its sizes in *@d, or false. */
static bool check_tensor(const struct fvbpf_torch_shapes_event *e, unsigned int ndims,
			 unsigned int t, const __u64 **d, uint8_t *ndim, bool *undef, int undef_dt)
{
	int u;

	const struct fvbpf_shape_tensor *st;
	uint64_t p = 1;
	unsigned int i;

	if (t >= e->ntensors || t >= FVBPF_SHAPE_TENSORS)
		return false;
	st = &e->tensors[t];
	if (st->bad || st->ndim > FVBPF_SHAPE_MAXDIM || st->dim0 + st->ndim > ndims)
		return false;
	u = undefined(st, &e->dims[st->dim0], undef_dt);
	if (u < 0)
		return false; /* empty or undefined: cannot tell */
	*undef = u;
	if (u) {
		*ndim = 0; /* shown as [] */
		*d = &e->dims[st->dim0];
		return true;
	}
	for (i = 0; i < st->ndim; i++) {
		uint64_t v = e->dims[st->dim0 + i];

		if (v >= SIZE_MAX_OK || __builtin_mul_overflow(p, v, &p))
			return false;
	}
	if (p != st->numel)
		return false;
	*d = &e->dims[st->dim0];
	*ndim = st->ndim;
	return true;
}

static void put_dims(struct sbuf *b, const __u64 *d, int n)
{
	int i;

	put(b, "[");
	for (i = 0; i < n; i++)
		put(b, "%s%llu", i ? ", " : "", (unsigned long long)d[i]);
	put(b, "]");
}

static const char *dtype_name(const struct fvbpf_torch_shapes_event *e, unsigned int t)
{
	uint8_t dt = e->tensors[t].dtype;

	return dt < sizeof(dtype_names) / sizeof(dtype_names[0]) ? dtype_names[dt] : "";
}

static const char *sig_type(char c)
{
	return c == TORCH_SIG_SCALAR ? "Scalar" : c == TORCH_SIG_INTS ? "ScalarList" :
	       c == TORCH_SIG_LIST ? "TensorList" : "";
}

/* One argument into its three strings and @sa: false when unknown. */
static bool one_arg(const struct fvbpf_torch_shapes_event *e, unsigned int ndims,
		    const struct fvbpf_shape_arg *a, char sig, int undef_dt, struct sbuf *key,
		    struct sbuf *dims, struct sbuf *types, struct shape_arg *sa)
{
	bool undef;
	unsigned int k;

	memset(sa, 0, sizeof(*sa));
	sa->kind = FVBPF_ARG_OTHER;
	switch (a->kind) {
	case FVBPF_ARG_TENSOR:
	case FVBPF_ARG_OPT:
		if (!check_tensor(e, ndims, a->first, &sa->dims[0], &sa->ndim[0], &undef,
				  undef_dt))
			return false;
		put_dims(key, sa->dims[0], sa->ndim[0]);
		put_dims(dims, sa->dims[0], sa->ndim[0]);
		put(types, "\"%s\"", undef ? "" : dtype_name(e, a->first));
		if (!undef) {
			sa->kind = FVBPF_ARG_TENSOR;
			sa->n = 1;
		}
		return true;
	case FVBPF_ARG_NONE:
		put(key, "[]");
		put(dims, "[]");
		put(types, "\"\"");
		return true;
	case FVBPF_ARG_VEC:
		/* a node's inputs: torch shows each as an argument of its own */
		if (a->count > FVBPF_SHAPE_LIST)
			return false;
		for (k = 0; k < a->count; k++) {
			if (!check_tensor(e, ndims, a->first + k, &sa->dims[k], &sa->ndim[k], &undef,
					  undef_dt))
				return false;
			put(key, "%s", k ? ", " : "");
			put_dims(key, sa->dims[k], sa->ndim[k]);
			put(dims, "%s", k ? ", " : "");
			put_dims(dims, sa->dims[k], sa->ndim[k]);
			put(types, "%s\"%s\"", k ? ", " : "", undef ? "" : dtype_name(e, a->first + k));
		}
		return true;
	case FVBPF_ARG_LIST:
		if (a->count > FVBPF_SHAPE_LIST)
			return false;
		put(key, "[]");
		put(dims, "[");
		for (k = 0; k < a->count; k++) {
			if (!check_tensor(e, ndims, a->first + k, &sa->dims[k], &sa->ndim[k], &undef,
					  undef_dt))
				return false;
			put(dims, "%s", k ? ", " : "");
			put_dims(dims, sa->dims[k], sa->ndim[k]);
		}
		put(dims, "]");
		put(types, "\"TensorList\"");
		sa->kind = FVBPF_ARG_LIST;
		sa->n = a->count;
		return true;
	case FVBPF_ARG_INTS:
	case FVBPF_ARG_INT:
	case FVBPF_ARG_SYMINT:
		if (a->count > FVBPF_SHAPE_INTS || a->first + a->count > ndims)
			return false;
		sa->kind = FVBPF_ARG_INTS;
		sa->n = a->count;
		sa->ints = &e->dims[a->first];
		__attribute__((fallthrough)); /* shown as torch shows any non-tensor */
	case FVBPF_ARG_OTHER:
		put(key, "[]");
		put(dims, "[]");
		put(types, "\"%s\"", sig_type(sig));
		return true;
	default:
		return false; /* BAD, or a kind BPF never sends */
	}
}

int torch_shapes_format(const struct fvbpf_torch_shapes_event *e, size_t size, const char *name,
			const char *sig, char *out, size_t len)
{
	char kb[TORCH_SHAPES_MAX], db[TORCH_SHAPES_MAX], tb[TORCH_SHAPES_MAX / 2];
	struct sbuf key = { kb, 0, sizeof(kb), false }, dims = { db, 0, sizeof(db), false };
	struct sbuf types = { tb, 0, sizeof(tb), false }, o = { out, 0, len, false };
	struct shape_arg sa[FVBPF_SHAPE_ARGS];
	size_t nsig = strcspn(sig, (char[]){ TORCH_SIG_UNDEF, 0 });
	int undef_dt = sig[nsig] ? atoi(sig + nsig + 1) : -1;
	unsigned int ndims, i;

	if (size < FVBPF_SHAPES_FIXED || e->nargs > FVBPF_SHAPE_ARGS || e->ndims > FVBPF_SHAPE_DIMS ||
	    e->cut || e->nargs != nsig)
		return -EINVAL;
	ndims = e->ndims;
	if (size < FVBPF_SHAPES_FIXED + 8 * ndims)
		return -EINVAL;
	put(&key, "[");
	put(&dims, "[");
	put(&types, "[");
	for (i = 0; i < e->nargs; i++) {
		if (i) {
			put(&key, ", ");
			put(&dims, ", ");
			put(&types, ", ");
		}
		if (!one_arg(e, ndims, &e->args[i], sig[i], undef_dt, &key, &dims, &types, &sa[i]))
			return -EINVAL;
	}
	put(&key, "]");
	put(&dims, "]");
	put(&types, "]");
	put(&o, "%s%c%s%c%s%c%llu%c%llu", kb, TORCH_SHAPES_SEP, db, TORCH_SHAPES_SEP, tb,
	    TORCH_SHAPES_SEP, (unsigned long long)torch_flops(name, sa, (int)e->nargs),
	    TORCH_SHAPES_SEP, (unsigned long long)torch_flops_extra(name, sa, (int)e->nargs));
	return key.full || dims.full || types.full || o.full ? -EINVAL : 0;
}

void torch_shapes_tally(const struct fvbpf_torch_shapes_event *e, size_t size, unsigned int *fit,
			unsigned int *misfit)
{
	const struct fvbpf_shape_tensor *st;
	unsigned int t, i, n;
	uint64_t p;
	bool ok;

	*fit = *misfit = 0;
	if (size < FVBPF_SHAPES_FIXED || e->ndims > FVBPF_SHAPE_DIMS ||
	    size < FVBPF_SHAPES_FIXED + 8 * (size_t)e->ndims)
		return;
	n = e->ntensors < FVBPF_SHAPE_TENSORS ? e->ntensors : FVBPF_SHAPE_TENSORS;
	for (t = 0; t < n; t++) {
		st = &e->tensors[t];
		if (st->bad || st->ndim > FVBPF_SHAPE_MAXDIM || st->dim0 + st->ndim > e->ndims ||
		    (st->ndim == 0 && st->numel == 0))
			continue; /* unreadable, past a bound, or undefined: no evidence */
		ok = true;
		p = 1;
		for (i = 0; i < st->ndim && ok; i++) {
			uint64_t v = e->dims[st->dim0 + i];

			ok = v < SIZE_MAX_OK && !__builtin_mul_overflow(p, v, &p);
		}
		if (ok && p == st->numel)
			(*fit)++;
		else
			(*misfit)++;
	}
}

int torch_shapes_split(const char *rec, struct torch_shapes_view *v)
{
	const char *f[5];
	int i;

	f[0] = rec;
	for (i = 1; i < 5; i++) {
		f[i] = strchr(f[i - 1], TORCH_SHAPES_SEP);
		if (!f[i])
			return -EINVAL;
		f[i]++;
	}
	v->key = f[0];
	v->key_len = (size_t)(f[1] - f[0] - 1);
	v->dims = f[1];
	v->dims_len = (size_t)(f[2] - f[1] - 1);
	v->types = f[2];
	v->types_len = (size_t)(f[3] - f[2] - 1);
	v->flops = strtoull(f[3], NULL, 10);
	v->extra = strtoull(f[4], NULL, 10);
	return 0;
}
