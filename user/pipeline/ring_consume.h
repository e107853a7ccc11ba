/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Bounded passes over the ring buffer.  libbpf's ring_buffer__consume()
 * hands records to events_ring_cb() until the ring is empty, which never
 * happens while the targets fill it faster than the consumer handles
 * records (the ASan build with --record-shapes on three busy ranks, beside
 * two busy loops): inside that one call fvbpf saw neither -n reached nor
 * a Ctrl-C or the SIGTERM of timeout(1), and ran on for as long as the job
 * did.  A pass stops after RING_PASS_MAX records; the loop around it looks
 * at everything else, and passes again at once while the ring is not empty.
 */
#ifndef FVBPF_RING_CONSUME_H
#define FVBPF_RING_CONSUME_H

#include <stdbool.h>
#include <stdint.h>

#include "model/session.h"

#define RING_PASS_MAX 16384u

/* One pass of at most RING_PASS_MAX records: true when it left the ring
 * empty (as far as it saw). */
bool ring_pass(struct session *s);
/* Passes until the ring is empty or @max_ns have gone by: true when it is
 * empty.  For the ends of a target and of the session, where the records
 * in the ring are the last ones that count. */
bool ring_drain(struct session *s, uint64_t max_ns);

/* After each record, in the test build (fvbpf-test) only: sleeps
 * FVBPF_TEST_RING_DELAY_US, a consumer slower than its target on demand
 * (tests/bats/overload.bats).  Nothing in fvbpf itself. */
void ring_record_delay(void);

#endif /* FVBPF_RING_CONSUME_H */
