/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* A flame graph of folded stacks as one self-contained SVG (no script, no
 * fonts or files fetched): a box per frame, its width its share of the
 * weight, a tooltip with the frame, its time and percentage. */
#ifndef FVBPF_FLAME_SVG_H
#define FVBPF_FLAME_SVG_H

#include <stdio.h>

#include "output/stacks/pystack_fold.h"

/* @fs sorted (pystack_fold_sort), its weights @what ("self CPU time");
 * 0 or -errno. */
int flame_svg_write(FILE *f, const struct fold_set *fs, const char *title, const char *what);

#endif /* FVBPF_FLAME_SVG_H */
