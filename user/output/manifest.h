/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_MANIFEST_H
#define FVBPF_MANIFEST_H

#include "model/options.h"
#include "model/session.h"

/* DIR/manifest.json: processes, ranks, files, warnings, loss counters. */
int manifest_write(struct session *s, const struct attach_opts *o);

#endif /* FVBPF_MANIFEST_H */
