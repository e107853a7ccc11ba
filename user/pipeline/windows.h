/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* --window: a target's time windows. */
#ifndef FVBPF_WINDOWS_H
#define FVBPF_WINDOWS_H

#include <stdint.h>

struct session;
struct session_target;

/* --window: close the windows that ended before @ts and open the next. */
void window_cut_until(struct session *s, struct session_target *t, uint64_t ts);
/* --window: cut windows that ended a while ago though no record came. */
void window_idle_cut(struct session *s, struct session_target *t);

#endif /* FVBPF_WINDOWS_H */
