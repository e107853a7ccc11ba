/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The operator fast path, fvbpf's side: the target's rings (its memfd,
 * mapped shared), drained in time order beside the BPF ring, each record
 * handed to the torch pipeline as the uprobe path's record would be.
 * Everything in the rings is the target's: bounded, checked, counted.
 */
#ifndef FVBPF_CALLBACK_OPS_H
#define FVBPF_CALLBACK_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fvbpf_fast.h"

struct session;
struct session_target;
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

/* Map the rings from /proc/PID/fd/@fd (a sealed memfd of @bytes), start
 * every ring at its head.  0 or -errno (said in one line by the caller). */
int callback_ops_open(struct callback_ops *f, pid_t pid, int fd, uint64_t bytes);
/* The attach at @from_ns: what the rings hold and lost so far is skipped
 * and not ours (the library records from its answer on), records older
 * than @from_ns are skipped as they come.  Nothing when not mapped. */
void callback_ops_rebase(struct callback_ops *f, uint64_t from_ns);
/* The record at ring @i's tail, copied out and checked, its name
 * NUL-terminated in @name (FVBPF_FAST_NAME + 1 bytes): 1 one is there, 0
 * none, -1 the ring made no sense (skipped to its head, counted in bad),
 * 2 a STACK record (its first 16 bytes in @rec, the whole of it in
 * f->stack[@i] as BPF's walk writes one), 3 a hooked call's entry or
 * return (the whole of it in f->api[@i]).  Exposed for tests. */
struct fvbpf_fast_rec;
int callback_ops_peek(struct callback_ops *f, uint32_t i, struct fvbpf_fast_rec *rec, char *name);
/* Hand on every record of the target's rings older than @until, oldest
 * first (UINT64_MAX: all there are). */
void callback_ops_drain(struct session *s, struct session_target *t, uint64_t until);
/* Records lost so far in this attach (full rings, threads without one,
 * broken records), read live. */
uint64_t callback_ops_lost(const struct callback_ops *f);
/* Read the library's loss counters, unmap. */
void callback_ops_close(struct callback_ops *f);

/* A target's operator callbacks' rings, zeroed (NULL: out of memory); callback_ops__free()
 * ends it (NULL is fine). */
struct callback_ops *callback_ops__new(void);
void callback_ops__free(struct callback_ops *p);

#endif /* FVBPF_CALLBACK_OPS_H */
