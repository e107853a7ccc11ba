// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stddef.h>

#include "model/session.h"
#include "pipeline/drops.h"
#include "pipeline/memory/mem_events.h"
#include "pipeline/memory/mem_handle.h"
#include "pipeline/torch/torch_pairing.h"

#include "fvbpf_mem.h"

int mem_events_handle(struct session *s, struct session_target *t, const void *data, size_t size)
{
	const struct fvbpf_mem_event *ev = data;
	long op;

	if (size < sizeof(*ev)) {
		s->bad_records++;
		return 0;
	}
	drops_charge_low32(t->loss, t->tracker, ev->drops);
	op = torch_pairing_innermost(t->tpair, t->tracker->cur, ev->hdr.tid);
	return mem_state_record(t->mem, t->tracker->cur, op, ev);
}
