/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The writer thread: formatting and file I/O never happen in the ring-buffer
 * consumer.  Closed segments are queued here and written, one at a time,
 * as the files of seg_files.c's table.
 */
#ifndef FVBPF_SEG_WRITER_H
#define FVBPF_SEG_WRITER_H

#include <stdbool.h>

#include "util/budget.h"
#include "output/seg_files.h"
#include "output/seg_index.h"
#include "output/seg_output.h"

/* How the writer writes: fixed before the thread starts. */
struct seg_writer_opts {
	enum trace_format format;       /* --format */
	bool record_shapes, with_flops; /* --record-shapes, --with-flops */
	struct pystack_table *pystacks; /* --with-stack, else NULL */
	struct budget *mem;             /* --max-memory; NULL: not limited */
};

/* The writer thread and its queue; opaque (seg_writer.c). */
struct seg_writer;

/*
 * Start the writer thread for @outdir; @reg, @meta, @knames and what @o
 * points to must outlive it.  NULL with errno set when it cannot start.
 */
struct seg_writer *seg_writer__new(const char *outdir, const struct region_registry *reg,
				   const struct session_meta *meta, struct name_table *knames,
				   const struct seg_writer_opts *o);
/*
 * Takes ownership of @seg; @proc must outlive the writer.  Called by the
 * consumer, never waits for the writer: when the closed segments queued in
 * memory would pass their share of --max-memory, @seg is spilled to disk
 * (spill.c) and read back when its turn comes; when that fails it is
 * dropped and counted (-ENOSPC or the spill's error).
 */
int seg_writer_submit(struct seg_writer *w, struct segment *seg, struct proc_target *proc);
/* Write everything queued, then join the thread. */
void seg_writer_stop(struct seg_writer *w);
/* Stopped if it was not, then freed (NULL is fine). */
void seg_writer__free(struct seg_writer *w);
/* Its results, read after seg_writer_stop(); a NULL writer wrote nothing. */
/* The segments written, on disk (for the manifest and the exit report). */
struct seg_index *seg_writer_index(struct seg_writer *w);
/* Segments that could not be written, and -errno of the first. */
unsigned int seg_writer_write_errors(const struct seg_writer *w);
int seg_writer_first_error(const struct seg_writer *w);

#endif /* FVBPF_SEG_WRITER_H */
