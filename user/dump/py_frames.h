/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Raw frames (code object, instruction) to function, file and line, through
 * proc/python/py_code.h, each code object read once per process and dump.
 */
#ifndef FVBPF_PY_FRAMES_H
#define FVBPF_PY_FRAMES_H

#include "dump/dump.h"
#include "dump/py_walk.h"
#include "proc/python/py_runtime.h"

#define PYF_CACHE_SLOTS 4096    /* code objects kept; more are read each time */

struct pyf_cache;

struct pyf_cache *pyf_cache_new(const struct py_runtime *r);
void pyf_cache_free(struct pyf_cache *c);
/* @st's frames into t->frames (t->nframes): 0 or -ENOMEM. */
int pyf_resolve(struct pyf_cache *c, const struct pyw_stack *st, struct dump_thread *t);
void dump_frames_free(struct dump_frame *f, unsigned int n);

#endif /* FVBPF_PY_FRAMES_H */
