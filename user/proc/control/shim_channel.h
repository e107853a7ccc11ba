/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The Python shim's request in a target's control page (the library's
 * side is user/lib/pyshim.c; the protocol include/fvbpf_pyshim.h).
 */
#ifndef FVBPF_SHIM_CHANNEL_H
#define FVBPF_SHIM_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include "proc/control/control_page.h"

/* Whether the library found a CPython in the process: 1, 0, or -errno. */
int shim_channel_capable(const struct control_page *c);
/* Write @len bytes of request, then a generation the library has not
 * served (returned in @gen): it copies the request at the next odd epoch.
 * -E2BIG when it does not fit the control page. */
int shim_channel_request(const struct control_page *c, const char *req, size_t len,
			 uint32_t *gen);

#endif /* FVBPF_SHIM_CHANNEL_H */
