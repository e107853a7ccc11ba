/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What was learnt from a file's bytes, kept by the file's identity (device,
 * inode, size, modification time) for the session: the ranks of one job map
 * the same libraries, and reading their symbol tables again for each
 * process made arming 8 ranks take seconds.  A file changed in place gets a
 * new mtime (or size) and so a new entry.  Bounded in entries and bytes;
 * past the bounds nothing more is kept (the caller reads the file again).
 * Thread-safe.
 */
#ifndef FVBPF_FILE_MEMO_H
#define FVBPF_FILE_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#define FILE_MEMO_MAX_ENTRIES 8192
#define FILE_MEMO_MAX_BYTES   (16u << 20)

/* What is kept: one value per (file, kind). */
enum file_memo_kind {
	FILE_MEMO_MARKERS,   /* proc_info.c: the marker symbols, or none */
	FILE_MEMO_CUDA,      /* cuda_probes.c: the probed CUDA/NCCL functions */
	FILE_MEMO_KINDS,
};

/* Copies the value kept for @st's file into @buf (at most @len bytes):
 * its length, or -1 when none is kept. */
long file_memo_get(enum file_memo_kind kind, const struct stat *st, void *buf, size_t len);
/* Keeps a copy of @val (@len bytes) for @st's file: true when kept. */
bool file_memo_put(enum file_memo_kind kind, const struct stat *st, const void *val, size_t len);
/* Entries looked up and found, for the tests and -v. */
void file_memo_stats(unsigned long *lookups, unsigned long *hits);
/* Forget everything (tests). */
void file_memo_clear(void);

#endif /* FVBPF_FILE_MEMO_H */
