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
#include "pipeline/memory/seg_memory.h"

struct segment;
struct fvbpf_mem_event;

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

/* A target's live CPU allocations, zeroed (NULL: out of memory); mem_state__free()
 * ends it (NULL is fine). */
struct mem_state *mem_state__new(void);
void mem_state__free(struct mem_state *p);

#endif /* FVBPF_MEM_EVENTS_H */
