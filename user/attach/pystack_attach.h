/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* --with-stack at attach: the session's stack table, each target's
 * interpreter found and handed to BPF (map "py_cfg"). */
#ifndef FVBPF_PYSTACK_ATTACH_H
#define FVBPF_PYSTACK_ATTACH_H

#include "model/options.h"
#include "model/session.h"

/* Whether stacks are wanted: the option, or FastVideo's variable. */
bool pystack_wanted(const struct attach_opts *o);
/* The session's table when wanted: 0, -EINVAL (--group-by-stack alone) or
 * -ENOMEM, said on stderr. */
int pystack_session_start(struct session *s, const struct attach_opts *o);
void pystack_session_free(struct session *s);
/* Once per target: find its CPython and arm BPF for its slot. */
void pystack_attach_target(struct session *s, struct session_target *t);
void pystack_target_release(struct session *s, struct session_target *t);

#endif /* FVBPF_PYSTACK_ATTACH_H */
