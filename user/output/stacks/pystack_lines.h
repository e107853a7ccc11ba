/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --with-stack, per segment: the Python lines that cost the most, as a
 * text table (pylines_*.txt): torch calls' self CPU time and the GPU time
 * of the kernels launched, grouped by the innermost N frames of their
 * stacks (--group-by-stack N, as key_averages(group_by_stack_n=N)).
 */
#ifndef FVBPF_PYSTACK_LINES_H
#define FVBPF_PYSTACK_LINES_H

#include <stdio.h>

#include "output/seg_output.h"

#define PYLINES_ROWS 60   /* rows written; the rest are summed in one line */

struct pyline_row {
	char *key;          /* the frames, innermost first, " <- " between */
	uint64_t cpu_ns, dev_ns, calls, launches;
};

struct pyline_set {
	struct pyline_row *rows;
	size_t n, cap;
	uint64_t cpu_ns, dev_ns;
};

/* Rows of @c's segment, grouped by the innermost @nframes frames. */
int pylines_build(const struct seg_output_ctx *c, unsigned int nframes, struct pyline_set *ls);
/* Sorted: device time first when there is any, else CPU time. */
int pylines_write(FILE *f, struct pyline_set *ls, const char *title, unsigned int nframes);
void pylines_free(struct pyline_set *ls);

/*
 * The innermost @nframes frames of stack @sid as torch's key_averages
 * table shows them in "Source Location": "file(first_line): function",
 * innermost first, '\n' between (the target's text in each frame escaped
 * as text_clean_terminal() does); "" for no stack.  Cut at @len.
 */
void pystack_source_location(struct pystack_table *t, struct name_table *names, uint32_t sid,
			     unsigned int nframes, char *buf, size_t len);

#endif /* FVBPF_PYSTACK_LINES_H */
