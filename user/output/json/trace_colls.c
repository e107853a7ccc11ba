// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <inttypes.h>

#include "output/json/trace_colls.h"
#include "pipeline/segment.h"
#include "util/checked_math.h"

static void put_name(struct obuf *f, const struct seg_output_ctx *c, uint32_t id, const char *none)
{
	char buf[512];

	if (!id) {
		ob_json_string(f, none);
		return;
	}
	name_table_get(c->knames, id, buf, sizeof(buf));
	ob_json_string(f, buf);
}

static void where(struct obuf *f, int64_t pid, uint32_t tid, uint64_t ts)
{
	ob_lit(f, ",\"pid\":");
	ob_i64(f, pid);
	ob_lit(f, ",\"tid\":");
	ob_u64(f, tid);
	ob_lit(f, ",\"ts\":");
	ob_us(f, ts);
}

static void coll_args(struct obuf *f, const struct seg_output_ctx *c, const struct collective *k)
{
	char title[256];

	name_table_get(c->knames, k->name, title, sizeof(title));
	ob_lit(f, ",\"args\":{\"Collective name\":");
	ob_json_string(f, k->name ? coll_short_name(title) : "unknown");
	ob_lit(f, ",\"Process Group Name\":");
	put_name(f, c, k->pg_name, "unknown");
	ob_lit(f, ",\"Process Group Description\":");
	put_name(f, c, k->pg_desc, "unknown");
	if (k->group_size > 0) {
		ob_lit(f, ",\"Group size\":");
		ob_i64(f, k->group_size);
		ob_lit(f, ",\"Rank\":");
		ob_i64(f, k->group_rank);
	}
	ob_lit(f, ",\"Seq\":");
	ob_u64(f, k->seq);
	ob_lit(f, ",\"arrival_us\":");
	ob_us(f, k->arrive_ns);
	ob_lit(f, ",\"arrival_tid\":");
	ob_u64(f, k->arrive_tid);
	ob_lit(f, "}");
}

/* Flow ids apart from fwdbwd's (1...) and ac2g's (CUPTI correlations). */
#define COLL_FLOW_ID (1ull << 40)

void trace_coll_slices(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	const struct collective *k;
	size_t i;

	for (i = 0; i < s->ncolls; i++) {
		k = &s->colls[i];
		ob_lit(f, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":");
		put_name(f, c, k->name, "gloo:unknown");
		where(f, s->pid, k->tid, k->start_ns);
		ob_lit(f, ",\"dur\":");
		ob_us(f, span_u64(k->start_ns, k->end_ns));
		coll_args(f, c, k);
		ob_char(f, '}');
		/* the arrival on the calling thread -> the run */
		ob_lit(f, ",\n{\"ph\":\"s\",\"cat\":\"collective\",\"name\":\"collective\",\"id\":");
		ob_u64(f, COLL_FLOW_ID + i);
		where(f, s->pid, k->arrive_tid, k->arrive_ns);
		ob_lit(f, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"collective\",\"name\":\"collective\",\"id\":");
		ob_u64(f, COLL_FLOW_ID + i);
		where(f, s->pid, k->tid, k->start_ns);
		ob_char(f, '}');
	}
}
