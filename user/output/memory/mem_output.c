// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/stacks/pystack_fold.h"
#include "pipeline/pystack.h"
#include "util/checked_math.h"
#include "pipeline/memory/mem_events.h"
#include "pipeline/torch/op_tree.h"
#include "probes/torch_ops.h"
#include "output/memory/mem_output.h"

#include "fvbpf_mem.h"

/* torch's profiler_util: memory of these device types is CPU memory, of
 * those device memory; the rest counts in neither column. */
static int dev_class(uint8_t type)
{
	if (type == FVBPF_DEV_CPU || type == 2 /* MKLDNN */ || type == 5 /* IDEEP */)
		return 0;
	if (type == FVBPF_DEV_CUDA || type == 6 /* HIP */ || type == 20 /* PrivateUse1 */)
		return 1;
	return -1;
}

/* Sizes are bounded by MEM_BYTES_MAX and records by MEM_SEG_MAX: sums fit. */
static void attribute(const struct segment *seg, const struct op_tree *t, struct mem_usage *u)
{
	const struct seg_memory *m = seg->memory;
	size_t i;
	long o;
	int cls;

	for (i = 0; i < m->n; i++) {
		const struct mem_rec *r = &m->recs[i];

		cls = dev_class(r->dev_type);
		if (cls < 0 || r->op < 0 || (size_t)r->op >= seg->nops)
			continue;
		o = op_tree_resolve(t, r->op);
		if (o < 0)
			continue;
		if (cls)
			u[o].self_dev = mem_sat_add(u[o].self_dev, r->bytes);
		else
			u[o].self_cpu = mem_sat_add(u[o].self_cpu, r->bytes);
		for (; o >= 0; o = op_tree_resolve(t, t->parent[o])) {
			if (cls)
				u[o].dev = mem_sat_add(u[o].dev, r->bytes);
			else
				u[o].cpu = mem_sat_add(u[o].cpu, r->bytes);
		}
	}
}

int mem_summary_rows(const struct segment *seg, struct name_table *names, mem_row_fn fn, void *ctx)
{
	struct op_tree t = { 0 };
	struct mem_usage *u = NULL;
	char name[TORCH_NAME_MAX];
	size_t i;
	int err;

	if (!seg->memory || !seg->nops)
		return 0;
	err = op_tree_build(seg, &t);
	if (err)
		return err;
	u = calloc(seg->nops, sizeof(*u));
	if (!u) {
		err = -ENOMEM;
		goto cleanup;
	}
	attribute(seg, &t, u);
	for (i = 0; i < seg->nops && !err; i++) {
		if (t.merged[i])
			continue;
		name_table_get(names, seg->ops[i].name, name, sizeof(name));
		err = fn(ctx, name, seg->ops[i].kind == TORCH_SCOPE ? "user_annotation" : "cpu_op",
			 &u[i]);
	}
cleanup:
	op_tree_free(&t);
	free(u);
	return err;
}

void mem_device_name(uint8_t type, int8_t index, char *buf, size_t len)
{
	if (type == FVBPF_DEV_CPU)
		snprintf(buf, len, "cpu");
	else if (type == FVBPF_DEV_CUDA)
		snprintf(buf, len, "cuda:%d", index);
	else
		snprintf(buf, len, "type%u:%d", type, index);
}

static struct mem_peak *peak_of(struct mem_peak *out, size_t *n, const struct mem_rec *r)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (out[i].dev_type == r->dev_type && out[i].dev_index == r->dev_index)
			return &out[i];
	if (*n == MEM_DEVICES_MAX)
		return NULL;
	memset(&out[*n], 0, sizeof(out[*n]));
	out[*n].dev_type = r->dev_type;
	out[*n].dev_index = r->dev_index;
	out[*n].op_at_peak = -1;
	return &out[(*n)++];
}

size_t mem_peaks(const struct segment *seg, struct mem_peak *out, size_t *more)
{
	const struct seg_memory *m = seg->memory;
	struct mem_peak *p;
	size_t n = 0, i;

	*more = 0;
	for (i = 0; m && i < m->n; i++) {
		const struct mem_rec *r = &m->recs[i];

		p = peak_of(out, &n, r);
		if (!p) {
			(*more)++;
			continue;
		}
		p->events++;
		if (p->events == 1 || r->total_allocated > p->allocated) {
			p->allocated = r->total_allocated;
			p->op_at_peak = r->op;
			p->peak_ts = r->ts_ns;
		}
		if (r->total_reserved > p->reserved)
			p->reserved = r->total_reserved;
		if (r->flags & MEM_REC_LIVE_AT_END) {
			p->live_at_end++;
			p->live_bytes_at_end = sat_add_u64(p->live_bytes_at_end, (uint64_t)r->bytes);
		}
	}
	return n;
}

uint64_t mem_peak_bytes(const struct segment *seg, bool cpu, bool reserved)
{
	struct mem_peak p[MEM_DEVICES_MAX];
	size_t more, n = mem_peaks(seg, p, &more), i;
	uint64_t best = 0, v;

	for (i = 0; i < n; i++) {
		if ((p[i].dev_type == FVBPF_DEV_CPU) != cpu)
			continue;
		v = reserved ? p[i].reserved : p[i].allocated;
		best = v > best ? v : best;
	}
	return best;
}

static void op_name(const struct seg_output_ctx *c, int64_t op, char *buf, size_t len)
{
	if (op < 0 || (size_t)op >= c->seg->nops || !c->knames)
		snprintf(buf, len, "(no torch op)");
	else
		name_table_get(c->knames, c->seg->ops[op].name, buf, len);
}

/* --with-stack: " line=FUNC (FILE:LINE)", the Python line of the torch call
 * at a peak, or "" when it has no stack. */
static void op_line(const struct seg_output_ctx *c, int64_t op, char *buf, size_t len)
{
	const struct pystack_entry *e;
	char label[600];

	buf[0] = '\0';
	if (!c->pystacks || op < 0 || (size_t)op >= c->seg->nops || !c->seg->ops[op].stack)
		return;
	e = pystack_get(c->pystacks, c->seg->ops[op].stack);
	if (!e || !e->n)
		return;
	pystack_frame_label(c->knames, &e->f[0], label, sizeof(label));
	snprintf(buf, len, " line=%s", label);
}

void mem_peaks_text(const struct seg_output_ctx *c, char *buf, size_t len)
{
	struct mem_peak p[MEM_DEVICES_MAX];
	char dev[32], op[TORCH_NAME_MAX], line[640];
	size_t n, i, more, at = 0;
	int w;

	buf[0] = '\0';
	n = mem_peaks(c->seg, p, &more);
	for (i = 0; i < n && at < len; i++) {
		mem_device_name(p[i].dev_type, p[i].dev_index, dev, sizeof(dev));
		op_name(c, p[i].op_at_peak, op, sizeof(op));
		op_line(c, p[i].op_at_peak, line, sizeof(line));
		if (p[i].dev_type == FVBPF_DEV_CPU)
			w = snprintf(buf + at, len - at, "%s%s allocated=%llu op=%s%s live_at_end=%llu",
				     i ? "; " : "", dev, (unsigned long long)p[i].allocated, op, line,
				     (unsigned long long)p[i].live_bytes_at_end);
		else
			w = snprintf(buf + at, len - at, "%s%s allocated=%llu reserved=%llu op=%s%s",
				     i ? "; " : "", dev, (unsigned long long)p[i].allocated,
				     (unsigned long long)p[i].reserved, op, line);
		if (w < 0)
			break;
		at += (size_t)w;
	}
}

/* Kineto's: {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]",...} */
static void instant(struct obuf *f, const struct segment *s, const struct mem_rec *r)
{
	ob_lit(f, ",\n{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\"");
	ob_lit(f, ",\"pid\":");
	ob_i64(f, s->pid);
	ob_lit(f, ",\"tid\":");
	ob_u64(f, r->tid);
	ob_lit(f, ",\"ts\":");
	ob_us(f, r->ts_ns);
	ob_lit(f, ",\"args\":{\"Total Reserved\":");
	ob_u64(f, r->total_reserved);
	ob_lit(f, ",\"Total Allocated\":");
	ob_u64(f, r->total_allocated);
	ob_lit(f, ",\"Bytes\":");
	ob_i64(f, r->bytes);
	ob_lit(f, ",\"Device Id\":");
	ob_i64(f, r->dev_index);
	ob_lit(f, ",\"Device Type\":");
	ob_u64(f, r->dev_type);
	ob_lit(f, ",\"Addr\":");
	ob_u64(f, r->addr);
	if (r->flags & MEM_REC_LIVE_AT_END)
		ob_lit(f, ",\"live_at_end\":true");
	ob_lit(f, "}}");
}

/* A counter track per device: "Memory cpu", "Memory cuda:0". */
static void counter(struct obuf *f, const struct segment *s, const struct mem_rec *r)
{
	char dev[32];

	mem_device_name(r->dev_type, r->dev_index, dev, sizeof(dev));
	ob_lit(f, ",\n{\"ph\":\"C\",\"name\":\"Memory ");
	ob_puts(f, dev);
	ob_lit(f, "\",\"pid\":");
	ob_i64(f, s->pid);
	ob_lit(f, ",\"tid\":0,\"ts\":");
	ob_us(f, r->ts_ns);
	ob_lit(f, ",\"args\":{\"Allocated\":");
	ob_u64(f, r->total_allocated);
	if (r->dev_type != FVBPF_DEV_CPU) {
		ob_lit(f, ",\"Reserved\":");
		ob_u64(f, r->total_reserved);
	}
	ob_lit(f, "}}");
}

void mem_trace_events(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct seg_memory *m = c->seg->memory;
	size_t i;

	for (i = 0; m && i < m->n; i++) {
		instant(f, c->seg, &m->recs[i]);
		counter(f, c->seg, &m->recs[i]);
	}
}
