/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --with-stack through the operator fast path: the library walks its own
 * thread's CPython frames into its ring (fast_pystack.c).
 */
#ifndef FVBPF_LIB_FAST_PYSTACK_H
#define FVBPF_LIB_FAST_PYSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "fvbpf_events.h"

/* The interpreter's functions the walk needs, looked up once (no-op in a
 * process without a CPython). */
void fast_py_lookup(void);
/* The calling thread's frames as a STACK record of timestamp @ts, before
 * the operator begin of the same @ts: true when done here (or when the
 * thread runs no Python), false when fvbpf_probe_py_stack must walk. */
bool fast_py_emit(const struct fvbpf_control *c, uint64_t ts);

#endif /* FVBPF_LIB_FAST_PYSTACK_H */
