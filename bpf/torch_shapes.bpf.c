// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * --record-shapes: an operator's entry inside a segment, with what its
 * plan says to read of its arguments (include/fvbpf_shapes.h).  Every read
 * is a bounded bpf_probe_read_user of the target's memory; what fails is
 * marked bad and the loader calls the shape unknown.  Only operators with a
 * plan pay for it: without --record-shapes the plan map is empty and the
 * entry costs one lookup more.
 */
#include "fvbpf_shapes.h"

/* torch id -> plan, filled by the loader (user/probes/torch_abi.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);  /* filled with --record-shapes only */
	__uint(max_entries, 262144);
	__type(key, __u32);
	__type(value, struct fvbpf_shape_plan);
} torch_plans SEC(".maps");

/* The record is built here, then copied into the ring at its used size;
 * the window of the TensorImpl being read beside it (one lookup an op). */
struct shape_scratch {
	struct fvbpf_torch_shapes_event e;
	__u8 win[FVBPF_SHAPE_WINDOW];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shape_scratch);
} shapes_buf SEC(".maps");

/* An argument's 8 bytes: a register, or a stack slot above the return address. */
static __always_inline int arg_word(struct pt_regs *ctx, __u8 loc, __u64 *v)
{
	switch (loc) {
	case 0: *v = PT_REGS_PARM1(ctx); return 0;
	case 1: *v = PT_REGS_PARM2(ctx); return 0;
	case 2: *v = PT_REGS_PARM3(ctx); return 0;
	case 3: *v = PT_REGS_PARM4(ctx); return 0;
	case 4: *v = PT_REGS_PARM5(ctx); return 0;
	case 5: *v = ctx->r9; return 0; /* x86-64 */
	default:
		if (loc > 6 + 32)
			return -1;
		return bpf_probe_read_user(v, 8, (const void *)(PT_REGS_SP(ctx) + 8 + 8 * (loc - 6)));
	}
}

/*
 * One TensorImpl into tensors[ntensors] and its sizes into dims[ndims..]:
 * only a plain TensorImpl (its vtable) is read; UndefinedTensorImpl is
 * sent as no dims and numel 0; any other class is bad.
 */
static __noinline int read_impl(struct fvbpf_torch_shapes_event *e, __u64 impl,
				const struct fvbpf_tensor_layout *lay)
{
	struct shape_scratch *w = (struct shape_scratch *)e; /* e is its first member */
	__u32 t = e->ntensors, d = e->ndims, i, n, len = lay->win_len;
	struct fvbpf_shape_tensor *st;
	__u64 ndim, ool, vptr;

	if (t >= FVBPF_SHAPE_TENSORS)
		return -1;
	st = &e->tensors[t];
	e->ntensors = t + 1;
	st->bad = 1;
	st->ndim = 0;
	st->numel = 0;
	st->dim0 = d;
	if (!impl || len < 16 || len > FVBPF_SHAPE_WINDOW ||
	    bpf_probe_read_user(w->win, len, (const void *)impl))
		return 0;
	vptr = *(__u64 *)&w->win[0];
	if (vptr == lay->vptr_undef && vptr) {
		st->bad = 0; /* undefined: [] */
		return 0;
	}
	if (vptr != lay->vptr_dense)
		return 0;
	if (lay->sizes_at > FVBPF_SHAPE_WINDOW - 8 * (FVBPF_SHAPE_MAXDIM + 1) ||
	    lay->numel_at > FVBPF_SHAPE_WINDOW - 8 || lay->dtype_at > FVBPF_SHAPE_WINDOW - 1)
		return 0;
	ndim = *(__u64 *)&w->win[lay->sizes_at];
	st->numel = *(__u64 *)&w->win[lay->numel_at];
	st->dtype = w->win[lay->dtype_at];
	if (ndim > FVBPF_SHAPE_MAXDIM || d + ndim > FVBPF_SHAPE_DIMS) {
		st->ndim = ndim > 255 ? 255 : (__u8)ndim;
		e->cut = 1;
		return 0;
	}
	n = (__u32)ndim;
	st->ndim = (__u8)n;
	if (d > FVBPF_SHAPE_DIMS - FVBPF_SHAPE_MAXDIM)
		return 0;
	if (n <= lay->sizes_inline) {
		for (i = 0; i < FVBPF_SHAPE_MAXDIM; i++) {
			if (i >= n)
				break;
			e->dims[d + i] = *(__u64 *)&w->win[lay->sizes_at + 8 + 8 * i];
		}
	} else {
		/* out of line: sizes, then strides, at least 2 * ndim words */
		ool = *(__u64 *)&w->win[lay->sizes_at + 8];
		if (bpf_probe_read_user(&e->dims[d], 8 * FVBPF_SHAPE_MAXDIM, (const void *)ool))
			return 0;
	}
	e->ndims = d + n;
	st->bad = 0;
	return 0;
}

/* A const at::Tensor & or an optional's payload: the TensorImpl pointer at @p. */
static __always_inline void read_tensor_ref(struct fvbpf_torch_shapes_event *e,
					    struct fvbpf_shape_arg *a, __u64 p,
					    const struct fvbpf_tensor_layout *lay, bool opt)
{
	__u64 w[2] = {};

	a->first = e->ntensors;
	a->count = 1;
	if (bpf_probe_read_user(w, opt ? 16 : 8, (const void *)p)) {
		a->kind = FVBPF_ARG_BAD;
		return;
	}
	if (opt && !(w[1] & 0xff)) {
		a->kind = FVBPF_ARG_NONE; /* std::optional: payload, then engaged */
		a->count = 0;
		return;
	}
	if (read_impl(e, w[0], lay))
		a->kind = FVBPF_ARG_BAD;
}

static __always_inline void read_list(struct pt_regs *ctx, struct fvbpf_torch_shapes_event *e,
				      struct fvbpf_shape_arg *a, __u8 loc,
				      const struct fvbpf_tensor_layout *lay)
{
	__u64 ptr, len, impl;
	__u32 i;

	a->first = e->ntensors;
	if (a->kind == FVBPF_ARG_VEC) {
		/* std::vector: begin, end (8-byte at::Tensor elements) */
		__u64 w[2];

		if (arg_word(ctx, loc, &ptr) || bpf_probe_read_user(w, sizeof(w), (const void *)ptr) ||
		    w[1] < w[0] || (w[1] - w[0]) % 8) {
			a->kind = FVBPF_ARG_BAD;
			return;
		}
		ptr = w[0];
		len = (w[1] - w[0]) / 8;
	} else if (a->kind == FVBPF_ARG_ILIST) {
		/* IListRef: payload (an ArrayRef when unboxed), then the tag */
		__u64 w[3];

		a->kind = FVBPF_ARG_LIST;
		if (arg_word(ctx, loc, &ptr) || bpf_probe_read_user(w, sizeof(w), (const void *)ptr) ||
		    (__u32)w[2] != 0) {
			a->kind = FVBPF_ARG_BAD;
			return;
		}
		ptr = w[0];
		len = w[1];
	} else if (arg_word(ctx, loc, &ptr) || arg_word(ctx, loc + 1, &len)) {
		a->kind = FVBPF_ARG_BAD;
		return;
	}
	if (len > FVBPF_SHAPE_LIST) {
		a->kind = FVBPF_ARG_BAD;
		return;
	}
	a->count = (__u8)len;
	for (i = 0; i < FVBPF_SHAPE_LIST; i++) {
		if (i >= len)
			break;
		if (bpf_probe_read_user(&impl, 8, (const void *)(ptr + 8 * i)) || read_impl(e, impl, lay)) {
			a->kind = FVBPF_ARG_BAD;
			return;
		}
	}
}

static __always_inline void read_ints(struct pt_regs *ctx, struct fvbpf_torch_shapes_event *e,
				      struct fvbpf_shape_arg *a, __u8 kind, __u8 loc)
{
	__u64 v, len = 1;
	__u32 d = e->ndims, j;

	a->first = d;
	if (arg_word(ctx, loc, &v) || (kind == FVBPF_ARG_INTS && arg_word(ctx, loc + 1, &len)) ||
	    len > FVBPF_SHAPE_INTS || d > FVBPF_SHAPE_DIMS - FVBPF_SHAPE_INTS) {
		a->kind = FVBPF_ARG_BAD;
		return;
	}
	a->count = (__u8)len;
	if (kind == FVBPF_ARG_INT) {
		e->dims[d] = v;
	} else {
		/* a SymInt's payload, or an int list's elements (SymInts too) */
		for (j = 0; j < FVBPF_SHAPE_INTS; j++) {
			if (j >= len)
				break;
			if (bpf_probe_read_user(&e->dims[d + j], 8, (const void *)(v + 8 * j))) {
				a->kind = FVBPF_ARG_BAD;
				return;
			}
		}
	}
	e->ndims = d + (__u32)len;
}

struct arg_loop {
	struct pt_regs *ctx;
	struct fvbpf_torch_shapes_event *e;
	const struct fvbpf_shape_plan *plan;
};

/* One argument (bpf_loop's body: verified once, not once per argument). */
static long read_arg(__u64 i, void *data)
{
	struct arg_loop *l = data;
	struct fvbpf_torch_shapes_event *e = l->e;
	const struct fvbpf_shape_plan *plan = l->plan;
	struct fvbpf_shape_arg *a;
	__u8 kind, loc;
	__u64 p;

	if (i >= FVBPF_SHAPE_ARGS || i >= e->nargs)
		return 1;
	a = &e->args[i];
	kind = plan->args[i].kind;
	loc = plan->args[i].loc;
	a->kind = kind;
	a->first = 0;
	a->count = 0;
	if (kind == FVBPF_ARG_TENSOR || kind == FVBPF_ARG_OPT) {
		if (arg_word(l->ctx, loc, &p))
			a->kind = FVBPF_ARG_BAD;
		else
			read_tensor_ref(e, a, p, &plan->lay, kind == FVBPF_ARG_OPT);
	} else if (kind == FVBPF_ARG_LIST || kind == FVBPF_ARG_ILIST || kind == FVBPF_ARG_VEC) {
		read_list(l->ctx, e, a, loc, &plan->lay);
	} else if (kind == FVBPF_ARG_INTS || kind == FVBPF_ARG_INT || kind == FVBPF_ARG_SYMINT) {
		read_ints(l->ctx, e, a, kind, loc);
	} else if (kind != FVBPF_ARG_OTHER) {
		e->nargs = (__u8)i; /* STOP: the rest is not described */
		return 1;
	}
	return 0;
}

/*
 * The entry record with shapes: 0 written, 1 ring full (counted), -1 no
 * plan (the caller writes the plain record).
 */
static __noinline int torch_shapes_entry(struct pt_regs *ctx, struct fvbpf_proc_state *ps,
					 __u32 id, __u64 pid_tgid, __u64 ts)
{
	__u64 drops = ps->drops; /* before this record's output: only drops before it */
	__u32 op = id & ~FVBPF_TORCH_SAME_STACK; /* the flag rides on the record's id */
	const struct fvbpf_shape_plan *plan = bpf_map_lookup_elem(&torch_plans, &op);
	struct fvbpf_torch_shapes_event *e;
	struct shape_scratch *sc;
	struct arg_loop l;
	__u32 k = 0, size;

	if (!plan)
		return -1;
	sc = bpf_map_lookup_elem(&shapes_buf, &k);
	if (!sc || !plan->lay.sizes_inline)
		return -1;
	e = &sc->e;
	e->nargs = plan->nargs > FVBPF_SHAPE_ARGS ? FVBPF_SHAPE_ARGS : plan->nargs;
	e->ntensors = 0;
	e->ndims = 0;
	e->cut = 0;
	l.ctx = ctx;
	l.e = e;
	l.plan = plan;
	bpf_loop(FVBPF_SHAPE_ARGS, read_arg, &l, 0);
	fill_hdr(&e->ev.hdr, FVBPF_EV_TORCH_ENTER_SHAPES, 0, pid_tgid);
	if (ts) /* --with-stack: the stack record's time, so the two meet */
		e->ev.hdr.ts_ns = ts;
	e->ev.id = id;
	e->ev.drops = (__u32)drops;
	size = FVBPF_SHAPES_FIXED + 8 * (e->ndims > FVBPF_SHAPE_DIMS ? FVBPF_SHAPE_DIMS : e->ndims);
	if (size > sizeof(*e))
		size = sizeof(*e);
	e->ev.hdr.size = size;
	if (bpf_ringbuf_output(&events, e, size, SUBMIT_FLAGS)) {
		__sync_fetch_and_add(&ps->drops, 1);
		__sync_fetch_and_add(&counters.ringbuf_drops, 1);
		return 1;
	}
	return 0;
}
