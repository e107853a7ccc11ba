// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked_math.h"
#include "pipeline/memory/mem_events.h"
#include "pipeline/segment.h"

#include "fvbpf_mem.h"

/* The table holds one segment's allocations: a new segment starts empty,
 * as torch.profiler's reporter starts empty when profiling starts. */
static void table_for(struct mem_state *ms, const struct segment *seg)
{
	if (ms->seq == seg->seq + 1)
		return;
	addr_table_clear(&ms->live);
	ms->cpu_live = 0;
	ms->seq = seg->seq + 1;
}

static bool out_of_bounds(const struct fvbpf_mem_event *ev)
{
	if (ev->kind == FVBPF_MEM_CPU_NEW)
		return (uint64_t)ev->bytes > MEM_BYTES_MAX;
	if (ev->kind == FVBPF_MEM_REPORT)
		return ev->bytes > (int64_t)MEM_BYTES_MAX || ev->bytes < -(int64_t)MEM_BYTES_MAX ||
		       ev->total_allocated > MEM_TOTAL_MAX || ev->total_reserved > MEM_TOTAL_MAX;
	return ev->kind != FVBPF_MEM_CPU_DELETE;
}

/* The CPU side: sizes of frees from the table, totals counted here.
 * 1: store @r, 0: not an event (nothing allocated, unknown free). */
static int cpu_event(struct mem_state *ms, struct seg_memory *m, const struct fvbpf_mem_event *ev,
		     struct mem_rec *r)
{
	struct addr_entry e;
	int err;

	if (ev->kind == FVBPF_MEM_CPU_NEW) {
		if (!ev->bytes)
			return 0; /* torch reports no empty allocation either */
		if (addr_table_take(&ms->live, ev->addr, &e)) {
			/* still live: its free was lost (a ring-buffer drop) */
			ms->cpu_live = ms->cpu_live > e.size ? ms->cpu_live - e.size : 0;
			m->bad++;
		}
		err = addr_table_put(&ms->live, ev->addr, (uint64_t)ev->bytes, m->n);
		if (err == -ENOSPC || err == -EINVAL) {
			m->table_full += err == -ENOSPC;
			m->bad += err == -EINVAL;
			return 0;
		}
		if (err)
			return err;
		ms->cpu_live = sat_add_u64(ms->cpu_live, (uint64_t)ev->bytes);
		r->bytes = ev->bytes;
	} else {
		if (!addr_table_take(&ms->live, ev->addr, &e)) {
			m->unknown_frees++;
			return 0;
		}
		ms->cpu_live = ms->cpu_live > e.size ? ms->cpu_live - e.size : 0;
		r->bytes = -(int64_t)e.size;
	}
	r->total_allocated = ms->cpu_live;
	return 1;
}

static int store(struct segment *seg, const struct mem_rec *r)
{
	struct seg_memory *m = seg->memory;

	int err;

	if (m->n >= MEM_SEG_MAX) {
		m->over_limit++;
		return 0;
	}
	err = seg_grow_array(seg, &m->recs, m->n, &m->cap, sizeof(*m->recs), 1024);
	if (err == -ENOSPC) {
		m->over_limit++; /* --max-memory: the segment says it was truncated */
		return 0;
	}
	if (err)
		return err;
	m->recs[m->n++] = *r;
	return 0;
}

int mem_state_record(struct mem_state *ms, struct segment *seg, int64_t op,
		     const struct fvbpf_mem_event *ev)
{
	struct mem_rec r = { .ts_ns = ev->hdr.ts_ns, .addr = ev->addr, .op = op,
			     .tid = ev->hdr.tid, .dev_type = ev->dev_type,
			     .dev_index = ev->dev_index };
	int ret;

	if (!seg) {
		ms->outside++;
		return 0;
	}
	if (!seg->memory) {
		seg->memory = calloc(1, sizeof(*seg->memory));
		if (!seg->memory)
			return -ENOMEM;
	}
	if (out_of_bounds(ev)) {
		seg->memory->bad++;
		return 0;
	}
	if (ev->kind == FVBPF_MEM_REPORT) {
		r.bytes = ev->bytes;
		r.total_allocated = ev->total_allocated;
		r.total_reserved = ev->total_reserved;
	} else {
		table_for(ms, seg);
		r.dev_type = FVBPF_DEV_CPU;
		r.dev_index = -1;
		ret = cpu_event(ms, seg->memory, ev, &r);
		if (ret <= 0)
			return ret;
	}
	ms->records++;
	return store(seg, &r);
}

static void mark_live(const struct addr_entry *e, void *ctx)
{
	struct seg_memory *m = ctx;

	if (e->tag < m->n && m->recs[e->tag].addr == e->addr)
		m->recs[e->tag].flags |= MEM_REC_LIVE_AT_END;
}

void mem_state_close(struct mem_state *ms, struct segment *seg)
{
	if (!seg->memory || ms->seq != seg->seq + 1)
		return;
	addr_table_each(&ms->live, mark_live, seg->memory);
	addr_table_clear(&ms->live);
	ms->cpu_live = 0;
	ms->seq = 0;
}

void mem_state_free(struct mem_state *ms)
{
	addr_table_free(&ms->live);
	memset(ms, 0, sizeof(*ms));
}

struct mem_state *mem_state__new(void)
{
	return calloc(1, sizeof(struct mem_state));
}

void mem_state__free(struct mem_state *p)
{
	if (!p)
		return;
	mem_state_free(p);
	free(p);
}
