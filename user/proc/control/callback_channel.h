/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The operator fast path's fields of a target's control page (the
 * library's side is user/lib/torch_fast.c; the protocol
 * include/fvbpf_fast.h): the request, its answer, the gates.
 */
#ifndef FVBPF_CALLBACK_CHANNEL_H
#define FVBPF_CALLBACK_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc/control/control_page.h"

/* Whether a thread of the library polls the page (it answers): 1, 0, -errno. */
int callback_channel_watched(const struct control_page *c);
/* What opens a segment, as the library follows it (fvbpf_events.h). */
struct callback_tables {
	const uint64_t *regions;  /* fvbpf_region_hash of each enabled region */
	uint32_t nregions;
	const uint64_t *gates;    /* fvbpf_scope_hash of region scopes */
	uint32_t ngates;
	const uint64_t *steps;    /* ... of --step-by scopes */
	uint32_t nsteps;
	bool window;              /* time windows: always inside */
	bool stacks;              /* --with-stack */
};

/* Write the tables, then post the layout on the fast channel (its
 * generation in @gen; the answer through channel_answered()).  -E2BIG
 * when a table does not fit the page. */
int callback_channel_request(const struct control_page *c, uint32_t layout,
			     const struct callback_tables *tb, uint32_t *gen);
/* The region, scope and window tables (what opens a segment). */
int callback_channel_tables_put(const struct control_page *c, const struct callback_tables *tb);
/* The scope tables again (a scope name learned later). */
int callback_channel_scopes(const struct control_page *c, const struct callback_tables *tb);
/* --with-stack: where the interpreter keeps a thread's frames (@cfg, a
 * struct fvbpf_py_cfg of @len bytes), for the library's own walk; written
 * before the flag that lets the library use it. */
int callback_channel_py(const struct control_page *c, const void *cfg, size_t len);

#endif /* FVBPF_CALLBACK_CHANNEL_H */
