/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A segment's --profile-memory records (filled by pipeline/memory/mem_events.c,
 * written by output/memory/mem_output.c): data only, so that segment.c can free
 * them without knowing how they are made.
 */
#ifndef FVBPF_SEG_MEMORY_H
#define FVBPF_SEG_MEMORY_H

#include <stddef.h>
#include <stdint.h>

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
	uint64_t bad;               /* sizes or totals out of bounds, CPU allocations
				     * of an address still live (its free lost) */
	uint64_t unknown_frees;     /* CPU frees of allocations not seen in this segment */
	uint64_t table_full;        /* CPU allocations past the address table's cap */
};

void seg_memory_free(struct seg_memory *m);

#endif /* FVBPF_SEG_MEMORY_H */
