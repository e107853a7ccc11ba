/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The exit report on stdout. */
#ifndef FVBPF_EXIT_REPORT_H
#define FVBPF_EXIT_REPORT_H

#include "model/options.h"
#include "model/session.h"

void report_print(struct session *s, const struct attach_opts *o);

#endif /* FVBPF_EXIT_REPORT_H */
