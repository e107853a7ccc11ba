// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>

#include "pipeline/memory/seg_memory.h"
#include "probes/torch_ops.h"
#include "util/text_out.h"
#include "output/memory/mem_snapshot.h"

#include "fvbpf_mem.h"

/* Which device_traces list a record goes in: CUDA index, CPU last; -1 for
 * other devices (and a negative CUDA index: "the current device", which
 * the allocator never reports). */
static int trace_of(const struct mem_rec *r, int max_cuda)
{
	if (r->dev_type == FVBPF_DEV_CUDA)
		return r->dev_index >= 0 ? r->dev_index : -1;
	return r->dev_type == FVBPF_DEV_CPU ? max_cuda + 1 : -1;
}

static void entry(struct obuf *o, const struct seg_output_ctx *c, const struct mem_rec *r,
		  const char *action, bool *first)
{
	char name[TORCH_NAME_MAX];
	uint64_t size = r->bytes < 0 ? (uint64_t)-(r->bytes + 1) + 1 : (uint64_t)r->bytes;

	if (r->op >= 0 && (size_t)r->op < c->seg->nops && c->knames)
		name_table_get(c->knames, c->seg->ops[r->op].name, name, sizeof(name));
	else
		snprintf(name, sizeof(name), "(no torch op)");
	if (!*first)
		ob_char(o, ',');
	ob_lit(o, "\n{\"action\":\"");
	*first = false;
	ob_puts(o, action);
	ob_lit(o, "\",\"addr\":");
	ob_u64(o, r->addr);
	ob_lit(o, ",\"size\":");
	ob_u64(o, size);
	ob_lit(o, ",\"stream\":0,\"time_us\":");
	ob_u64(o, r->ts_ns / 1000);
	ob_lit(o, ",\"frames\":[{\"filename\":\"\",\"line\":0,\"name\":");
	ob_json_string(o, name);
	ob_lit(o, "}]}");
}

static void device_list(struct obuf *o, const struct seg_output_ctx *c, int dev, int max_cuda)
{
	const struct seg_memory *m = c->seg->memory;
	bool first = true;
	size_t i;

	ob_char(o, '[');
	for (i = 0; i < m->n; i++) {
		const struct mem_rec *r = &m->recs[i];

		if (trace_of(r, max_cuda) != dev || !r->bytes)
			continue;
		if (r->bytes > 0) {
			entry(o, c, r, "alloc", &first);
		} else {
			entry(o, c, r, "free_requested", &first);
			entry(o, c, r, "free_completed", &first);
		}
	}
	ob_char(o, ']');
}

int mem_snapshot_write(FILE *f, const struct seg_output_ctx *c)
{
	const struct seg_memory *m = c->seg->memory;
	struct obuf *o = malloc(sizeof(*o));
	int max_cuda = -1, dev, ret;
	size_t i;

	if (!o)
		return -ENOMEM;
	for (i = 0; m && i < m->n; i++)
		if (m->recs[i].dev_type == FVBPF_DEV_CUDA && m->recs[i].dev_index > max_cuda)
			max_cuda = m->recs[i].dev_index;
	ob_init(o, f);
	ob_lit(o, "{\"segments\":[],\"device_traces\":[");
	for (dev = 0; m && dev <= max_cuda + 1; dev++) {
		if (dev)
			ob_lit(o, ",\n");
		device_list(o, c, dev, max_cuda);
	}
	ob_lit(o, "]}\n");
	ret = ob_flush(o);
	free(o);
	if (!ret && ferror(f))
		ret = -(errno ? errno : EIO);
	return ret;
}
