// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * --profile-memory's pure parts: the address table (util/addr_table.c),
 * records into a segment with the target's hostile values
 * (pipeline/memory/mem_events.c), per-op memory as key_averages computes it and
 * peaks per device (output/memory/mem_output.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fvbpf_mem.h"
#include "output/memory/mem_output.h"
#include "pipeline/memory/mem_events.h"
#include "pipeline/segment.h"
#include "probes/torch_ops.h"
#include "util/addr_table.h"
#include "util/name_table.h"
#include "unit.h"

/* Against a plain array, through growth, collisions and deletions. */
static void test_addr_table_model(void)
{
	enum { N = 5000 };
	static uint64_t size[N];
	struct addr_table t = { 0 };
	struct addr_entry e;
	unsigned int i, r = 1;

	memset(size, 0, sizeof(size));
	for (i = 0; i < 200000; i++) {
		unsigned int k;

		r = r * 1103515245u + 12345u;
		k = (r >> 8) % N;
		if ((r >> 4) & 1) {
			CHECK_EQ(addr_table_put(&t, 0x1000ull * (k + 1), k + 7, i), 0);
			size[k] = k + 7;
		} else {
			int got = addr_table_take(&t, 0x1000ull * (k + 1), &e);

			CHECK_EQ(got, size[k] != 0);
			if (got)
				CHECK_EQ(e.size, size[k]);
			size[k] = 0;
		}
	}
	for (i = 0; i < N; i++) {
		int got = addr_table_take(&t, 0x1000ull * (i + 1), &e);

		CHECK_EQ(got, size[i] != 0);
	}
	CHECK_EQ(t.n, 0);
	addr_table_free(&t);
}

static void test_addr_table_bounds(void)
{
	struct addr_table t = { .max = 3 };
	struct addr_entry e;

	CHECK_EQ(addr_table_put(&t, 0, 1, 0), -EINVAL);
	CHECK_EQ(addr_table_take(&t, 0, &e), 0);
	CHECK_EQ(addr_table_take(&t, 5, &e), 0); /* empty table */
	CHECK_EQ(addr_table_put(&t, 1, 1, 0), 0);
	CHECK_EQ(addr_table_put(&t, 2, 1, 0), 0);
	CHECK_EQ(addr_table_put(&t, 3, 1, 0), 0);
	CHECK_EQ(addr_table_put(&t, 3, 9, 0), 0); /* a replacement needs no room */
	CHECK_EQ(addr_table_put(&t, 4, 1, 0), -ENOSPC);
	CHECK_EQ(addr_table_take(&t, 3, &e), 1);
	CHECK_EQ(e.size, 9);
	addr_table_free(&t);
}

static struct fvbpf_mem_event ev(uint8_t kind, uint64_t addr, int64_t bytes, uint64_t alloc,
				 uint64_t res, uint8_t type, int8_t idx)
{
	static uint64_t ts = 1000;
	struct fvbpf_mem_event e = { .hdr = { .type = FVBPF_EV_MEM, .tid = 7, .ts_ns = ts++ },
				     .addr = addr, .bytes = bytes, .total_allocated = alloc,
				     .total_reserved = res, .kind = kind, .dev_type = type,
				     .dev_index = idx };
	return e;
}

static int rec(struct mem_state *ms, struct segment *seg, int64_t op, struct fvbpf_mem_event e)
{
	return mem_state_record(ms, seg, op, &e);
}

static void test_records_hostile(void)
{
	struct segment *seg = calloc(1, sizeof(*seg));
	struct mem_state ms = { 0 };
	struct mem_peak p[MEM_DEVICES_MAX];
	size_t n, more;

	/* no segment: counted, nothing stored */
	CHECK_EQ(rec(&ms, NULL, -1, ev(FVBPF_MEM_CPU_NEW, 0x10, 8, 0, 0, 0, -1)), 0);
	CHECK_EQ(ms.outside, 1);
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_CPU_NEW, 0x10, 100, 0, 0, 0, -1)), 0);
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_CPU_NEW, 0x20, 0, 0, 0, 0, -1)), 0);   /* empty */
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_CPU_NEW, 0x30, -1, 0, 0, 0, -1)), 0);  /* 2^64-1 */
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_CPU_NEW, 0, 5, 0, 0, 0, -1)), 0);      /* address 0 */
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_CPU_DELETE, 0x99, 0, 0, 0, 0, -1)), 0); /* never seen */
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_CPU_NEW, 0x40, 70, 0, 0, 0, -1)), 0);
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_CPU_NEW, 0x40, 50, 0, 0, 0, -1)), 0); /* free lost */
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_CPU_DELETE, 0x10, 0, 0, 0, 0, -1)), 0);
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_CPU_DELETE, 0x10, 0, 0, 0, 0, -1)), 0); /* twice */
	/* device records: the allocator's totals, bounded */
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_REPORT, 0x1000, 4096, 4096, 8192, 1, 0)), 0);
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_REPORT, 0x2000, INT64_MIN, 1, 1, 1, 0)), 0);
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_REPORT, 0x2000, 1, UINT64_MAX, 1, 1, 0)), 0);
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_REPORT, 0x2000, 1, 1, UINT64_MAX, 1, 0)), 0);
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_REPORT, 0x1000, -4096, 0, 8192, 1, 0)), 0);
	CHECK_EQ(rec(&ms, seg, -1, ev(99, 0x1000, 1, 0, 0, 1, 0)), 0); /* unknown kind */
	CHECK(seg->memory != NULL);
	CHECK_EQ(seg->memory->n, 6); /* new 100, new 70, new 50, free 100, cuda +, cuda - */
	CHECK_EQ(seg->memory->bad, 7);
	CHECK_EQ(seg->memory->unknown_frees, 2);
	CHECK_EQ(seg->memory->recs[1].total_allocated, 170);
	CHECK_EQ(seg->memory->recs[2].total_allocated, 150); /* the 70 went with its lost free */
	CHECK_EQ(seg->memory->recs[3].bytes, -100);
	CHECK_EQ(seg->memory->recs[3].total_allocated, 50);
	mem_state_close(&ms, seg);
	CHECK(seg->memory->recs[2].flags & MEM_REC_LIVE_AT_END);
	CHECK(!(seg->memory->recs[1].flags & MEM_REC_LIVE_AT_END));
	CHECK(!(seg->memory->recs[0].flags & MEM_REC_LIVE_AT_END));
	n = mem_peaks(seg, p, &more);
	CHECK_EQ(n, 2);
	CHECK_EQ(more, 0);
	CHECK_EQ(p[0].dev_type, FVBPF_DEV_CPU);
	CHECK_EQ(p[0].allocated, 170);
	CHECK_EQ(p[0].live_bytes_at_end, 50);
	CHECK_EQ(p[1].dev_type, FVBPF_DEV_CUDA);
	CHECK_EQ(p[1].allocated, 4096);
	CHECK_EQ(p[1].reserved, 8192);
	CHECK_EQ(mem_peak_bytes(seg, false, true), 8192);
	/* the next segment starts with an empty table: the old address is unknown */
	seg->seq = 1;
	seg_memory_free(seg->memory);
	seg->memory = NULL;
	CHECK_EQ(rec(&ms, seg, -1, ev(FVBPF_MEM_CPU_DELETE, 0x40, 0, 0, 0, 0, -1)), 0);
	CHECK_EQ(seg->memory->unknown_frees, 1);
	CHECK_EQ(seg->memory->n, 0);
	mem_state_free(&ms);
	segment_free(seg);
}

struct got {
	char name[64];
	struct mem_usage u;
};
static struct got rows[8];
static int nrows;

static int row(void *ctx, const char *name, const char *kind, const struct mem_usage *u)
{
	(void)ctx;
	(void)kind;
	if (nrows < 8) {
		snprintf(rows[nrows].name, sizeof(rows[nrows].name), "%s", name);
		rows[nrows++].u = *u;
	}
	return 0;
}

/*
 * linear > addmm > (empty, addmm) on one thread: the inner addmm, its
 * parent's only child of the same name, is merged into it (torch's
 * _remove_dup_nodes), so its allocations are the outer addmm's self.
 */
static void test_per_op(void)
{
	struct segment *seg = calloc(1, sizeof(*seg));
	struct name_table names;
	struct mem_state ms = { 0 };
	uint32_t lin, addmm, empty;
	struct torch_call op = { .tid = 7, .kind = TORCH_OP };

	name_table_init(&names);
	lin = name_table_intern(&names, "aten::linear");
	addmm = name_table_intern(&names, "aten::addmm");
	empty = name_table_intern(&names, "aten::empty");
	op.name = lin, op.depth = 0, op.start_ns = 1, op.end_ns = 100;
	seg_add_op(seg, &op);
	op.name = addmm, op.depth = 1, op.start_ns = 2, op.end_ns = 90;
	seg_add_op(seg, &op);
	op.name = addmm, op.depth = 2, op.start_ns = 3, op.end_ns = 80;
	seg_add_op(seg, &op);
	op.name = empty, op.depth = 3, op.start_ns = 4, op.end_ns = 5;
	seg_add_op(seg, &op);
	rec(&ms, seg, 3, ev(FVBPF_MEM_CPU_NEW, 0x10, 1024, 0, 0, 0, -1));  /* in empty */
	rec(&ms, seg, 2, ev(FVBPF_MEM_CPU_NEW, 0x20, 64, 0, 0, 0, -1));    /* in inner addmm */
	rec(&ms, seg, 0, ev(FVBPF_MEM_CPU_DELETE, 0x10, 0, 0, 0, 0, -1));  /* in linear */
	rec(&ms, seg, 1, ev(FVBPF_MEM_REPORT, 0x30, 512, 512, 2048, 1, 0)); /* CUDA in addmm */
	rec(&ms, seg, -1, ev(FVBPF_MEM_REPORT, 0x40, 8, 520, 2048, 1, 0)); /* in no op */
	nrows = 0;
	CHECK_EQ(mem_summary_rows(seg, &names, row, NULL), 0);
	CHECK_EQ(nrows, 3);
	CHECK_STR(rows[0].name, "aten::linear");
	CHECK_EQ(rows[0].u.cpu, 1024 + 64 - 1024);
	CHECK_EQ(rows[0].u.self_cpu, -1024);
	CHECK_EQ(rows[0].u.dev, 512);
	CHECK_EQ(rows[0].u.self_dev, 0);
	CHECK_STR(rows[1].name, "aten::addmm");
	CHECK_EQ(rows[1].u.cpu, 1088);
	CHECK_EQ(rows[1].u.self_cpu, 64);
	CHECK_EQ(rows[1].u.self_dev, 512);
	CHECK_STR(rows[2].name, "aten::empty");
	CHECK_EQ(rows[2].u.self_cpu, 1024);
	CHECK_EQ(mem_sat_add(INT64_MAX - 1, 5), INT64_MAX);
	CHECK_EQ(mem_sat_add(INT64_MIN + 1, -5), INT64_MIN);
	mem_state_free(&ms);
	segment_free(seg);
	name_table_free(&names);
}

int main(void)
{
	RUN(test_addr_table_model);
	RUN(test_addr_table_bounds);
	RUN(test_records_hostile);
	RUN(test_per_op);
	UNIT_DONE();
}
