/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --max-memory: what fvbpf may hold.  The bytes of segment arrays (open
 * segments, closed ones queued for the writer, the one being written) are
 * charged to one counter; the consumer charges as arrays grow, whichever
 * thread frees a segment releases it.  The budget is split in thirds: one
 * open segment, the closed ones queued in memory, the one being written.
 *
 * Tables that grow with what the target chooses (the session's name table:
 * kernel, scope, function and file names, shapes strings; the Python stack
 * table) get a share of their own, taken from the same room before the
 * segments' budget: past it they keep nothing new (each owner counts what
 * it refused).
 */
#ifndef FVBPF_BUDGET_H
#define FVBPF_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/row_table.h"

/*
 * The default --max-memory.  The ASan/UBSan test build keeps freed memory in
 * a quarantine (256 MiB) and maps shadow memory, so its RSS after a torch
 * attach alone is about 300 MiB: it defaults to 4 GiB.  The bound stated
 * for fvbpf, and tested, is the production build's.
 */
#if defined(__SANITIZE_ADDRESS__)
#define BUDGET_DEFAULT (4ULL << 30)
#else
#define BUDGET_DEFAULT (256ULL << 20)
#endif
#define BUDGET_MAX_MEMORY (1ULL << 40)  /* 1 TiB: far past any machine's need */
#define BUDGET_MIN (8ULL << 20)         /* below this segments would be cut at once */
#define BUDGET_TABLES_PART 4            /* the tables' share: a quarter of the room */
/* What fvbpf allocates besides segment arrays once attached: the writer's
 * formatting state and stdio buffers, summaries, name tables, thread
 * stacks, allocator slack.  The ring buffer's pages are added on top. */
#define BUDGET_SLACK (24ULL << 20)

struct budget {
	uint64_t max_memory;        /* --max-memory */
	uint64_t rss_setup;         /* fvbpf's RSS once attached */
	uint64_t slack;             /* BUDGET_SLACK plus the ring buffer */
	uint64_t budget;                /* for segment arrays; 0: not limited (tests) */
	uint64_t tables;            /* for names and stacks; 0: not limited */
	_Atomic uint64_t tables_held, tables_peak;
	struct charge_hook tables_charge;  /* the hook the tables charge through */
	_Atomic uint64_t held;      /* bytes of segment arrays now */
	_Atomic uint64_t peak;      /* the most held at once */
	_Atomic uint64_t segments_spilled, bytes_spilled;
	_Atomic uint64_t segments_dropped;    /* could not be spilled */
	_Atomic uint64_t events_over_limit;   /* not stored: a segment hit its share */
	_Atomic uint64_t segments_truncated;  /* segments marked truncated_by_memory */
};

/* "256M", "1G", "65536", "512K": bytes, 1024-based suffixes K, M, G
 * (upper or lower case).  0, -EINVAL (not a size) or -ERANGE (over
 * BUDGET_MAX_MEMORY, or 0). */
int budget_parse_size(const char *arg, uint64_t *out);
/* Fixed mmap threshold and few arenas: big arrays are mmapped, so their
 * pages go back to the kernel when a segment is freed. */
void budget_tune_malloc(void);
/* fvbpf's resident set now, in bytes (/proc/self/statm), 0 if unknown. */
uint64_t budget_rss_now(void);
/* The most resident at once over the run (getrusage), in bytes. */
uint64_t budget_rss_peak(void);
/* Set the budget from --max-memory, the RSS now and the ring buffer's
 * size: what remains after setup and slack, a quarter of it to the
 * tables, the rest to segments.  0, or -ENOSPC when segments would get
 * less than BUDGET_MIN. */
int budget_setup(struct budget *m, uint64_t max_memory, uint64_t ringbuf_bytes);
/* The least --max-memory that leaves segments BUDGET_MIN, after setup. */
uint64_t budget_least(const struct budget *m);

/*
 * Room for an array of a segment to grow from @cap to @want elements of
 * @size bytes, the segment holding @seg_bytes: the new capacity (@want, or
 * less when only that fits, charged), or 0 when not one more element fits.
 */
size_t budget_grant(struct budget *m, uint64_t seg_bytes, size_t cap, size_t want, size_t size);
void budget_charge(struct budget *m, uint64_t bytes);
void budget_release(struct budget *m, uint64_t bytes);
/* The third of the budget that closed segments queued in memory may use. */
uint64_t budget_share(const struct budget *m);
/* More than a third held: closed segments should not wait in memory. */
bool budget_pressure(struct budget *m);

#endif /* FVBPF_BUDGET_H */
