/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* A closed segment's DataLoader part, made on the consumer thread. */
#ifndef FVBPF_DL_SEG_H
#define FVBPF_DL_SEG_H

#include "model/session.h"
#include "pipeline/segment.h"

/* The trainer's waits inside @seg (its DataLoader __next__ scopes) given
 * to the join, then seg->dl set to the batches received inside it. */
void dl_seg_attach(struct session *s, struct session_target *t, struct segment *seg);

#endif /* FVBPF_DL_SEG_H */
