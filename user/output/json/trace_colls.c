// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "output/json/trace_colls.h"
#include "output/json/trace_where.h"
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
	if (k->sized) {
		const char *shortname = k->name ? coll_short_name(title) : "";

		ob_lit(f, ",\"In msg nelems\":");
		ob_u64(f, k->nelems);
		/* in place: what comes out is what went in */
		if (!strcmp(shortname, "all_reduce") || !strcmp(shortname, "broadcast")) {
			ob_lit(f, ",\"Out msg nelems\":");
			ob_u64(f, k->nelems);
		}
		ob_lit(f, ",\"dtype\":");
		ob_json_string(f, coll_dtype_name(k->dtype));
		ob_lit(f, ",\"bytes\":");
		ob_u64(f, k->bytes);
	}
	ob_lit(f, ",\"arrival_us\":");
	ob_us(f, k->arrive_ns);
	ob_lit(f, ",\"arrival_tid\":");
	ob_u64(f, k->arrive_tid);
	ob_lit(f, "}");
}

/* Collectives looked through for their groups (a quadratic scan, bounded). */
#define TRACE_COLL_GROUPS_MAX 4096

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
		trace_where_when(f, s->pid, k->tid, k->start_ns);
		ob_lit(f, ",\"dur\":");
		ob_us(f, span_u64(k->start_ns, k->end_ns));
		coll_args(f, c, k);
		ob_char(f, '}');
		/* the arrival on the calling thread -> the run */
		ob_lit(f, ",\n{\"ph\":\"s\",\"cat\":\"collective\",\"name\":\"collective\",\"id\":");
		ob_u64(f, COLL_FLOW_ID + i);
		trace_where_when(f, s->pid, k->arrive_tid, k->arrive_ns);
		ob_lit(f, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"collective\",\"name\":\"collective\",\"id\":");
		ob_u64(f, COLL_FLOW_ID + i);
		trace_where_when(f, s->pid, k->tid, k->start_ns);
		ob_char(f, '}');
	}
}

/* The first collective of each named group, in the order they came. */
static bool first_of_group(const struct segment *s, size_t i)
{
	size_t j;

	if (!s->colls[i].pg_name)
		return false;
	for (j = 0; j < i; j++)
		if (s->colls[j].pg_name == s->colls[i].pg_name)
			return false;
	return true;
}

void trace_coll_pg_config(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	size_t i, n = 0;

	for (i = 0; i < s->ncolls && i < TRACE_COLL_GROUPS_MAX; i++)
		n += first_of_group(s, i);
	if (!n)
		return;
	ob_lit(f, ",\"pg_count\":");
	ob_u64(f, n);
	ob_lit(f, ",\"pg_config\":[");
	for (i = 0, n = 0; i < s->ncolls && i < TRACE_COLL_GROUPS_MAX; i++) {
		if (!first_of_group(s, i))
			continue;
		ob_puts(f, n++ ? ",{\"pg_name\":" : "{\"pg_name\":");
		put_name(f, c, s->colls[i].pg_name, "unknown");
		ob_lit(f, ",\"pg_desc\":");
		put_name(f, c, s->colls[i].pg_desc, "unknown");
		ob_lit(f, ",\"backend_config\":\"cpu:gloo\",\"pg_size\":");
		ob_i64(f, s->colls[i].group_size);
		ob_char(f, '}');
	}
	ob_char(f, ']');
}
