/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The pftrace writer's state, shared by its files (moved out of pftrace_writer.c). */
#ifndef FVBPF_PFTRACE_PRIV_H
#define FVBPF_PFTRACE_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "util/mem_budget.h"
#include "util/text_out.h"
#include "output/pb_writer.h"
#include "output/pf_strtab.h"
#include "output/seg_output.h"

struct pf_slice {
	uint64_t start, end;
	uint32_t track;      /* index in tracks */
	uint32_t name, cat;  /* iids */
	uint32_t flow_out, flow_in;
	uint32_t order;
};

struct pf {
	struct obuf *out;    /* packets are small: one fwrite per OBUF_SIZE */
	struct pb_buf b;
	struct strtab names, cats;
	struct pf_slice *sl;
	size_t nsl, capsl;
	uint32_t *cpu;       /* thread ids, sorted, unique */
	size_t ncpu;
	uint64_t *gpu;       /* device << 32 | gpu track tid, sorted, unique */
	size_t ngpu;
	int err;
	struct mem_budget *mem;  /* the segment's, charged for sl; NULL in tests */
};

/* Track indices: 0 the segment's metadata track, then threads, then GPU tracks. */
static inline uint64_t track_uuid(size_t track)
{
	return track + 1;
}

struct pf_seq {
	uint32_t id;
	uint64_t last_ts;
	uint8_t *named, *catted;  /* iids interned on this sequence */
};

/* The packet in p->b goes out as one Trace.packet field. */
void pf_put_packet(struct pf *p);
/* The process, its threads, the GPU devices and streams, the segment's track. */
void pf_descriptors(struct pf *p, const struct seg_output_ctx *c);

#endif /* FVBPF_PFTRACE_PRIV_H */
