// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report --html`: a region's collectives across ranks: who waits for
 * whom, one step drawn per rank with its collectives aligned on the wall
 * clock, and each step's heaviest (html_internal.h). */
#include <stdint.h>
#include <stdlib.h>

#include "offline/report/html_internal.h"
#include "offline/report/job_report_colls.h"

#define COLL_ROWS_MAX 64     /* ranks drawn in the step picture */
#define COLL_STEPS_MAX 50    /* steps in the table */
#define COLL_PER_STEP 3
#define SVG_W 900
#define SVG_LABEL 170
#define SVG_ROW 20

static void label(FILE *f, const struct job_report *r, size_t stream)
{
	char buf[512];

	jr_stream_label(r, stream, buf, sizeof(buf));
	html_text(f, buf);
}

static void stragglers(FILE *f, const struct job_report *r, const struct jr_colls *c)
{
	size_t i;

	fputs("<table><tr><th class=\"name\">rank</th><th>times last</th>"
	      "<th>the others' wait for it, ms</th></tr>\n", f);
	for (i = 0; i < c->nstrag; i++) {
		fprintf(f, "<tr%s><td class=\"name\">", i ? "" : " class=\"slowest\"");
		label(f, r, c->strag[i].stream);
		fprintf(f, "</td><td>%zu of %zu</td><td>%.3f</td></tr>\n", c->strag[i].times_last, c->n,
			(double)c->strag[i].wait_caused_ns / 1e6);
	}
	fputs("</table>\n", f);
}

/* The step whose collectives made the ranks wait the longest. */
static size_t heaviest_step(const struct jr_colls *c)
{
	int64_t best = -1, sum = 0;
	size_t i, step = c->v[0].step, at = step;

	for (i = 0; i < c->n; i++) {
		if (i && c->v[i].step != c->v[i - 1].step)
			sum = 0;
		sum += c->v[i].wait_ns;
		if (sum > best) {
			best = sum;
			at = c->v[i].step;
		}
	}
	(void)step;
	return at;
}

/* Row of @stream among the step's ranks (first come), or SIZE_MAX. */
static size_t row_of(size_t *rows, size_t *n, size_t stream)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (rows[i] == stream)
			return i;
	if (*n == COLL_ROWS_MAX)
		return SIZE_MAX;
	rows[*n] = stream;
	return (*n)++;
}

static double x_of(int64_t t, int64_t t0, int64_t t1)
{
	return SVG_LABEL + (double)(t - t0) * (SVG_W - SVG_LABEL - 10) / (double)(t1 - t0);
}

static void bar(FILE *f, double x0, double x1, size_t row, const char *colour, const char *title,
		double ms)
{
	fprintf(f, "<rect x=\"%.1f\" y=\"%zu\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
		"<title>%s %.3f ms</title></rect>\n", x0, 20 + row * SVG_ROW, x1 - x0 > 0.5 ? x1 - x0 : 0.5,
		SVG_ROW - 6, colour, title, ms);
}

/* One step: a row per rank, each collective from its arrival to its exit,
 * the wait for the last rank in orange, the transfer after it in blue. */
static void step_svg(FILE *f, const struct job_report *r, const struct jr_colls *c, size_t step)
{
	size_t rows[COLL_ROWS_MAX], nrows = 0, i, j, row;
	int64_t t0 = INT64_MAX, t1 = INT64_MIN, last;

	for (i = 0; i < c->n; i++) {
		if (c->v[i].step != step)
			continue;
		for (j = 0; j < c->v[i].n; j++) {
			const struct jr_coll_rank *e = &c->ranks[c->v[i].first + j];

			t0 = e->arrive_ns < t0 ? e->arrive_ns : t0;
			t1 = e->end_ns > t1 ? e->end_ns : t1;
			row_of(rows, &nrows, e->stream);
		}
	}
	if (t1 <= t0 || !nrows)
		return;
	fprintf(f, "<p>Step %zu, the one whose collectives made the ranks wait longest: each "
		"collective from a rank's arrival to its exit; <span style=\"color:#e45756\">waiting "
		"for the last rank</span>, then <span style=\"color:#4c78a8\">in transfer</span>; "
		"%.3f ms across.</p>\n", r->pairs.steps[step].number, (double)(t1 - t0) / 1e6);
	fprintf(f, "<svg width=\"%d\" height=\"%zu\" role=\"img\">\n", SVG_W, 30 + nrows * SVG_ROW);
	for (i = 0; i < nrows; i++) {
		fprintf(f, "<text x=\"4\" y=\"%zu\" font-size=\"12\">", 32 + i * SVG_ROW);
		label(f, r, rows[i]);
		fputs("</text>\n", f);
	}
	for (i = 0; i < c->n; i++) {
		if (c->v[i].step != step)
			continue;
		last = c->ranks[c->v[i].first + c->v[i].last].arrive_ns;
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"14\" y2=\"%zu\" stroke=\"#888\" "
			"stroke-dasharray=\"2,2\"/>\n", x_of(last, t0, t1), x_of(last, t0, t1),
			24 + nrows * SVG_ROW);
		for (j = 0; j < c->v[i].n; j++) {
			const struct jr_coll_rank *e = &c->ranks[c->v[i].first + j];

			row = row_of(rows, &nrows, e->stream);
			if (row == SIZE_MAX)
				continue;
			if (last > e->arrive_ns)
				bar(f, x_of(e->arrive_ns, t0, t1), x_of(last, t0, t1), row, "#e45756",
				    "waiting", (double)(last - e->arrive_ns) / 1e6);
			if (e->end_ns > last)
				bar(f, x_of(last > e->arrive_ns ? last : e->arrive_ns, t0, t1),
				    x_of(e->end_ns, t0, t1), row, "#4c78a8", "transfer",
				    (double)(e->end_ns - last) / 1e6);
		}
	}
	fputs("</svg>\n", f);
}

static void step_rows(FILE *f, const struct job_report *r, const struct jr_colls *c)
{
	size_t i, j, k, shown, steps = 0, best, used[COLL_PER_STEP];

	fputs("<table><tr><th>step</th><th class=\"name\">collective</th><th class=\"name\">group"
	      "</th><th>seq</th><th>bytes</th><th class=\"name\">last rank</th><th>wait ms</th>"
	      "<th>transfer ms</th></tr>\n", f);
	for (i = 0; i < c->n && steps < COLL_STEPS_MAX; i = j, steps++) {
		for (j = i + 1; j < c->n && c->v[j].step == c->v[i].step; j++)
			;
		for (shown = 0; shown < COLL_PER_STEP && shown < j - i; shown++) {
			best = SIZE_MAX;
			for (k = i; k < j; k++) {
				size_t u;

				for (u = 0; u < shown && used[u] != k; u++)
					;
				if (u == shown && (best == SIZE_MAX || c->v[k].wait_ns > c->v[best].wait_ns))
					best = k;
			}
			used[shown] = best;
			fprintf(f, "<tr><td>%zu</td><td class=\"name\">", r->pairs.steps[c->v[best].step].number);
			html_text(f, c->v[best].name);
			fputs("</td><td class=\"name\">", f);
			html_text(f, c->v[best].pg);
			fprintf(f, "</td><td>%llu</td><td>", (unsigned long long)c->v[best].seq);
			if (c->v[best].bytes >= 0)
				fprintf(f, "%lld", (long long)c->v[best].bytes);
			else
				fputs("-", f);
			fputs("</td><td class=\"name\">", f);
			label(f, r, c->ranks[c->v[best].first + c->v[best].last].stream);
			fprintf(f, "</td><td>%.3f</td><td>%.3f</td></tr>\n",
				(double)c->v[best].wait_ns / 1e6, (double)c->v[best].transfer_ns / 1e6);
		}
	}
	fputs("</table>\n", f);
	if (i < c->n)
		fprintf(f, "<p class=\"note\">%zu more collectives in later steps (<code>--json</code> "
			"has them all).</p>\n", c->n - i);
}

void jr_html_colls(FILE *f, const struct job_report *r, const struct jr_region *g)
{
	const struct jr_colls *c = g->colls;

	if (!c || !c->n)
		return;
	fprintf(f, "<h3>Collectives: who waits for whom</h3>\n<p>%zu collectives matched across "
		"ranks by process group and sequence number%s. The ranks the others waited for, by "
		"the wait they caused:</p>\n", c->n, c->alone ? " (some seen by one rank only: not "
		"shown)" : "");
	stragglers(f, r, c);
	step_svg(f, r, c, heaviest_step(c));
	fputs("<p>Each step's heaviest collectives:</p>\n", f);
	step_rows(f, r, c);
}
