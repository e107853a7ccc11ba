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
#include "pipeline/torch/callback_rings.h"

struct session;
struct session_target;
struct fvbpf_pystack_event;

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
