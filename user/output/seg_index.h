/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The list of written segments, for the exit report and manifest.json,
 * kept on disk rather than in memory (a long run writes without end): one
 * JSON line per segment, appended by the writer thread to a file of the
 * output directory that is unlinked as soon as it is open, so nothing is
 * left behind and nobody else can change it.
 */
#ifndef FVBPF_SEG_INDEX_H
#define FVBPF_SEG_INDEX_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct seg_output_ctx;
struct written_segment;

struct seg_index {
	const char *outdir;       /* the file is opened there with the first record */
	FILE *f;
	size_t count;             /* records written */
	unsigned int errors;      /* records that could not be written */
};

void seg_index_init(struct seg_index *ix, const char *outdir);
/* Append the record of @c's segment, written as @ws: 0 or -errno. */
int seg_index_add(struct seg_index *ix, const struct seg_output_ctx *c,
		  const struct written_segment *ws);
/* Each record, in the order written, as a json-c object the callback
 * borrows.  Only once the writer has stopped. */
typedef void (*seg_index_fn)(json_object *rec, void *ctx);
int seg_index_each(struct seg_index *ix, seg_index_fn fn, void *ctx);
void seg_index_close(struct seg_index *ix);

#endif /* FVBPF_SEG_INDEX_H */
