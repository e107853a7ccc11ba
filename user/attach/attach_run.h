/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The attach orchestration (attach_run.c): wires the stages together and
 * owns none of their state; attach_run() itself is declared in attach.h. */
#ifndef FVBPF_ATTACH_RUN_H
#define FVBPF_ATTACH_RUN_H

#include "model/session.h"

/* Detach and free everything @s holds; also for a session built by hand
 * without BPF (targets with pidfd -1, see target_init()). */
void session_free(struct session *s);

#endif /* FVBPF_ATTACH_RUN_H */
