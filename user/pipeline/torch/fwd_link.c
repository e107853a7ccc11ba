// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdlib.h>

#include "pipeline/torch/fwd_link.h"

/* A thread's consecutive sequence numbers fall in consecutive slots; the
 * thread id only moves where its run of slots starts. */
static struct fwd_link_slot *slot_of(struct fwd_link *l, uint64_t tid, int64_t seq)
{
	uint64_t h = (uint64_t)seq + tid * 0x9e3779b97f4a7c15ull;

	return &l->slots[h % FWD_LINK_SLOTS];
}

static int make(struct fwd_link *l)
{
	uint32_t i;

	if (l->slots)
		return 0;
	l->slots = malloc(FWD_LINK_SLOTS * sizeof(*l->slots));
	if (!l->slots)
		return -1;
	for (i = 0; i < FWD_LINK_SLOTS; i++)
		l->slots[i] = (struct fwd_link_slot){ .seq = -1 };
	return 0;
}

uint32_t fwd_link_op(struct fwd_link *l, int64_t seq, uint64_t rf_tid, uint64_t fwd_tid,
		     uint32_t stack)
{
	struct fwd_link_slot *sl;

	if (seq < 0)
		return 0;
	if (!fwd_tid) {
		if (make(l)) {
			l->no_memory++;
			return 0;
		}
		/* the last begun wins: an op inside another with the same
		 * number (aten::t inside aten::linear) is torch's pick */
		*slot_of(l, rf_tid, seq) = (struct fwd_link_slot){ .tid = rf_tid, .seq = seq,
								   .stack = stack };
		return 0;
	}
	sl = l->slots ? slot_of(l, fwd_tid, seq) : NULL;
	if (!sl || sl->seq != seq || sl->tid != fwd_tid || !sl->stack) {
		l->unlinked++;
		return 0;
	}
	l->linked++;
	return sl->stack;
}

void fwd_link_free(struct fwd_link *l)
{
	free(l->slots);
	*l = (struct fwd_link){ 0 };
}
