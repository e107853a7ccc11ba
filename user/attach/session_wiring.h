/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The calls that cross stages, wired here: a lower stage reaches a higher
 * one only through the session's hooks (model/session.h), installed with
 * what they reach.
 */
#ifndef FVBPF_SESSION_WIRING_H
#define FVBPF_SESSION_WIRING_H

#include "model/session.h"
#include "output/seg_writer.h"

/* Start the writer into @outdir (s->writer) and hand it the segments
 * seg_close.c releases (s->hooks.write_segment).  0, or -errno. */
int session_writer_start(struct session *s, const char *outdir, const struct seg_writer_opts *o);

#endif /* FVBPF_SESSION_WIRING_H */
