/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What a thread's Python frames say about where it is: the torch.distributed
 * collective it waits in (the outermost frame of distributed_c10d.py that
 * is one: the call the job made) and its process group, as far as the
 * arguments c10d's logging wrapper kept tell; the regions it is in through
 * a decorator (fvbpf's and FastVideo's profile_region), whose frames stay on
 * the stack.  A region opened by `with` leaves no frame: not seen here.
 */
#ifndef FVBPF_FRAMES_SAY_H
#define FVBPF_FRAMES_SAY_H

#include <stdbool.h>

#include "dump/dump.h"
#include "dump/py_walk.h"
#include "proc/python/py_runtime.h"

/* Fill @t's coll_frame, collective, group and regions from its frames
 * (resolved in t->frames, raw in @st, index for index). */
void frames_say(const struct py_runtime *r, const struct pyw_stack *st, struct dump_thread *t);
/* @function of @file is a torch.distributed collective (or a call that
 * waits for every rank as one does: init_process_group, new_group). */
bool frames_is_collective(const char *file, const char *function);

#endif /* FVBPF_FRAMES_SAY_H */
