/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The pftrace writer's state, shared by its files (moved out of pftrace_writer.c). */
#ifndef FVBPF_PFTRACE_PRIV_H
#define FVBPF_PFTRACE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/budget.h"
#include "util/text_out.h"
#include "output/pftrace/pb_writer.h"
#include "output/pftrace/pf_strtab.h"
#include "output/seg_output.h"

struct pf_slice {
	uint64_t start, end;
	uint32_t track;      /* index in tracks */
	uint32_t name, cat;  /* iids */
	uint32_t flow_out, flow_in;
	uint32_t order;
	uint32_t stack;      /* --with-stack: its Python stack id, 0 none */
	uint32_t pyline;     /* ... its Python line, an iid in lines; 0 none */
	uint32_t more_in;    /* flows ending here past flow_in, in pf.more_in */
};

/* A flow that ends in slice @order besides its flow_in (a DataLoader
 * __next__ that received two batches). */
struct pf_flow_in {
	uint32_t order, flow;
};

struct pf {
	struct obuf *out;    /* packets are small: one fwrite per OBUF_SIZE */
	struct pb_buf b;
	struct strtab names, cats;
	struct strtab lines;     /* debug annotation string values: Python lines */
	struct pf_slice *sl;
	size_t nsl, capsl;
	uint32_t *cpu;       /* thread ids, sorted, unique */
	size_t ncpu;
	uint64_t *gpu;       /* device << 32 | gpu track tid, sorted, unique */
	size_t ngpu;
	uint32_t *py;        /* threads with a python_function track, after the GPU tracks */
	size_t npy;
	size_t dl_base;      /* DataLoader workers' tracks from here (pftrace_dl.h) */
	struct pf_flow_in *more_in; /* by slice order, as added */
	size_t nmore_in;
	int err;
	struct budget *mem;      /* the segment's, charged for sl; NULL in tests */
};

/* Track indices: 0 the segment's metadata track, then threads, then GPU
 * tracks, then python_function tracks, then the process and the GPU
 * devices, then (dl_base) the DataLoader workers' process and thread. */
static inline uint64_t track_uuid(size_t track)
{
	return track + 1;
}

struct pf_seq {
	uint32_t id;
	uint64_t last_ts;
	uint8_t *named, *catted;  /* iids interned on this sequence */
	uint8_t *lined;           /* ... and Python lines */
	bool da_named;            /* ... and the debug annotation names */
};

/* The packet in p->b goes out as one Trace.packet field. */
void pf_put_packet(struct pf *p);
/* An InternedData entry (@field: its kind) for @iid of @t, unless @seen
 * says the sequence has it; inside the packet's open InternedData. */
void pf_intern_once(struct pf *p, uint32_t field, uint32_t iid, const struct strtab *t,
		    uint8_t *seen);
/* A slice of @name and @cat (interned here) on @track. */
void pf_add_slice(struct pf *p, uint32_t track, uint64_t start, uint64_t dur, const char *name,
		  const char *cat, uint32_t flow_out, uint32_t flow_in);
/* A process track's descriptor (@first: the file's first packet, which
 * clears sequence 1's state) and a thread track's, under @parent. */
void pf_process_descriptor(struct pf *p, uint64_t uuid, int32_t pid, const char *name, bool first);
void pf_thread_descriptor(struct pf *p, uint64_t uuid, uint64_t parent, int32_t pid, int32_t tid,
			  const char *name);
/* Thread @tid's track, 0 when it has none. */
uint32_t pf_cpu_track(const struct pf *p, uint32_t tid);
/* The process, its threads, the GPU devices and streams, the segment's track. */
void pf_descriptors(struct pf *p, const struct seg_output_ctx *c);

#endif /* FVBPF_PFTRACE_PRIV_H */
