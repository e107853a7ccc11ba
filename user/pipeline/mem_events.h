/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --profile-memory in the pipeline: allocator records (fvbpf_mem.h) into
 * the open segment, each with its size, address, device, the allocator's
 * totals (CPU: fvbpf's own count of the segment's live allocations) and
 * the torch call open on its thread.  Everything in a record is the
 * target's word: sizes past MEM_BYTES_MAX, totals past MEM_TOTAL_MAX and
 * frees of allocations not seen in this segment are counted, never stored.
 */
#ifndef FVBPF_MEM_EVENTS_H
#define FVBPF_MEM_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/addr_table.h"

struct segment;
struct fvbpf_mem_event;

#define MEM_BYTES_MAX (1ull << 40)   /* 1 TiB: larger is not an allocation */
#define MEM_TOTAL_MAX (1ull << 50)
#define MEM_SEG_MAX 1000000u          /* records per segment (56 bytes each) */

#define MEM_REC_LIVE_AT_END 0x1u      /* an allocation not freed in its segment */

struct mem_rec {
	uint64_t ts_ns;
	uint64_t addr;
	int64_t bytes;              /* < 0: a free */
	uint64_t total_allocated;   /* after this record */
	uint64_t total_reserved;
	int64_t op;                 /* index into seg->ops of the innermost open call, -1 */
	uint32_t tid;
	uint8_t dev_type;           /* c10::DeviceType */
	int8_t dev_index;
	uint8_t flags;              /* MEM_REC_* */
	uint8_t pad;
};

/* A segment's records, in ring order (time order per thread). */
struct seg_memory {
	struct mem_rec *recs;
	size_t n, cap;
	uint64_t over_limit;        /* past MEM_SEG_MAX */
	uint64_t bad;               /* sizes or totals out of bounds */
	uint64_t unknown_frees;     /* CPU frees of allocations not seen in this segment */
	uint64_t table_full;        /* CPU allocations past the address table's cap */
};

/* Per target: the CPU allocations live in the current segment. */
struct mem_state {
	struct addr_table live;     /* addr -> size, tag: its record's index */
	uint32_t seq;               /* segment the table belongs to, + 1 (0: none) */
	uint64_t cpu_live;          /* bytes in the table */
	uint64_t records, outside;  /* recorded; arrived with no segment open */
};

/* One BPF record into @seg (NULL: none open), the call @op of its thread
 * open around it (-1 none).  0 or -ENOMEM. */
int mem_state_record(struct mem_state *ms, struct segment *seg, int64_t op,
		     const struct fvbpf_mem_event *ev);
/* Mark @seg's allocations still live (leak candidates): call at its close. */
void mem_state_close(struct mem_state *ms, struct segment *seg);
void mem_state_free(struct mem_state *ms);

struct session;
struct session_target;
/* A FVBPF_EV_MEM record of @t from the ring (events.c). */
int mem_events_handle(struct session *s, struct session_target *t, const void *data, size_t size);
void seg_memory_free(struct seg_memory *m);

#endif /* FVBPF_MEM_EVENTS_H */
