/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Written files leave the page cache: a trace of gigabytes should not push
 * the job's own data (its dataset, its checkpoints) out of memory, and on a
 * VM whose memory is backed lazily each never-used page the cache grows
 * into costs a host fault on its first write (half of fvbpf's CPU per event
 * on this VM's root disk, docs/performance.md).
 */
#ifndef FVBPF_CACHE_DROP_H
#define FVBPF_CACHE_DROP_H

/* Takes @fd, a file just written in full: starts its writeback, and drops
 * the pages of the file handed in CACHE_DROP_LAG calls before (written back
 * by then, so clean) and closes that one. */
void cache_drop_add(int fd);
/* At the end: the files still held are written, dropped and closed. */
void cache_drop_flush(void);

#endif /* FVBPF_CACHE_DROP_H */
