/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Joins the agent's GPU records to the calls that caused them, exactly: a
 * record carries CUPTI's correlation id, which the agent's API callback
 * named inside the uprobe'd call; no join by nearest timestamp.  One per
 * traced process (correlation ids are per process).
 */
#ifndef FVBPF_GPU_JOIN_H
#define FVBPF_GPU_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fvbpf_events.h"
#include "fvbpf_gpu.h"
#include "util/name_table.h"

/* What a target's in-process agent said of itself (pipeline/events.c keeps
 * it; the manifest, the exit report and the traces show it). */
struct agent_state {
	bool active;
	bool heard;                 /* the agent reported since attach */
	char status[FVBPF_STATUS_MSG + 32];
	int clock;                  /* the GPU clock's source */
	uint64_t cupti_dropped;
	uint64_t corr_without_call; /* callback outside any probed call */
	uint64_t gpu_missing;       /* over all written segments */
	unsigned int status_warned; /* bit per agent status code */
};

struct segment;

/* Kernel names accepted from one process's agent (each is sent once per
 * attach); more are counted in names_dropped and their kernels show "?". */
#define GPU_JOIN_MAX_NAMES 65536u

struct gpu_activity {
	uint16_t kind;          /* enum fvbpf_gpu_kind */
	uint8_t copy_kind;      /* memcpy: its kind; sync: CUpti_ActivitySynchronizationType */
	uint8_t pad;
	uint32_t correlation;
	uint64_t start, end;    /* CLOCK_MONOTONIC */
	uint32_t device, stream;
	uint32_t name;          /* kernels: name id in the session's table */
	uint32_t registers;
	int32_t grid[3], block[3];
	int32_t static_smem, dynamic_smem;
	uint64_t bytes;
	int64_t call;           /* index in the segment's calls, -1 if none */
};

/* Where the segment of a sequence number is now, or NULL (written). */
typedef struct segment *(*gpu_find_segment_fn)(void *ctx, uint32_t seq);

struct gpu_join {
	uint8_t *buf;           /* reassembly of the chunked record stream */
	size_t len, cap;
	struct addr_cache names;   /* agent's name id -> session name id */
	struct addr_cache corrs;   /* correlation -> (seq + 1) << 32 | call index */
	struct name_table *knames;
	gpu_find_segment_fn find;
	void *ctx;
	uint64_t records, joined, outside, late, bad;
	uint64_t over_limit;    /* records past their segment's limits.gpu */
	uint64_t nnames, names_dropped;
	uint64_t forgotten;     /* correlations of written segments still in corrs */
	bool resync;            /* skip to the end of the current batch */
};

void gpu_join_init(struct gpu_join *j, struct name_table *knames, gpu_find_segment_fn find,
		   void *ctx);
void gpu_join_free(struct gpu_join *j);
/* The call at @index of segment @seq carries @correlation. */
int gpu_join_note_call(struct gpu_join *j, uint32_t correlation, uint32_t seq, size_t index);
/*
 * A chunk of the stream; complete records are joined at once.  @last marks
 * the end of an agent batch, which always ends on a record boundary: a
 * stream out of step (a dropped chunk) is resynchronised there.
 */
int gpu_join_chunk(struct gpu_join *j, const uint8_t *data, size_t len, bool last);
/* The first chunk of a batch: whatever is left of an earlier batch whose
 * end was lost is dropped (and counted). */
void gpu_join_batch_start(struct gpu_join *j);
/* Calls of @seg that should have GPU records but have none. */
uint64_t gpu_join_missing(const struct segment *seg);
/* Forget the correlations of a segment that is being written. */
void gpu_join_forget(struct gpu_join *j, const struct segment *seg);

/* A target's GPU join, zeroed (NULL: out of memory); gpu_join__free()
 * ends it (NULL is fine). */
struct gpu_join *gpu_join__new(void);
void gpu_join__free(struct gpu_join *p);

/* What a target's agent said, zeroed (NULL: out of memory); agent_state__free()
 * ends it (NULL is fine). */
struct agent_state *agent_state__new(void);
void agent_state__free(struct agent_state *p);

#endif /* FVBPF_GPU_JOIN_H */
