// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * `fvbpf report --html FILE`: the job report as one self-contained HTML
 * page for a person, offline: inline CSS and SVG, no script, nothing
 * fetched (its Content-Security-Policy forbids it too), links to the trace
 * and summary files relative to where the page is written.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "offline/report/html_internal.h"
#include "offline/report/job_report_dl.h"
#include "util/file/output_files.h"
#include "util/text_copy.h"

struct page {
	FILE *f;
	const struct job_report *r;
	const struct manifest *ms;
	size_t n;
	unsigned int top;
	char base[PATH_MAX];      /* the page's directory, real path ("" unknown) */
	char **rel;               /* per directory: its path from the page's ("": none) */
	uint64_t charged;         /* rel and step_of, to the report's budget */
	struct jr_segs segs;
	size_t *file_base;        /* per directory: its first file's index in step_of */
	size_t *step_of;          /* per file of every directory: its step + 1, 0 none */
};

/* An href to file @name of directory @i, or plain text when there is no way. */
static void file_link(struct page *pg, size_t i, const char *name, const char *text)
{
	if (!name[0]) {
		fputs("-", pg->f);
		return;
	}
	if (!pg->rel[i]) {
		html_text(pg->f, name);
		return;
	}
	fputs("<a href=\"", pg->f);
	if (pg->rel[i][0]) {
		html_url_path(pg->f, pg->rel[i]);
		fputc('/', pg->f);
	}
	html_url_path(pg->f, name);
	fputs("\">", pg->f);
	html_text(pg->f, text);
	fputs("</a>", pg->f);
}

/* @n bytes more charged to the report's budget: 0 or -ENOSPC. */
static int charge(struct page *pg, uint64_t n)
{
	int ret = mf_charge(pg->r->budget, n);

	if (!ret)
		pg->charged += n;
	return ret;
}

/* Each directory's path from the page's directory, NULL where unknown.
 * 0, -ENOSPC or -ENOMEM. */
static int rel_paths(struct page *pg, const char *path)
{
	char buf[PATH_MAX], real[PATH_MAX], rel[2 * PATH_MAX];
	size_t i, len;
	int ret;

	snprintf(buf, sizeof(buf), "%s", path);
	if (!realpath(dirname(buf), pg->base))
		pg->base[0] = '\0';
	ret = charge(pg, MF_ALLOC((pg->n ? pg->n : 1) * sizeof(*pg->rel)));
	if (ret)
		return ret;
	pg->rel = calloc(pg->n ? pg->n : 1, sizeof(*pg->rel));
	if (!pg->rel)
		return -ENOMEM;
	for (i = 0; i < pg->n && pg->base[0]; i++) {
		if (!realpath(pg->ms[i].dir, real) || jr_rel_path(pg->base, real, rel, sizeof(rel)))
			continue;
		len = strlen(rel) + 1;
		ret = charge(pg, MF_ALLOC(len));
		if (ret)
			return ret;
		pg->rel[i] = malloc(len);
		if (!pg->rel[i])
			return -ENOMEM;
		memcpy(pg->rel[i], rel, len);
	}
	return 0;
}

static const char STYLE[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1200px}"
	"h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:2em}"
	"h3{font-size:1.05em;margin-top:1.5em}"
	"table{border-collapse:collapse;margin:.5em 0}"
	"td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:right;vertical-align:top}"
	"td.name,th.name{text-align:left;word-break:break-all;max-width:40em}"
	".chart{display:block;margin:.5em 0;font-size:11px}.chart .label{fill:#222}"
	".chart .tick{fill:#666}.slowest{color:#b71c1c;font-weight:600}.note{color:#666}"
	"code{font-size:.95em}td.missing{color:#b71c1c;background:#fdecea}"
	".legend span.sw{display:inline-block;width:14px;height:10px;margin:0 4px 0 12px;"
	"vertical-align:middle}.legend span.line{display:inline-block;width:18px;height:0;"
	"margin:0 4px 0 12px;vertical-align:middle;border-top:2px solid #222}"
	".legend span.dash{display:inline-block;width:18px;height:0;margin:0 4px 0 12px;"
	"vertical-align:middle;border-top:2px dashed #888}";

static void head(struct page *pg)
{
	const struct job_report *r = pg->r;
	size_t i, incomplete = 0;

	for (i = 0; i < r->nregions; i++)
		incomplete += r->regions[i].incomplete;
	fprintf(pg->f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"style-src 'unsafe-inline'\">\n<title>fvbpf report</title>\n<style>%s</style>\n"
		"</head>\n<body>\n<h1>fvbpf report</h1>\n", STYLE);
	fprintf(pg->f, "<p>%zu director%s, %zu node%s, %zu rank%s, %zu region%s. Incomplete "
		"segments (%zu) are counted apart and left out of every time and operator figure; so "
		"are the segments that do not count (begun before the attach, ...) unless "
		"<code>--include-uncounted</code> is given%s. The ranks' segments are paired by "
		"training step: by the step key every segment carries where the job gives one, else "
		"by the overlap of their wall-clock times (each directory's own clock offset "
		"applied), never by segment number.</p>\n",
		r->ndirs, r->ndirs == 1 ? "y" : "ies", r->nhosts, r->nhosts == 1 ? "" : "s", r->nranks,
		r->nranks == 1 ? "" : "s", r->nregions, r->nregions == 1 ? "" : "s", incomplete,
		r->with_uncounted ? " (it was: they are in)" : "");
	fputs("<h2>Directories</h2>\n<table><tr><th class=\"name\">directory</th>"
	      "<th class=\"name\">host</th><th>segments</th></tr>\n", pg->f);
	for (i = 0; i < pg->n; i++) {
		fputs("<tr><td class=\"name\">", pg->f);
		file_link(pg, i, "manifest.json", pg->ms[i].dir);
		fputs("</td><td class=\"name\">", pg->f);
		html_text(pg->f, pg->ms[i].hostname);
		fprintf(pg->f, "</td><td>%zu</td></tr>\n", pg->ms[i].nfiles);
	}
	fputs("</table>\n", pg->f);
}

static void ranks_table(FILE *f, const struct jr_region *g)
{
	const struct jr_rank *k;
	bool dl = jr_dl_any(g);
	char label[512];
	size_t j;

	fputs("<table><tr><th class=\"name\">rank</th><th>segments</th><th>incomplete</th>"
	      "<th>mean ms</th><th>min ms</th><th>max ms</th><th>not counted</th>"
	      "<th>steps without a segment</th>", f);
	fputs(dl ? "<th>DataLoader wait ms</th><th>its share</th></tr>\n" : "</tr>\n", f);
	for (j = 0; j < g->nranks; j++) {
		k = &g->ranks[j];
		jr_rank_label(k, label, sizeof(label));
		fprintf(f, "<tr%s><td class=\"name\">", g->straggler && g->slowest == j ?
			" class=\"slowest\"" : "");
		html_text(f, label);
		fprintf(f, "</td><td>%zu</td><td>%zu</td>", k->segments, k->incomplete);
		if (k->complete)
			fprintf(f, "<td>%.3f</td><td>%.3f</td><td>%.3f</td>", k->mean_ms,
				(double)k->min_ns / 1e6, (double)k->max_ns / 1e6);
		else
			fputs("<td>-</td><td>-</td><td>-</td>", f);
		fprintf(f, "<td>%zu</td><td%s>%zu</td>", k->uncounted,
			k->steps_missing ? " class=\"missing\"" : "", k->steps_missing);
		if (dl && k->dl_segments)
			fprintf(f, "<td>%.3f</td><td>%.1f%%</td>", (double)k->dl_wait_ns / 1e6,
				jr_dl_share_pct(k));
		else if (dl)
			fputs("<td>-</td><td>-</td>", f);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* What the colours and marks of the charts and tables mean. */
static void legend(FILE *f)
{
	fprintf(f, "<p class=\"legend note\">Colours:<span class=\"sw\" style=\"background:#4c78a8\">"
		"</span>a rank's mean segment time (a bar) or one segment (a dot)<span class=\"sw\" "
		"style=\"background:#d62728\"></span>the straggler, only when there is one<span "
		"class=\"line\"></span>min to max<span class=\"dash\"></span>median of the rank "
		"means. Red cells: a rank without a segment at that step.</p>\n");
}

/* The slowest rank, and whether it is flagged, with the rule. */
static void slowest(FILE *f, const struct jr_region *g)
{
	const struct jr_rank *k;
	char label[512];

	if (!g->have_slowest) {
		fputs("<p>Slowest rank: none (no complete segment).</p>\n", f);
		return;
	}
	k = &g->ranks[g->slowest];
	jr_rank_label(k, label, sizeof(label));
	fprintf(f, "<p%s>Slowest rank: ", g->straggler ? " class=\"slowest\"" : "");
	html_text(f, label);
	fprintf(f, ", mean %.3f ms: %.3f ms (%.1f%%) over the median rank mean %.3f ms: %s.</p>\n",
		k->mean_ms, g->over_ms, g->over_pct, g->median_ms, g->straggler ? "a straggler" :
		g->nranks < 2 || g->over_ms <= 0 ? "nothing to compare" : "not a straggler");
	fprintf(f, "<p class=\"note\">A rank is flagged as a straggler (in red) only when its mean "
		"segment time is at least %.0f%% over the median of the rank means and the "
		"difference is more than the ranks' own step-to-step spread (the median over ranks "
		"of max - min: %.3f ms here); less is noise.</p>\n", JR_STRAGGLER_PCT, g->spread_ms);
}

static void uncounted(FILE *f, const struct job_report *r, const struct jr_region *g)
{
	size_t i;

	if (!g->uncounted)
		return;
	fprintf(f, "<p class=\"note\">%zu segment%s do%s not count (", g->uncounted,
		g->uncounted == 1 ? "" : "s", g->uncounted == 1 ? "es" : "");
	for (i = 0; i < 4 && g->whys[i].why; i++) {
		fputs(i ? ", " : "", f);
		html_text(f, g->whys[i].why);
		fprintf(f, ": %zu", g->whys[i].n);
	}
	if (g->whys_other)
		fprintf(f, ", other reasons: %zu", g->whys_other);
	fputs(r->with_uncounted ? "): taken in (<code>--include-uncounted</code>).</p>\n" :
	      "): left out of every figure; <code>--include-uncounted</code> takes them in.</p>\n",
	      f);
}

static int ops_table(FILE *f, const struct jr_region *g, bool device, unsigned int top)
{
	const struct jr_op **v;
	bool by_cpu;
	size_t i, n;

	n = jr_top(g, device, top, &v, &by_cpu);
	if (!v)
		return -ENOMEM;
	fprintf(f, "<h3>Top %u %s by %s time, summed over ranks</h3>\n", top,
		device ? "kernels" : "operators", by_cpu ? "CPU" : "device");
	if (!n)
		fputs("<p class=\"note\">None recorded.</p>\n", f);
	else if (by_cpu)
		fprintf(f, "<p class=\"note\">No device time recorded: ranked by CPU time%s.</p>\n",
			device ? " (a kernel's CPU time is that of its launching calls)" : "");
	if (n)
		fputs("<table><tr><th>device ms</th><th>self device ms</th><th>CPU ms</th>"
		      "<th>self CPU ms</th><th>calls</th><th class=\"name\">kind</th>"
		      "<th class=\"name\">name</th></tr>\n", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "<tr><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%llu</td>"
			"<td class=\"name\">", (double)v[i]->device_ns / 1e6,
			(double)v[i]->self_device_ns / 1e6, (double)v[i]->cpu_ns / 1e6,
			(double)v[i]->self_cpu_ns / 1e6, (unsigned long long)v[i]->count);
		html_text(f, v[i]->kind);
		fputs("</td><td class=\"name\">", f);
		html_text(f, v[i]->name);
		fputs("</td></tr>\n", f);
	}
	if (n)
		fputs("</table>\n", f);
	free(v);
	return 0;
}

/* Every segment of region @idx with its time and links, up to JR_HTML_SEGMENT_ROWS. */
static void segments_table(struct page *pg, size_t idx)
{
	const struct jr_region *g = &pg->r->regions[idx];
	const struct jr_seg_ref *ref;
	const struct mf_file *x;
	size_t i, rows = 0, step;
	char label[512];

	fprintf(pg->f, "<details><summary>Segments and their trace files (%zu)</summary>\n"
		"<table><tr><th class=\"name\">rank</th><th>segment</th><th>ms</th>"
		"<th class=\"name\">state</th><th class=\"name\">trace</th>"
		"<th class=\"name\">summary</th><th>step</th></tr>\n", g->segments);
	for (i = pg->segs.start[idx]; i < pg->segs.start[idx + 1] && rows < JR_HTML_SEGMENT_ROWS;
	     i++, rows++) {
		ref = &pg->segs.refs[i];
		x = &pg->ms[ref->m].files[ref->f];
		jr_file_label(&pg->ms[ref->m], x, label, sizeof(label));
		fputs("<tr><td class=\"name\">", pg->f);
		html_text(pg->f, label);
		fprintf(pg->f, "</td><td>%llu</td><td>%.3f</td><td class=\"name\">%s%s</td>"
			"<td class=\"name\">", (unsigned long long)x->segment,
			(double)x->duration_ns / 1e6, x->incomplete ? "incomplete" : "complete",
			x->counted ? "" : ", not counted");
		file_link(pg, ref->m, x->trace, x->trace);
		fputs("</td><td class=\"name\">", pg->f);
		file_link(pg, ref->m, x->summary_json, x->summary_json);
		step = pg->step_of[pg->file_base[ref->m] + ref->f];
		if (step)
			fprintf(pg->f, "</td><td>%zu</td></tr>\n", step - 1);
		else
			fputs("</td><td>-</td></tr>\n", pg->f);
	}
	fputs("</table>\n", pg->f);
	if (rows < g->segments)
		fprintf(pg->f, "<p class=\"note\">The first %zu of %zu segments are listed.</p>\n", rows,
			g->segments);
	fputs("</details>\n", pg->f);
}

static int region(struct page *pg, size_t idx)
{
	const struct jr_region *g = &pg->r->regions[idx];
	int ret;

	fprintf(pg->f, "<section id=\"region-%zu\">\n<h2>Region <code>", idx);
	html_text(pg->f, g->name);
	fprintf(pg->f, "</code></h2>\n<p>%zu segments (%zu complete, %zu incomplete%s), %zu rank%s.</p>\n",
		g->segments, g->segments - g->incomplete - (pg->r->with_uncounted ? 0 : g->uncounted),
		g->incomplete, g->uncounted ? ", some not counted" : "", g->nranks,
		g->nranks == 1 ? "" : "s");
	uncounted(pg->f, pg->r, g);
	slowest(pg->f, g);
	legend(pg->f);
	fputs("<h3>Segment time per rank</h3>\n", pg->f);
	jr_svg_ranks(pg->f, g, idx);
	fputs("<h3>Every complete segment, by step</h3>\n", pg->f);
	jr_svg_segments(pg->f, pg->r, g, idx);
	jr_html_steps(pg->f, pg->r, g);
	jr_html_colls(pg->f, pg->r, g);
	jr_html_split(pg->f, g);
	fputs("<h3>Ranks</h3>\n", pg->f);
	ranks_table(pg->f, g);
	ret = ops_table(pg->f, g, false, pg->top);
	if (!ret)
		ret = ops_table(pg->f, g, true, pg->top);
	if (!ret)
		segments_table(pg, idx);
	fputs("</section>\n", pg->f);
	return ret;
}

/* Each file's step (+ 1), for the segment tables. */
static int step_index(struct page *pg)
{
	const struct step_pairs *p = &pg->r->pairs;
	size_t i, total = 0;
	int ret;

	ret = charge(pg, MF_ALLOC((pg->n ? pg->n : 1) * sizeof(size_t)));
	if (ret)
		return ret;
	pg->file_base = calloc(pg->n ? pg->n : 1, sizeof(size_t));
	if (!pg->file_base)
		return -ENOMEM;
	for (i = 0; i < pg->n; i++) {
		pg->file_base[i] = total;
		total += pg->ms[i].nfiles;
	}
	ret = charge(pg, MF_ALLOC((total ? total : 1) * sizeof(size_t)));
	if (ret)
		return ret;
	pg->step_of = calloc(total ? total : 1, sizeof(size_t));
	if (!pg->step_of)
		return -ENOMEM;
	for (i = 0; i < p->nsegs; i++)
		pg->step_of[pg->file_base[p->segs[i].m] + p->segs[i].f] = p->steps[p->segs[i].step].number + 1;
	return 0;
}

static int page(struct page *pg)
{
	size_t i;
	int ret = 0;

	head(pg);
	if (!pg->r->nregions)
		fputs("<p>No segments listed.</p>\n", pg->f);
	for (i = 0; i < pg->r->nregions && !ret; i++)
		ret = region(pg, i);
	fputs("<footer class=\"note\"><p>Written by <code>fvbpf report --html</code>: everything is "
	      "in this file, nothing is fetched. Open a trace in Perfetto (ui.perfetto.dev) or "
	      "chrome://tracing; the links are relative to this file's folder.</p></footer>\n"
	      "</body>\n</html>\n", pg->f);
	return ret;
}

int job_report_html(const char *path, const struct job_report *r, const struct manifest *ms,
		    size_t n, unsigned int top, char *err, size_t errlen)
{
	struct page pg = { .r = r, .ms = ms, .n = n, .top = top };
	char dirbuf[PATH_MAX], basebuf[PATH_MAX], shown[PATH_MAX];
	struct out_file of = { .f = NULL };
	size_t i;
	int ret;

	if (strlen(path) >= sizeof(dirbuf)) {
		snprintf(err, errlen, "--html: path too long");
		return -ENAMETOOLONG;
	}
	ret = rel_paths(&pg, path);
	if (!ret)
		ret = step_index(&pg);
	if (!ret)
		ret = jr_segs_build(&pg.segs, r, ms, n);
	if (ret == -ENOSPC)
		mf_budget_error(r->budget, err, errlen);
	else if (ret)
		snprintf(err, errlen, "out of memory");
	if (ret)
		goto cleanup;
	strcpy(dirbuf, path);
	strcpy(basebuf, path);
	ret = out_open(&of, dirname(dirbuf), basename(basebuf));
	if (ret) {
		snprintf(err, errlen, "%s: cannot write: %s", text_shown(shown, sizeof(shown), path),
			 strerror(-ret));
		goto cleanup;
	}
	pg.f = of.f;
	ret = page(&pg);
	if (ret) {
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	ret = out_commit(&of);
	of.f = NULL;
	if (ret)
		snprintf(err, errlen, "%s: write failed: %s", text_shown(shown, sizeof(shown), path),
			 strerror(-ret));
cleanup:
	if (of.f)
		out_abort(&of);
	for (i = 0; pg.rel && i < n; i++)
		free(pg.rel[i]);
	free(pg.rel);
	free(pg.file_base);
	free(pg.step_of);
	mf_uncharge(r->budget, pg.charged);
	jr_segs_free(&pg.segs, r->budget);
	return ret;
}
