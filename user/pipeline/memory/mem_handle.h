/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* --profile-memory records from the ring into the target's open segment. */
#ifndef FVBPF_MEM_HANDLE_H
#define FVBPF_MEM_HANDLE_H

#include <stddef.h>

struct session;
struct session_target;
/* A FVBPF_EV_MEM record of @t (events.c): 0 or -ENOMEM. */
int mem_events_handle(struct session *s, struct session_target *t, const void *data, size_t size);

#endif /* FVBPF_MEM_HANDLE_H */
