// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The trainer's wait is torch's own scope around DataLoader.__next__
 * ("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"),
 * which the segment holds already: its operators' tree needs it anyway.
 */
#include <string.h>
#include <time.h>

#include "pipeline/loader/dl_join.h"
#include "pipeline/loader/dl_seg.h"
#include "probes/torch_ops.h"
#include "proc/proc_read.h"
#include "util/checked_math.h"
#include "util/clock.h"

#define DL_WAIT_PREFIX "enumerate(DataLoader)#"

/* The waits inside @seg given to the join; their sum. */
static uint64_t give_waits(struct session *s, struct session_target *t, const struct segment *seg)
{
	uint64_t sum = 0;
	uint32_t last_yes = 0, last_no = 0;
	char name[128];
	size_t i;

	for (i = 0; i < seg->nops; i++) {
		const struct torch_call *c = &seg->ops[i];
		bool wait;

		if (c->kind != TORCH_SCOPE || !c->end_ns)
			continue;
		/* one name's answer kept: a step holds few distinct scopes */
		if (c->name == last_yes) {
			wait = true;
		} else if (c->name == last_no) {
			wait = false;
		} else {
			name_table_get(&s->knames, c->name, name, sizeof(name));
			wait = !strncmp(name, DL_WAIT_PREFIX, sizeof(DL_WAIT_PREFIX) - 1);
			*(wait ? &last_yes : &last_no) = c->name;
		}
		if (!wait)
			continue;
		dl_wait(t->dl, c->start_ns, c->end_ns);
		sum = sat_add_u64(sum, span_u64(c->start_ns, c->end_ns));
	}
	return sum;
}

void dl_seg_attach(struct session *s, struct session_target *t, struct segment *seg)
{
	uint64_t end = seg->end_ns ? seg->end_ns : clock_ns(CLOCK_MONOTONIC);

	if (!t->dl || !dl_nbatches(t->dl) || seg->dl)
		return;
	dl_reap(t->dl, proc_alive);
	seg->dl = dl_seg_make(t->dl, seg->start_ns, end, give_waits(s, t, seg));
}
