/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Collectives of PyTorch's gloo backend, joined from three probed calls:
 * the work made on the calling thread (its arrival, the group's sequence
 * number, the collective's title), the work queued on its process group,
 * and the work run on one of the group's backend threads (its execution,
 * which ends when every rank has taken part).  The process group's name,
 * description, rank and size are read from the target's memory, once a
 * group, and believed only where the layout checks out (see collectives.c).
 */
#ifndef FVBPF_COLLECTIVES_H
#define FVBPF_COLLECTIVES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "probes/cuda_api.h"
#include "util/name_table.h"

/* One collective as one rank saw it. */
struct collective {
	uint64_t arrive_ns;         /* its work made on the calling thread */
	uint64_t start_ns, end_ns;  /* run on the backend's thread */
	uint64_t seq;               /* the process group's sequence number */
	uint32_t arrive_tid, tid;
	uint32_t name;              /* name table id: "gloo:all_reduce" */
	uint32_t pg_name, pg_desc;  /* name table ids, 0: not read */
	int32_t group_rank, group_size; /* -1: not read */
	uint32_t op_type;           /* c10d::OpType */
	uint32_t tensors;           /* its input tensors, 0: not read */
	uint64_t nelems;            /* their elements, summed ("In msg nelems") */
	uint64_t bytes;             /* ... times their element size; 0 with nelems: not known */
	uint8_t dtype;              /* the first's ScalarType; COLL_DTYPE_MIXED, _UNKNOWN */
	bool sized;                 /* every tensor read: nelems and bytes hold */
};
#define COLL_DTYPE_UNKNOWN 0xff
#define COLL_DTYPE_MIXED 0xfe

struct coll_counts {
	uint64_t joined;            /* collectives whole */
	uint64_t sized;             /* ... with their tensors' sizes read */
	uint64_t no_work;           /* runs whose work was never seen made */
	uint64_t evicted;           /* works forgotten before they were whole (table full) */
	uint64_t pg_unread;         /* process groups whose name could not be read */
	uint64_t name_cut;          /* titles or group names cut or cleaned */
};

/* A process's collectives state; NULL on no memory. */
struct coll_state *coll_state__new(void);
void coll_state__free(struct coll_state *st);

/* A gloo call (LAYER_GLOO) of process @pid paired: 1 and @out filled when
 * it completes a collective, 0 otherwise.  @names: where the collectives'
 * strings go (the session's kernel name table). */
int coll_on_call(struct coll_state *st, pid_t pid, struct name_table *names,
		 const struct api_call *c, struct collective *out);
const struct coll_counts *coll_counts(const struct coll_state *st);

/* The groups seen so far, for distributedInfo's pg_config: 0..n-1. */
unsigned int coll_ngroups(const struct coll_state *st);
bool coll_group(const struct coll_state *st, unsigned int i, uint32_t *name, uint32_t *desc,
		int32_t *rank, int32_t *size);

/* c10d::OpType's name ("ALLREDUCE"), Kineto's "Collective name" ("allreduce")
 * comes from the title. */
const char *coll_short_name(const char *title);
/* Kineto's name of a ScalarType ("Float", "BFloat16"), "unknown"; its
 * element size in bytes (0: not known). */
const char *coll_dtype_name(uint8_t dtype);
unsigned int coll_dtype_size(uint8_t dtype);

#endif /* FVBPF_COLLECTIVES_H */
