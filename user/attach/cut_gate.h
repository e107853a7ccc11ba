/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Arm first, then cut together: the processes there at the attach are all
 * armed before any of them opens a segment, so that segment k of every
 * rank is the same training step; --start-at moves that instant to a time
 * every node of a job computes alike.  Processes that come later (late or
 * restarted ranks) begin at their own next step boundary.
 */
#ifndef FVBPF_CUT_GATE_H
#define FVBPF_CUT_GATE_H

#include <stdbool.h>
#include <stdint.h>

#include "attach/attach.h"
#include "model/session.h"

/* Every process armed since @arming_began_ns (CLOCK_MONOTONIC): from the
 * instant this returns, or --start-at's, their segments may open. */
void cut_gate_open(struct session *s, const struct attach_opts *o, uint64_t arming_began_ns);
/* The run loop's: a cut set for later (--start-at) opens when it comes. */
void cut_gate_tick(struct session *s);
/* No segment may open yet (--start-at's time, a shapes measurement). */
bool cut_gate_waiting(const struct session *s);
/* The attach ends: firsts still waiting are compared with what came. */
void cut_gate_end(struct session *s);
/* -n reached for @t: its segments, and its first compared with the other
 * ranks' (a first one step early does not count). */
bool cut_gate_target_done(const struct session_target *t);

#endif /* FVBPF_CUT_GATE_H */
