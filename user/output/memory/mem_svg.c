// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The memory timeline of a segment, drawn by fvbpf (no plotting library):
 * a panel per device with the allocator's total allocated as a step line,
 * reserved dashed for devices, the peak's record circled and named after
 * its torch call.  Names come from the target: escaped for XML.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/checked_math.h"
#include "util/text_sanitize.h"
#include "pipeline/memory/seg_memory.h"
#include "probes/torch_ops.h"
#include "output/memory/mem_output.h"
#include "output/memory/mem_svg.h"

#include "fvbpf_mem.h"

#define W 1000
#define PANEL_H 260
#define LEFT 90
#define RIGHT 20
#define TOP 50
#define PLOT_H 180

bool mem_svg_wanted(const struct seg_output_ctx *c)
{
	return c->seg->memory && c->seg->memory->n;
}

static void xml_text(FILE *f, const char *s)
{
	text_xml_write(f, s, SIZE_MAX);
}

static void human(uint64_t b, char *buf, size_t len)
{
	if (b >= (1ull << 30))
		snprintf(buf, len, "%.2f GiB", (double)b / (double)(1ull << 30));
	else if (b >= (1ull << 20))
		snprintf(buf, len, "%.2f MiB", (double)b / (double)(1ull << 20));
	else if (b >= 1024)
		snprintf(buf, len, "%.1f KiB", (double)b / 1024.0);
	else
		snprintf(buf, len, "%llu B", (unsigned long long)b);
}

struct panel {
	const struct seg_output_ctx *c;
	const struct mem_peak *p;
	int y0;                 /* top of the panel */
	uint64_t t0, span, ymax;
};

static double px(const struct panel *pn, uint64_t ts)
{
	uint64_t d = ts > pn->t0 ? ts - pn->t0 : 0;

	if (d > pn->span)
		d = pn->span;
	return LEFT + (double)(W - LEFT - RIGHT) * (double)d / (double)(pn->span ? pn->span : 1);
}

static double py(const struct panel *pn, uint64_t v)
{
	return pn->y0 + TOP + PLOT_H - (double)PLOT_H * (double)v / (double)pn->ymax;
}

/* A step line of the device's totals: allocated (@reserved false) or reserved. */
static void line(FILE *f, const struct panel *pn, bool reserved)
{
	const struct seg_memory *m = pn->c->seg->memory;
	double x, y = py(pn, 0);
	size_t i;

	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"%.1f,%.1f",
		reserved ? "#d08030" : "#2060c0", reserved ? " stroke-dasharray=\"4,3\"" : "",
		(double)LEFT, y);
	for (i = 0; i < m->n; i++) {
		const struct mem_rec *r = &m->recs[i];

		if (r->dev_type != pn->p->dev_type || r->dev_index != pn->p->dev_index)
			continue;
		x = px(pn, r->ts_ns);
		fprintf(f, " %.1f,%.1f", x, y);
		y = py(pn, reserved ? r->total_reserved : r->total_allocated);
		fprintf(f, " %.1f,%.1f", x, y);
	}
	fprintf(f, " %.1f,%.1f\"/>\n", (double)(W - RIGHT), y);
}

static void panel(FILE *f, const struct panel *pn)
{
	const struct mem_peak *p = pn->p;
	char dev[32], a[32], r[32], op[TORCH_NAME_MAX];
	const struct segment *seg = pn->c->seg;

	mem_device_name(p->dev_type, p->dev_index, dev, sizeof(dev));
	human(p->allocated, a, sizeof(a));
	human(p->reserved, r, sizeof(r));
	if (p->op_at_peak >= 0 && (size_t)p->op_at_peak < seg->nops && pn->c->knames)
		name_table_get(pn->c->knames, seg->ops[p->op_at_peak].name, op, sizeof(op));
	else
		snprintf(op, sizeof(op), "(no torch op)");
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s: peak allocated %s",
		LEFT, pn->y0 + 20, dev, a);
	if (p->dev_type != FVBPF_DEV_CPU)
		fprintf(f, ", peak reserved %s", r);
	fputs(", at ", f);
	xml_text(f, op);
	fprintf(f, " (%llu events)</text>\n", (unsigned long long)p->events);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f8f8f8\" "
		"stroke=\"#999\"/>\n", LEFT, pn->y0 + TOP, W - LEFT - RIGHT, PLOT_H);
	human(pn->ymax, a, sizeof(a));
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", LEFT - 4,
		pn->y0 + TOP + 10, a);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", LEFT - 4,
		pn->y0 + TOP + PLOT_H);
	if (p->dev_type != FVBPF_DEV_CPU)
		line(f, pn, true);
	line(f, pn, false);
	fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#c02020\"><title>",
		px(pn, p->peak_ts), py(pn, p->allocated));
	xml_text(f, op);
	fputs("</title></circle>\n", f);
	if (p->live_at_end) {
		human(p->live_bytes_at_end, a, sizeof(a));
		fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#c02020\">%llu allocations (%s) still "
			"live at the segment's end: leak candidates ([memory] events with "
			"live_at_end in the trace)</text>\n", LEFT, pn->y0 + TOP + PLOT_H + 18,
			(unsigned long long)p->live_at_end, a);
	}
}

int mem_svg_write(FILE *f, const struct seg_output_ctx *c)
{
	struct mem_peak p[MEM_DEVICES_MAX];
	const struct segment *seg = c->seg;
	struct panel pn = { .c = c, .t0 = seg->start_ns };
	size_t n, more, i;
	char region[256];

	n = mem_peaks(seg, p, &more);
	pn.span = span_u64(seg->start_ns, seg->end_ns);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%d\" height=\"%zu\" font-family=\"sans-serif\" font-size=\"12\">\n", W,
		30 + n * PANEL_H + 30);
	snprintf(region, sizeof(region), "%s", c->reg->defs[seg->region].name);
	fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"14\">fvbpf memory timeline: pid %u, "
		"segment %04u, region ", LEFT, seg->pid, seg->seq);
	xml_text(f, region);
	fprintf(f, ", %.3f ms</text>\n", (double)pn.span / 1e6);
	for (i = 0; i < n; i++) {
		pn.p = &p[i];
		pn.y0 = 30 + (int)i * PANEL_H;
		pn.ymax = p[i].reserved > p[i].allocated ? p[i].reserved : p[i].allocated;
		if (!pn.ymax)
			pn.ymax = 1;
		panel(f, &pn);
	}
	fprintf(f, "<text x=\"%d\" y=\"%zu\">time: segment start to end (%.3f ms); blue: allocated, "
		"orange dashed: reserved; red: the peak%s</text>\n</svg>\n", LEFT, 30 + n * PANEL_H + 15,
		(double)pn.span / 1e6, more ? "; more devices than drawn" : "");
	return ferror(f) ? -(errno ? errno : EIO) : 0;
}
