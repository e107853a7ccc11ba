/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* key_averages-style rows of a segment's torch calls (see torch_summary.c). */
#ifndef FVBPF_TORCH_SUMMARY_H
#define FVBPF_TORCH_SUMMARY_H

#include <stdint.h>

#include "util/name_table.h"
#include "pipeline/segment.h"

/* A torch call's shapes (--record-shapes, --with-flops): torch's shapes
 * string ("" not recorded or unknown) and its FLOPs; and (--with-stack) its
 * Python stack id: its own, else its caller's (torch gives a call inside
 * another its caller's stack), 0 none. */
struct torch_row_shapes {
	const char *key;
	uint64_t flops, extra_flops;
	uint32_t stack;
};

/* One torch call as a row: total and self CPU, total and self device ns. */
typedef int (*torch_row_fn)(void *ctx, const char *name, const char *kind, uint64_t cpu_ns,
			    uint64_t self_ns, uint64_t dev_ns, uint64_t self_dev_ns,
			    const struct torch_row_shapes *sh);

/* Call @fn per torch call that key_averages would count; @skipped: CUDA
 * calls left unattributed (too many to attribute).  0 or -errno. */
int torch_summary_rows(const struct segment *seg, struct name_table *names, torch_row_fn fn,
		       void *ctx, uint64_t *skipped);

#endif /* FVBPF_TORCH_SUMMARY_H */
