/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The session's regions from the command line (session_regions.c). */
#ifndef FVBPF_SESSION_REGIONS_H
#define FVBPF_SESSION_REGIONS_H

#include "model/options.h"
#include "model/session.h"

/* The registry, the enabled regions, torch scope patterns, Python
 * regions, --step-by and --window of @o into @s: 0, or -errno said in
 * one line. */
int session_regions_setup(struct session *s, const struct attach_opts *o);

#endif /* FVBPF_SESSION_REGIONS_H */
