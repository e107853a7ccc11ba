/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Closed segments moved out of memory (--max-memory) while the writer
 * catches up: the raw arrays of struct segment and its scalar fields in one
 * hidden file of the output directory, read back once by the writer and
 * removed.  That directory may be writable by others: a file read back is
 * checked (ours, regular, sizes and indexes consistent), never trusted.
 */
#ifndef FVBPF_SPILL_H
#define FVBPF_SPILL_H

#include <stdint.h>

#include "pipeline/segment.h"

/* Write @seg at @fd's offset: 0 or -errno. */
int spill_write_fd(int fd, const struct segment *seg);
/*
 * Read a segment written by spill_write_fd() from @fd's start; the file
 * must end with it.  Its region and slices' regions must be below
 * @nregions.  0 and *@out (mem NULL, bytes set), -EINVAL for a truncated
 * or inconsistent file, -ENOMEM, or -errno.
 */
int spill_read_fd(int fd, uint32_t nregions, struct segment **out);
/* ".spill_<n>.bin.tmp.<fvbpf's pid>" in @outdir (stale_tmp cleans
 * those of an fvbpf that died). */
int spill_path(char *buf, size_t len, const char *outdir, uint64_t n);
/* Write @seg to spill file @n: 0 and its size in *@bytes, or -errno (no
 * file left behind). */
int spill_save(const char *outdir, uint64_t n, const struct segment *seg, uint64_t *bytes);
/* Read spill file @n back and remove it, whatever became of the read. */
int spill_load(const char *outdir, uint64_t n, uint32_t nregions, struct segment **out);

#endif /* FVBPF_SPILL_H */
