/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --dump-on-stall SECONDS: when a traced process that had ended a segment
 * ends none for that long, fvbpf dump's text and JSON of every traced
 * process go into the output directory (dump_stallNNNN.txt, .json): where
 * each rank is, which ones wait in a collective and which are absent.  One
 * dump per stall: the processes stalled then are covered until they step
 * again.  At most STALL_DUMPS_MAX per attach; later stalls are counted.
 */
#ifndef FVBPF_STALL_WATCH_H
#define FVBPF_STALL_WATCH_H

#include "attach/attach.h"
#include "model/session.h"

#define STALL_DUMPS_MAX 16

/* 0, or -ENOMEM (said); nothing when the option is not given. */
int stall_watch_start(struct session *s, const struct attach_opts *o);
/* Each loop: a dump when a process stalled. */
void stall_watch_tick(struct session *s);
/* The exit report's lines. */
void stall_watch_report(const struct session *s);
void stall_watch_free(struct session *s);

#endif /* FVBPF_STALL_WATCH_H */
