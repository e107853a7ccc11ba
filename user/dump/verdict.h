/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The verdict across ranks: the collective most of them wait in (by the
 * frames of torch.distributed, dump/frames_say.h), which ranks wait there,
 * and which are absent (every other dumped rank, and the ranks of
 * WORLD_SIZE that were not dumped), each with what it does instead.  The
 * participants are the processes with a rank in their environment (not
 * their forked workers), or every process when none has one.
 */
#ifndef FVBPF_VERDICT_H
#define FVBPF_VERDICT_H

#include <stddef.h>

#include "dump/dump.h"

#define VERDICT_NOT_DUMPED_MAX 4096 /* ranks of WORLD_SIZE listed as not dumped */

/* Fill d->v: 0 or -ENOMEM. */
int verdict_make(struct dump *d);
void verdict_free(struct dump_verdict *v);
/* The thread whose frames say where @p waits, or says what it does: the
 * one in a collective (the main thread first), else the main thread. */
const struct dump_thread *verdict_thread(const struct dump_proc *p);
/* What an absent process does, in words (raw target text: escape it). */
void verdict_doing(const struct dump_proc *p, char *buf, size_t len);

#endif /* FVBPF_VERDICT_H */
