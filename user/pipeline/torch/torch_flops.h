/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * FLOPs of an operator from its checked input shapes: torch's own count
 * (torch/csrc/profiler/util.cpp: mm and addmm 2*M*K*N, bmm and baddbmm per
 * batch, conv2d 2*N*Hout*Wout*Cin*Cout*kh*kw/groups, mul and add the
 * numel of self) and, apart, the ops torch does not count.  Every product
 * is checked: an overflow gives 0, as an op torch does not know.
 */
#ifndef FVBPF_TORCH_FLOPS_H
#define FVBPF_TORCH_FLOPS_H

#include <stdint.h>

#include "fvbpf_shapes.h"

/* One argument as the decoder checked it. */
struct shape_arg {
	uint8_t kind;           /* FVBPF_ARG_TENSOR (a defined tensor), _NONE, _LIST, _INTS, _OTHER */
	uint8_t n;              /* TENSOR 1, LIST tensors, INTS integers */
	uint8_t ndim[FVBPF_SHAPE_LIST];
	const __u64 *dims[FVBPF_SHAPE_LIST];
	const __u64 *ints;   /* INTS (INT and SYMINT: one) */
};

/* torch.profiler's with_flops count for @name (aten::mm ...), 0 if it counts none. */
uint64_t torch_flops(const char *name, const struct shape_arg *a, int n);
/* FLOPs of ops torch does not count: linear, matmul, conv1d/conv3d,
 * scaled_dot_product_attention and the flash/efficient attention ops
 * (forward 4*B*H*Lq*Lk*D); 0 otherwise. */
uint64_t torch_flops_extra(const char *name, const struct shape_arg *a, int n);

#endif /* FVBPF_TORCH_FLOPS_H */
