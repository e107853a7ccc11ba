/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* --inject's policy for one target (the injection itself: proc/inject/). */
#ifndef FVBPF_INJECT_ATTACH_H
#define FVBPF_INJECT_ATTACH_H

#include <sys/types.h>

#include "model/session.h"

/*
 * target_open()'s one call: with --inject, load the library into @pid
 * unless it already maps it (reused), warning in one line when that is
 * refused or fails; without --inject, a hint when @pid maps CUDA but no
 * agent.  Never fails the attach.
 */
void inject_for_target(struct session *s, struct session_target *t, pid_t pid);
/* Without --inject: the one-line hint for a CUDA process without the agent. */
void inject_hint(struct session *s, struct session_target *t);

#endif /* FVBPF_INJECT_ATTACH_H */
