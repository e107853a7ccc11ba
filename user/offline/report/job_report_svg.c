// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report --html`: the charts, as inline SVG written here (no script,
 * nothing fetched), so the page shows them in any browser, offline. */
#include <string.h>

#include "offline/report/html_internal.h"

#define BAR_ROW    18   /* px per rank */
#define LABEL_W    260  /* px left of the plot */
#define PLOT_W     560
#define TOP        28   /* px above the first bar: the axis labels */
#define TICKS      4
#define DOT_H      300  /* px: the scatter plot's height */
#define DOT_LEFT   70

static const char *const C_BAR = "#4c78a8", *const C_SLOW = "#d62728", *const C_AXIS = "#888";

static double to_ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* The largest max_ns of the ranks drawn, in ms (1 when none: no division by 0). */
static double bar_scale(const struct jr_region *g, size_t n)
{
	double top = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (g->ranks[i].complete && to_ms(g->ranks[i].max_ns) > top)
			top = to_ms(g->ranks[i].max_ns);
	return top > 0 ? top : 1;
}

/* Vertical grid lines and their ms labels at 0, 1/4 .. 1 of @scale. */
static void x_axis(FILE *f, int left, int width, int top, int bottom, double scale)
{
	int t, x;

	for (t = 0; t <= TICKS; t++) {
		x = left + width * t / TICKS;
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>", x, top, x,
			bottom);
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"tick\">%.3f ms</text>\n",
			x, top - 8, scale * t / TICKS);
	}
}

static void rank_bar(FILE *f, const struct jr_region *g, size_t i, double scale)
{
	const struct jr_rank *k = &g->ranks[i];
	int y = TOP + (int)i * BAR_ROW;
	double x0, x1, w;
	char label[512];

	jr_rank_label(k, label, sizeof(label));
	fprintf(f, "<g class=\"rank\"><title>");
	html_text(f, label);
	if (k->complete)
		fprintf(f, ": mean %.3f ms, min %.3f ms, max %.3f ms, %zu complete segments</title>",
			k->mean_ms, to_ms(k->min_ns), to_ms(k->max_ns), k->complete);
	else
		fprintf(f, ": no complete segment</title>");
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"label\">", LABEL_W - 8,
		y + BAR_ROW - 5);
	html_text_cut(f, label, JR_HTML_LABEL_CHARS);
	fputs("</text>", f);
	if (k->complete) {
		w = PLOT_W * k->mean_ms / scale;
		x0 = LABEL_W + PLOT_W * to_ms(k->min_ns) / scale;
		x1 = LABEL_W + PLOT_W * to_ms(k->max_ns) / scale;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", LABEL_W,
			y + 3, w, BAR_ROW - 6, g->straggler && g->slowest == i ? C_SLOW : C_BAR);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>", x0,
			y + BAR_ROW / 2, x1, y + BAR_ROW / 2);
	}
	fputs("</g>\n", f);
}

void jr_svg_ranks(FILE *f, const struct jr_region *g, size_t idx)
{
	size_t i, n = g->nranks < JR_HTML_CHART_RANKS ? g->nranks : JR_HTML_CHART_RANKS;
	double scale = bar_scale(g, n);
	int h = TOP + (int)n * BAR_ROW + 8, x;

	fprintf(f, "<svg id=\"rank-chart-%zu\" class=\"chart\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
		idx, LABEL_W + PLOT_W + 40, h, LABEL_W + PLOT_W + 40, h);
	fprintf(f, "<desc>Bars: mean segment time per rank; lines: min to max; red: the slowest "
		"rank when it is a straggler; dashed: the median of the rank means.</desc>\n");
	x_axis(f, LABEL_W, PLOT_W, TOP, h - 8, scale);
	for (i = 0; i < n; i++)
		rank_bar(f, g, i, scale);
	if (g->have_slowest) {
		x = LABEL_W + (int)(PLOT_W * g->median_ms / scale);
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
			"stroke-dasharray=\"4 3\"><title>median of the rank means: %.3f ms</title></line>\n",
			x, TOP, x, h - 8, C_AXIS, g->median_ms);
	}
	fputs("</svg>\n", f);
	if (n < g->nranks)
		fprintf(f, "<p class=\"note\">The chart shows the first %zu of %zu ranks; the table "
			"below lists them all.</p>\n", n, g->nranks);
}

struct dot_range {
	size_t step_max;
	int64_t ns_max;
	size_t count, slow;       /* complete segments, those of the straggler */
};

/* Segment @i of the steps when it is drawn: complete. */
static const struct mf_file *dot_file(const struct job_report *r, size_t i)
{
	const struct mf_file *x = jr_step_file(r, i);

	return x->incomplete ? NULL : x;
}

/* Whether segment @i of the steps is the straggler's. */
static bool is_slow(const struct job_report *r, const struct jr_region *g, size_t i)
{
	return g->straggler &&
	       jr_stream_rank(r, g, r->pairs.segs[i].stream) == &g->ranks[g->slowest];
}

static void dot_range(const struct job_report *r, const struct jr_region *g, struct dot_range *d)
{
	const struct sp_region *pr = g->pairs;
	const struct mf_file *x;
	size_t s, i;

	memset(d, 0, sizeof(*d));
	for (s = pr->first_step; s < pr->first_step + pr->nsteps; s++) {
		const struct sp_step *t = &r->pairs.steps[s];

		for (i = t->first; i < t->first + t->n; i++) {
			x = dot_file(r, i);
			if (!x)
				continue;
			if (t->number > d->step_max)
				d->step_max = t->number;
			if (x->duration_ns > d->ns_max)
				d->ns_max = x->duration_ns;
			d->count++;
			d->slow += is_slow(r, g, i);
		}
	}
}

/* The dots of the straggler (@slow) or of the others; *@left: how many
 * more may be drawn. */
static void dots(FILE *f, const struct job_report *r, const struct jr_region *g,
		 const struct dot_range *d, bool slow, size_t *left)
{
	const struct sp_region *pr = g->pairs;
	double xs = d->step_max ? (double)d->step_max : 1;
	double ys = d->ns_max > 0 ? (double)d->ns_max : 1;
	const struct mf_file *x;
	char label[512];
	size_t s, i;

	for (s = pr->first_step; s < pr->first_step + pr->nsteps && *left; s++) {
		const struct sp_step *t = &r->pairs.steps[s];

		for (i = t->first; i < t->first + t->n && *left; i++) {
			x = dot_file(r, i);
			if (!x || is_slow(r, g, i) != slow)
				continue;
			(*left)--;
			jr_stream_label(r, r->pairs.segs[i].stream, label, sizeof(label));
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>",
				DOT_LEFT + PLOT_W * (double)t->number / xs,
				TOP + DOT_H - DOT_H * (double)x->duration_ns / ys, slow ? C_SLOW : C_BAR);
			html_text(f, label);
			fprintf(f, " step %zu (its segment %llu): %.3f ms</title></circle>\n", t->number,
				(unsigned long long)x->segment, to_ms(x->duration_ns));
		}
	}
}

void jr_svg_segments(FILE *f, const struct job_report *r, const struct jr_region *g, size_t idx)
{
	struct dot_range d;
	size_t slow_left, left;
	int w = DOT_LEFT + PLOT_W + 40, h = TOP + DOT_H + 40, t, y;

	if (!g->pairs)
		return;
	dot_range(r, g, &d);
	if (!d.count)
		return;
	fprintf(f, "<svg id=\"segment-chart-%zu\" class=\"chart\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", idx, w, h, w, h);
	fprintf(f, "<desc>One dot per complete segment: its step across (the same step of every "
		"rank one above the other), its time up; red: the straggler's.</desc>\n");
	for (t = 0; t <= TICKS; t++) {
		y = TOP + DOT_H - DOT_H * t / TICKS;
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>", DOT_LEFT, y,
			DOT_LEFT + PLOT_W, y);
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"tick\">%.3f</text>\n",
			DOT_LEFT - 6, y + 4, to_ms(d.ns_max) * t / TICKS);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"tick\">ms</text>", 4, TOP - 10);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"tick\">step 0</text>", DOT_LEFT,
		TOP + DOT_H + 20);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"tick\">step %zu</text>\n",
		DOT_LEFT + PLOT_W, TOP + DOT_H + 20, d.step_max);
	/* the straggler's dots are drawn last (on top), room kept for them */
	slow_left = d.slow < JR_HTML_POINTS ? d.slow : JR_HTML_POINTS;
	left = JR_HTML_POINTS - slow_left;
	dots(f, r, g, &d, false, &left);
	dots(f, r, g, &d, true, &slow_left);
	fputs("</svg>\n", f);
	if (d.count > JR_HTML_POINTS)
		fprintf(f, "<p class=\"note\">The chart shows %d of %zu complete segments.</p>\n",
			JR_HTML_POINTS, d.count);
}
