/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The writer thread: formatting and file I/O never happen in the ring-buffer
 * consumer.  Closed segments are queued here and written as
 * trace_*.json and summary_*.{txt,json}.
 */
#ifndef FVBPF_SEG_WRITER_H
#define FVBPF_SEG_WRITER_H

#include <pthread.h>
#include <stdbool.h>

#include "util/budget.h"
#include "output/seg_index.h"
#include "output/seg_output.h"

/* The files a segment was written to; its manifest record takes the rest from seg_meta.h. */
struct written_segment {
	char trace[256];
	char summary_txt[256];
	char summary_json[256];
	char memory_svg[256];   /* --profile-memory's picture, "" when none */
	char memory_snapshot[256]; /* ... and its torch.cuda.memory._snapshot() export */
};

struct seg_job;

struct seg_writer {
	const char *outdir;
	const struct region_registry *reg;
	const struct session_meta *meta;
	struct name_table *knames;
	enum trace_format format;  /* set before the first submit */
	bool record_shapes, with_flops; /* --record-shapes, --with-flops: likewise */
	struct pystack_table *pystacks; /* --with-stack, else NULL; set before the first submit */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct seg_job *head, *tail;
	bool stopping, started;
	/* --max-memory (set before the first submit; NULL: not limited) */
	struct budget *mem;
	uint64_t queued_bytes;    /* of the closed segments queued in memory */
	uint64_t next_spill;      /* number of the next spill file */
	/* results, read after seg_writer_stop() */
	struct seg_index index;   /* the segments written, on disk */
	unsigned int write_errors;
	int first_error;          /* -errno of the first failed write */
};

int seg_writer_start(struct seg_writer *w, const char *outdir, const struct region_registry *reg,
		     const struct session_meta *meta, struct name_table *knames);
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
void seg_writer_free(struct seg_writer *w);
/* Synchronous write of one segment (used by the thread and by tests). */
int seg_write_files(const char *outdir, const struct seg_output_ctx *c, struct written_segment *out);

#endif /* FVBPF_SEG_WRITER_H */
