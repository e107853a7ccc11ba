/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The files a segment is written to, one row per kind in seg_files.c
 * (trace, summary text and JSON, --with-stack's stack files,
 * --profile-memory's picture and snapshot): a new output kind is one row
 * there, and the writer thread and the manifest's record follow it.
 */
#ifndef FVBPF_SEG_FILES_H
#define FVBPF_SEG_FILES_H

#include "output/seg_output.h"

#define SEG_FILE_NAME_MAX 256

/* The files a segment was written to; its manifest record takes the rest from seg_meta.h. */
struct written_segment {
	char trace[SEG_FILE_NAME_MAX];
	char summary_txt[SEG_FILE_NAME_MAX];
	char summary_json[SEG_FILE_NAME_MAX];
	char memory_svg[SEG_FILE_NAME_MAX];      /* --profile-memory's picture, "" when none */
	char memory_snapshot[SEG_FILE_NAME_MAX]; /* ... and its torch.cuda.memory._snapshot() export */
};

/*
 * Write @c's segment into @outdir, a file per row whose condition holds,
 * in the table's order, each atomically (util/file/output_files.h); the
 * names the manifest lists into @out.  0, or the first -errno (the rows
 * after it are not written).
 */
int seg_write_files(const char *outdir, const struct seg_output_ctx *c, struct written_segment *out);

typedef void (*seg_file_listed_fn)(const char *key, const char *name, void *ctx);
/* @fn for each file of @ws the manifest's record lists, in the table's order:
 * a row that every segment has, or a row that was written ("" is not). */
void seg_files_listed(const struct written_segment *ws, seg_file_listed_fn fn, void *ctx);

#endif /* FVBPF_SEG_FILES_H */
