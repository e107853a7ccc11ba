/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* --profile-memory: a segment's memory timeline as an SVG picture. */
#ifndef FVBPF_MEM_SVG_H
#define FVBPF_MEM_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "output/seg_output.h"

/* Does @c's segment have memory records to draw? */
bool mem_svg_wanted(const struct seg_output_ctx *c);
/* One panel per device: allocated (and reserved) over the segment's time,
 * the peak marked with its operator, CPU allocations live at the end
 * listed.  0 or -errno. */
int mem_svg_write(FILE *f, const struct seg_output_ctx *c);

#endif /* FVBPF_MEM_SVG_H */
