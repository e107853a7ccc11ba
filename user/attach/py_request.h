/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What fvbpf asks of a target's Python shim: FastVideo's regions when
 * marker regions are asked for, and -r py:MODULE:QUALNAME functions.
 */
#ifndef FVBPF_PY_REQUEST_H
#define FVBPF_PY_REQUEST_H

#include <stdbool.h>

struct session;
struct session_target;

/* Whether @item of -r is a py: item. */
bool py_request_item(const char *item);
/* Check and keep a py: item (it must live as long as the session) and
 * register its region; one line and -EINVAL when it is malformed. */
int py_request_add(struct session *s, const char *item);
/* Write the request into @t's control page, before its odd epoch: the
 * library serves it under that epoch.  Quiet no-op without a CPython. */
void py_request_send(struct session *s, struct session_target *t);

#endif /* FVBPF_PY_REQUEST_H */
