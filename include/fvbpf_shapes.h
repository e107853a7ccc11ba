/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --record-shapes: what BPF reads of an operator's arguments at its entry.
 *
 * The loader gives each operator a plan (map "torch_plans", keyed by its
 * torch id): the TensorImpl layout of its library and, per schema
 * argument, what it is and where the System V calling convention put it
 * (a register after the hidden sret pointer, or a stack slot), worked out
 * from the schemas, the library's symbols and the layout the target's own
 * torch reported (user/probes/torch_abi.c, torch_abi_cxx.c).  BPF
 * copies what it finds, bounded; the loader checks every figure (numel is
 * the product of the sizes, sizes fit) before it believes a shape.
 */
#ifndef FVBPF_SHAPES_H
#define FVBPF_SHAPES_H

#ifdef __BPF__
/* vmlinux.h provides __u8 ... __u64 */
#else
#include <linux/types.h>
#endif

#include "fvbpf_events.h"

#define FVBPF_SHAPE_ARGS 24     /* schema arguments described; ops with more: no plan */
#define FVBPF_SHAPE_TENSORS 16  /* tensors read per call (lists included) */
#define FVBPF_SHAPE_DIMS 40     /* sizes and integers copied per call */
#define FVBPF_SHAPE_MAXDIM 8    /* dimensions read per tensor */
#define FVBPF_SHAPE_LIST 8      /* tensors read per tensor list */
#define FVBPF_SHAPE_INTS 4      /* integers read per int list */
#define FVBPF_SHAPE_WINDOW 256  /* bytes of a TensorImpl read at once, from its start */

/* What an argument is (plan) and what BPF found (record). */
enum fvbpf_arg_kind {
	FVBPF_ARG_STOP = 0,     /* plan: this one and the rest are not described */
	FVBPF_ARG_OTHER = 1,    /* not read: a scalar, a string, ... ([] in torch) */
	FVBPF_ARG_TENSOR = 2,   /* const at::Tensor & */
	FVBPF_ARG_OPT = 3,      /* const std::optional<at::Tensor> & */
	FVBPF_ARG_LIST = 4,     /* at::TensorList by value: pointer, length */
	FVBPF_ARG_INTS = 5,     /* IntArrayRef / SymIntArrayRef by value */
	FVBPF_ARG_INT = 6,      /* int64_t by value */
	FVBPF_ARG_SYMINT = 7,   /* c10::SymInt, by invisible reference */
	FVBPF_ARG_ILIST = 10,   /* plan: const c10::IListRef<at::Tensor> &; unboxed
				 * (tag 0 at +16): a pointer and a length at +0 */
	FVBPF_ARG_VEC = 11,     /* std::vector<at::Tensor> & (a node's inputs):
				 * begin and end at +0; each tensor one of torch's shapes */
	/* record only */
	FVBPF_ARG_NONE = 8,     /* an optional tensor that is empty */
	FVBPF_ARG_BAD = 9,      /* unreadable or past a bound */
};

/* Where: 0-5 rdi..r9, 6+k the k-th 8-byte stack slot above the return address. */
struct fvbpf_arg_plan {
	__u8 kind;              /* enum fvbpf_arg_kind */
	__u8 loc;
};

/*
 * The c10::TensorImpl layout of the op's library: offsets from the
 * TensorImpl, all inside the FVBPF_SHAPE_WINDOW bytes read from it, and
 * the two vtables trusted in this process: a plain TensorImpl's (any other
 * class, a nested or opaque tensor, is not read) and UndefinedTensorImpl's.
 */
struct fvbpf_tensor_layout {
	__u8 sizes_at;          /* sizes_and_strides_: its size_, then inline sizes */
	__u8 sizes_inline;      /* sizes kept in the struct up to this many dims */
	__u8 numel_at;          /* numel_ */
	__u8 dtype_at;          /* data_type_ (caffe2::TypeMeta index) */
	__u16 win_len;          /* bytes read: up to the last of these fields */
	__u16 pad;
	__u64 vptr_dense;       /* a plain TensorImpl's vtable pointer here */
	__u64 vptr_undef;       /* UndefinedTensorImpl's (0: none) */
};

struct fvbpf_shape_plan {
	struct fvbpf_tensor_layout lay;
	__u8 nargs;
	__u8 pad[7];
	struct fvbpf_arg_plan args[FVBPF_SHAPE_ARGS];
};

struct fvbpf_shape_arg {
	__u8 kind;              /* enum fvbpf_arg_kind as found */
	__u8 first;             /* TENSOR/LIST: first tensor; INTS/INT/SYMINT: first dim slot */
	__u8 count;             /* LIST: tensors; INTS: integers (1 for INT/SYMINT) */
	__u8 pad;
};

struct fvbpf_shape_tensor {
	__u64 numel;
	__u8 ndim;              /* as the TensorImpl says (may exceed MAXDIM: then bad) */
	__u8 dtype;             /* TypeMeta index: ScalarType for the standard types */
	__u8 dim0;              /* its first size in dims[] */
	__u8 bad;               /* unreadable */
	__u32 pad;
};

/*
 * An operator's entry with its arguments (FVBPF_EV_TORCH_ENTER_SHAPES):
 * the torch event, then this; only dims[0..ndims) are sent.
 */
struct fvbpf_torch_shapes_event {
	struct fvbpf_torch_event ev;
	__u8 nargs, ntensors, ndims, cut;  /* cut: something past a bound */
	__u32 pad;
	struct fvbpf_shape_arg args[FVBPF_SHAPE_ARGS];
	struct fvbpf_shape_tensor tensors[FVBPF_SHAPE_TENSORS];
	__u64 dims[FVBPF_SHAPE_DIMS];
};

#define FVBPF_SHAPES_FIXED (sizeof(struct fvbpf_torch_shapes_event) - 8 * FVBPF_SHAPE_DIMS)

#ifndef __BPF__
_Static_assert(sizeof(struct fvbpf_shape_plan) == 32 + 2 * FVBPF_SHAPE_ARGS, "shape plan layout");
_Static_assert(sizeof(struct fvbpf_tensor_layout) == 24, "tensor layout layout");
_Static_assert(sizeof(struct fvbpf_torch_shapes_event) ==
	       32 + 8 + 4 * FVBPF_SHAPE_ARGS + 16 * FVBPF_SHAPE_TENSORS + 8 * FVBPF_SHAPE_DIMS,
	       "shapes event layout");
#endif

#endif /* FVBPF_SHAPES_H */
