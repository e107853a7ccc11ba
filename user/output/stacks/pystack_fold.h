/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --with-stack, per segment: each torch call's Python stack and the chain
 * of torch calls below it, as folded stacks (Brendan Gregg's format,
 * outermost frame first) weighted by self CPU time in nanoseconds, then
 * what output/stacks/pystack_files.c writes.
 */
#ifndef FVBPF_PYSTACK_FOLD_H
#define FVBPF_PYSTACK_FOLD_H

#include <stdint.h>
#include <stdio.h>

#include "output/seg_output.h"
#include "pipeline/torch/op_tree.h"
#include "pipeline/pystack.h"

#define FOLD_PATH_MAX 16384      /* bytes of one folded stack; a longer one is cut */
#define FOLD_NO_STACK "[no Python stack]"

struct fold_row {
	char *path;                 /* frames separated by ';', outermost first */
	uint64_t ns;
};

struct fold_set {
	struct fold_row *rows;
	size_t n, cap;
	size_t *slots;              /* open addressing over rows, index + 1 */
	size_t nslots;
	uint64_t total_ns;
	uint64_t ops_with_stack, ops_without, paths_cut;
};

/* "qualname (short/path.py:line)": ';' and control characters replaced. */
void pystack_frame_label(struct name_table *names, const struct pystack_frame *f, char *buf,
			 size_t len);
/* A file name without the interpreter's and site-packages' prefixes. */
const char *pystack_short_file(const char *file);
/* Per torch call of @s, its parents in @t: its self time (less its direct
 * children's) and its stack: a backward node's forward op's stack where it
 * has one (torch_call.fwd_stack), and the calls under it get that too; else
 * its own, else its caller's (none where its caller began before the
 * segment); arrays of s->nops.  0 or -ENOMEM. */
int pystack_op_walk(const struct segment *s, const struct op_tree *t, uint64_t *self,
		    uint32_t *sid);
int pystack_fold_build(const struct seg_output_ctx *c, struct fold_set *fs);
/* The same for device time: each GPU record under its launching call's
 * stack, the call and the kernel (or [memcpy], [memset]). */
int pystack_fold_device(const struct seg_output_ctx *c, struct fold_set *fs);
/* Rows sorted frame by frame (so a frame's callees are adjacent). */
void pystack_fold_sort(struct fold_set *fs);
int pystack_fold_write(FILE *f, const struct fold_set *fs);
void pystack_fold_free(struct fold_set *fs);

#endif /* FVBPF_PYSTACK_FOLD_H */
