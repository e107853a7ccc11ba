/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The marker library's probe functions: which BPF program each gets, and
 * putting them in (target.c's attach, under the epoch protocol). */
#ifndef FVBPF_MARKER_ATTACH_H
#define FVBPF_MARKER_ATTACH_H

#include <stdint.h>

#include "model/session.h"

/* Whether the markers hand their clock reading to the _ts region probes
 * under t->epoch: sets t->marker_ts and writes the control page.  Before
 * the epoch turns odd.  0, or -1 with errno set. */
int marker_ts_choose(struct session_target *t);
/* Every probe function the library calls, the region begin last; @key is
 * the process's slot (the probes' cookie).  0, or -1 with errno set. */
int marker_probes_attach(struct session *s, struct session_target *t, uint32_t key);

#endif /* FVBPF_MARKER_ATTACH_H */
