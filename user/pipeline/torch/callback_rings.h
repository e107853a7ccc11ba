/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The operator fast path's state of one target (callback_ops.c runs it),
 * apart from its functions: torch_events.c reads whether the rings are
 * mapped without calling into callback_ops.c, which calls torch_events.c.
 */
#ifndef FVBPF_CALLBACK_RINGS_H
#define FVBPF_CALLBACK_RINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fvbpf_fast.h"

struct fvbpf_pystack_event;

/* A name seen lately and its torch id: most records find theirs here
 * without the name table's lock and hash. */
#define FAST_NAME_SLOTS 1024
/* A hooked CUDA call's record (fvbpf_fast.h), as peeked. */
union fast_api_rec {
	struct fvbpf_fast_api e;
	struct fvbpf_fast_api_end x;
};

struct fast_name_slot {
	uint64_t hash;          /* 0: empty */
	uint32_t id;
	uint16_t len;
	uint8_t kind;           /* the record's FVBPF_FAST_OP or _NODE */
	char name[160];         /* FVBPF_FAST_NAME */
};

struct callback_ops {
	uint8_t *map;           /* the memfd, mapped; NULL: not in use */
	struct fast_name_slot *names; /* FAST_NAME_SLOTS, with map */
	struct fvbpf_pystack_event *stack; /* per ring, its last STACK record peeked, as BPF's,
					    * FVBPF_FAST_THREADS of them, with map */
	size_t bytes;
	uint32_t nrings;
	uint64_t next_ts;       /* smallest ts at a ring's head, UINT64_MAX none known */
	uint64_t records;       /* handed on */
	uint64_t stacks;        /* STACK records handed on (the library's walks) */
	uint64_t bad;           /* records that broke the format (the ring resynced) */
	/* the library's loss counts over this attach (at open: their values
	 * then, so the difference is ours), read at the end */
	uint64_t ring_drops;    /* records a full ring refused */
	uint64_t base_drops;
	uint64_t no_ring;       /* records of threads that found no free ring */
	uint64_t late;          /* segments the callbacks were registered late for */
	uint64_t outside;       /* callback calls outside segments (registration lag) */
	uint64_t from_ns;       /* records older than this (the attach) are skipped */
	uint64_t early;         /* ... operator begins skipped so (outside at the end) */
	uint32_t early_open[FVBPF_FAST_THREADS]; /* per ring: of those, not yet ended */
	union fast_api_rec *api; /* per ring, its last hooked-call record peeked, with map */
	uint64_t api_records;   /* hooked CUDA calls' records handed on */
	/* the CUDA launch hook (attach/cuda_hook_attach.c) */
	uint32_t hook_gen;      /* its request's generation while unanswered, else 0 */
	uint32_t hook_slots;    /* PLT slots it pointed at its wrapper */
	int launch_id;          /* cudaLaunchKernel's row of the call table, -1: none */
	bool hook_live;         /* the wrapper records (its rings are mapped) */
	bool hook_used;         /* ... did in this attach: its records are taken */
	char hook_why[160];     /* why the launches stay on uprobes ("" none) */
	uint32_t gen;           /* the request's generation, 0: none asked */
	char version[40];       /* the target's torch, "" unknown */
	char why[160];          /* why a target with torch is on uprobes ("" none) */
};

#endif /* FVBPF_CALLBACK_RINGS_H */
