/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --record-shapes and --with-flops: an operator's shapes record from BPF
 * (include/fvbpf_shapes.h) checked and turned into what the outputs need,
 * interned once per distinct value as one string of five fields separated
 * by TORCH_SHAPES_SEP:
 *
 *   key    torch's str(input_shapes): "[[40], [8, 24], [24, 40], [], []]"
 *          (a tensor list is [] there, as key_averages has it)
 *   dims   Kineto's args["Input Dims"], JSON: lists nested
 *   types  Kineto's args["Input type"], JSON
 *   flops  torch's with_flops count (util.cpp's formulas), decimal
 *   extra  FLOPs of ops torch does not count (linear, matmul, conv1d/3d,
 *          attention), decimal
 *
 * A record that fails a check (a bad read, numel not the product of the
 * sizes, a size past 2^48, more than the bounds) gives no string: the
 * shape is unknown, never guessed.
 */
#ifndef FVBPF_TORCH_SHAPES_H
#define FVBPF_TORCH_SHAPES_H

#include <stddef.h>
#include <stdint.h>

#include "fvbpf_shapes.h"

#define TORCH_SHAPES_SEP '\x1f'
#define TORCH_SHAPES_MAX 4096   /* bytes of a record string */

/*
 * The record string of @e (@size bytes as received) for operator @name
 * whose arguments are @sig (TORCH_SIG_*), into @out: 0, or -EINVAL when
 * the shapes are unknown.
 */
int torch_shapes_format(const struct fvbpf_torch_shapes_event *e, size_t size, const char *name,
			const char *sig, char *out, size_t len);

struct torch_shapes_view {
	const char *key, *dims, *types;  /* into a copy the caller keeps */
	size_t key_len, dims_len, types_len;
	uint64_t flops, extra;
};

/*
 * Evidence on the layout the record was read with: of its tensors read as
 * plain TensorImpls, how many it explains (@fit: numel is the product of
 * at most 8 sizes, each under 2^48) and how many it does not (@misfit).
 * Unreadable, undefined and past-the-bound tensors count as neither.
 */
void torch_shapes_tally(const struct fvbpf_torch_shapes_event *e, size_t size, unsigned int *fit,
			unsigned int *misfit);

/* Split a record string: 0 or -EINVAL. */
int torch_shapes_split(const char *rec, struct torch_shapes_view *v);

#endif /* FVBPF_TORCH_SHAPES_H */
