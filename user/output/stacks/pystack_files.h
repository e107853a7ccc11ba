/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --with-stack: a segment's stack files beside its trace:
 * stacks_*.folded (output/stacks/pystack_fold.c), flame_*.svg
 * (output/stacks/flame_svg.c) and pylines_*.txt
 * (output/stacks/pystack_lines.c).
 */
#ifndef FVBPF_PYSTACK_FILES_H
#define FVBPF_PYSTACK_FILES_H

#include "output/seg_output.h"

/* All three files of @c's segment when stacks were asked for; 0 or -errno. */
int pystack_write_files(const char *outdir, const struct seg_output_ctx *c);

#endif /* FVBPF_PYSTACK_FILES_H */
