// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report --html`: a region's steps with every rank's segment side by
 * side, and its split into sub-regions per rank (html_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "offline/report/html_internal.h"

static void stream_label(FILE *f, const struct job_report *r, size_t stream)
{
	char label[512];

	jr_stream_label(r, stream, label, sizeof(label));
	html_text(f, label);
}

/* One row of the matrix: the step, then each rank's segment or a red cell. */
static void matrix_row(FILE *f, const struct job_report *r, const struct sp_region *pr, size_t s)
{
	const struct sp_step *t = &r->pairs.steps[s];
	const struct mf_file *x;
	char when[48];
	size_t i, k = t->first;

	jr_wallclock(t->start, when, sizeof(when));
	fprintf(f, "<tr><td>%zu</td><td class=\"name\">%s</td>", t->number, when);
	for (i = pr->first_stream; i < pr->first_stream + pr->nstreams; i++) {
		if (k < t->first + t->n && r->pairs.segs[k].stream == i) {
			x = jr_step_file(r, k++);
			fprintf(f, "<td title=\"segment %llu\">%.3f%s</td>", (unsigned long long)x->segment,
				(double)x->duration_ns / 1e6, x->incomplete ? " (incomplete)" : "");
		} else {
			fputs("<td class=\"missing\">no segment</td>", f);
		}
	}
	fprintf(f, "%s</tr>\n", t->disjoint ? "<td class=\"name\">segments do not all overlap</td>" : "");
}

/* One row per step when the ranks are too many for a column each. */
static void summary_row(FILE *f, const struct job_report *r, size_t s)
{
	const struct sp_step *t = &r->pairs.steps[s];
	struct jr_step_stats st;
	char when[48];
	size_t miss[4], n, i;

	jr_step_stats(r, s, &st);
	jr_wallclock(t->start, when, sizeof(when));
	fprintf(f, "<tr><td>%zu</td><td class=\"name\">%s</td><td%s>%zu/%zu</td>", t->number, when,
		st.members < st.streams ? " class=\"missing\"" : "", st.members, st.streams);
	if (st.have) {
		fprintf(f, "<td>%.3f</td><td>%.3f</td><td class=\"name\">", (double)st.min_ns / 1e6,
			(double)st.max_ns / 1e6);
		stream_label(f, r, r->pairs.segs[st.slowest].stream);
		fputs("</td>", f);
	} else {
		fputs("<td>-</td><td>-</td><td>-</td>", f);
	}
	fputs("<td class=\"name\">", f);
	n = sp_missing(&r->pairs, s, miss, 4);
	for (i = 0; i < n && i < 4; i++) {
		fputs(i ? ", " : "", f);
		stream_label(f, r, miss[i]);
	}
	if (n > 4)
		fprintf(f, " and %zu more", n - 4);
	fputs("</td></tr>\n", f);
}

void jr_html_steps(FILE *f, const struct job_report *r, const struct jr_region *g)
{
	const struct sp_region *pr = g->pairs;
	bool matrix;
	size_t s, i, lacking = 0;

	fputs("<h3>Steps: every rank's segment side by side</h3>\n", f);
	if (!pr) {
		fputs("<p class=\"note\">No segment with wall-clock times: none placed.</p>\n", f);
		return;
	}
	for (s = pr->first_step; s < pr->first_step + pr->nsteps; s++)
		lacking += r->pairs.steps[s].n < pr->nstreams;
	fprintf(f, "<p>%zu step%s of %zu rank%s, paired by %s. %zu step%s lack a rank: a segment "
		"there has no counterpart on it.%s</p>\n", pr->nsteps, pr->nsteps == 1 ? "" : "s",
		pr->nstreams, pr->nstreams == 1 ? "" : "s", pr->by_key ? "step key" :
		"the overlap of their wall-clock times", lacking, lacking == 1 ? "" : "s",
		pr->no_times ? " Segments without wall-clock times are not placed." : "");
	matrix = pr->nstreams <= JR_HTML_MATRIX_RANKS;
	fputs("<table><tr><th>step</th><th class=\"name\">start (UTC)</th>", f);
	if (matrix)
		for (i = pr->first_stream; i < pr->first_stream + pr->nstreams; i++) {
			fputs("<th>", f);
			stream_label(f, r, i);
			fputs(" ms</th>", f);
		}
	else
		fputs("<th>ranks</th><th>min ms</th><th>max ms</th><th class=\"name\">slowest</th>"
		      "<th class=\"name\">without a segment</th>", f);
	fputs("</tr>\n", f);
	for (s = pr->first_step; s < pr->first_step + pr->nsteps &&
	     s < pr->first_step + JR_HTML_STEP_ROWS; s++) {
		if (matrix)
			matrix_row(f, r, pr, s);
		else
			summary_row(f, r, s);
	}
	fputs("</table>\n", f);
	if (pr->nsteps > JR_HTML_STEP_ROWS)
		fprintf(f, "<p class=\"note\">The first %d of %zu steps are listed "
			"(<code>fvbpf report --json</code> has them all).</p>\n", JR_HTML_STEP_ROWS,
			pr->nsteps);
}

static void split_cell(FILE *f, const struct jr_rank *k, int64_t ns)
{
	fprintf(f, "<td>%.3f (%.1f%%)</td>", (double)ns / (double)k->complete / 1e6,
		k->sum_ns > 0 ? 100.0 * (double)ns / (double)k->sum_ns : 0.0);
}

/* The sub-regions inside the region: the first of sub_order. */
static size_t inside_count(const struct jr_region *g)
{
	size_t n = 0;

	while (n < g->nsubs && g->subs[g->sub_order[n]].depth)
		n++;
	return n;
}

static void split_head(FILE *f, const struct jr_region *g, size_t nin)
{
	const struct jr_sub *x;
	size_t j, d;

	fputs("<table><tr><th class=\"name\">rank</th><th>segment ms</th>", f);
	for (j = 0; j < g->nsubs; j++) {
		if (j == nin)
			fputs("<th>outside these</th>", f);
		x = &g->subs[g->sub_order[j]];
		fputs("<th>", f);
		for (d = 1; d < x->depth; d++)
			fputs("&#8250; ", f); /* one per level below the first */
		if (!x->depth)
			fputs("elsewhere: ", f);
		html_text_cut(f, x->name, JR_HTML_LABEL_CHARS);
		fputs("</th>", f);
	}
	if (nin == g->nsubs)
		fputs("<th>outside these</th>", f);
	fputs("</tr>\n", f);
}

void jr_html_split(FILE *f, const struct jr_region *g)
{
	const struct jr_rank *k;
	size_t j, i, rows = 0, nin;
	char label[512];
	bool flat = false;

	if (!g->nsubs)
		return;
	nin = inside_count(g);
	for (j = 0; j < g->nsubs; j++)
		flat = flat || !g->subs[j].parent_known;
	fputs("<h3>Split into sub-regions, per rank</h3>\n<p class=\"note\">Mean ms per complete "
	      "segment and share of the segment time; &#8250; marks a region inside the one to "
	      "its left; \"elsewhere\": entered outside this region on its thread.", f);
	if (flat)
		fputs(" Summaries written before region rows named their parent: shown flat.", f);
	if (g->subs_dropped)
		fprintf(f, " %llu rows past the first %d sub-regions are left out.",
			(unsigned long long)g->subs_dropped, JR_SUBS_MAX);
	fputs("</p>\n", f);
	split_head(f, g, nin);
	for (i = 0; i < g->nranks && rows < JR_HTML_SPLIT_RANKS; i++) {
		k = &g->ranks[i];
		if (!k->complete)
			continue;
		rows++;
		jr_rank_label(k, label, sizeof(label));
		fputs("<tr><td class=\"name\">", f);
		html_text(f, label);
		fprintf(f, "</td><td>%.3f</td>", k->mean_ms);
		for (j = 0; j < g->nsubs; j++) {
			if (j == nin)
				split_cell(f, k, jr_outside_ns(g, k));
			split_cell(f, k, jr_sub_ns(g, k, g->sub_order[j], NULL));
		}
		if (nin == g->nsubs)
			split_cell(f, k, jr_outside_ns(g, k));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	if (rows == JR_HTML_SPLIT_RANKS)
		fprintf(f, "<p class=\"note\">The first %d ranks are listed.</p>\n", JR_HTML_SPLIT_RANKS);
}
