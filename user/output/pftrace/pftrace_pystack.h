/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --with-stack in the pftrace: what the JSON trace carries (pystack_trace.h)
 * as Perfetto has it.  Each torch call's, launch's and region's slice gets
 * the debug annotations "Python stack" (the id) and "Python line" (the
 * innermost frame), their names and the line strings interned per
 * sequence (InternedData.debug_annotation_names, .debug_annotation_string_values);
 * the derived python_function slices go on a track per thread, "Python of
 * thread N (derived)", after the GPU tracks.
 */
#ifndef FVBPF_PFTRACE_PYSTACK_H
#define FVBPF_PFTRACE_PYSTACK_H

#include "output/pftrace/pftrace_priv.h"

/* The threads that get a python_function track (p->py, p->npy).  0 or -ENOMEM. */
int pf_py_tracks(struct pf *p, const struct seg_output_ctx *c);
/* The python_function slices of those threads, added to p's slices. */
void pf_py_collect(struct pf *p, const struct seg_output_ctx *c);
/* The slice added last gets @stack (0: none) and its Python line. */
void pf_py_mark(struct pf *p, const struct seg_output_ctx *c, uint32_t stack);
/* Does @sl need InternedData entries on @q that it has not had? */
bool pf_py_needs_interning(const struct pf *p, const struct pf_seq *q, const struct pf_slice *sl);
/* Those entries, inside the packet's open InternedData message. */
void pf_py_intern(struct pf *p, struct pf_seq *q, const struct pf_slice *sl);
/* @sl's debug annotations, inside its open TrackEvent. */
void pf_py_annotations(struct pf *p, const struct pf_slice *sl);
/* A descriptor per python_function track, child of the process track. */
void pf_py_descriptors(struct pf *p, uint64_t proc_uuid);

#endif /* FVBPF_PFTRACE_PYSTACK_H */
