/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The pieces `fvbpf report --html` builds its page from, shared by the page
 * (job_report_html.c) and its charts (job_report_svg.c).  Every string that
 * came from a manifest or a summary is hostile: it goes out through
 * html_text() (valid UTF-8, control characters as \xNN, & < > " ' as
 * entities) or, in a link, html_url_path() (every byte but [A-Za-z0-9._~/-]
 * percent-encoded), never as it is.
 */
#ifndef FVBPF_REPORT_HTML_INTERNAL_H
#define FVBPF_REPORT_HTML_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "offline/report/job_report.h"

/* Ranks drawn in a region's bar chart (the table lists all of them). */
#define JR_HTML_CHART_RANKS 256
/* Segments drawn in a region's scatter chart and listed in its table. */
#define JR_HTML_POINTS 20000
#define JR_HTML_SEGMENT_ROWS 10000
/* Steps listed in a region's step table, and the most ranks it shows one
 * column each (more: one row per step with the slowest and the missing). */
#define JR_HTML_STEP_ROWS 2000
#define JR_HTML_MATRIX_RANKS 16
/* Ranks listed in the split table. */
#define JR_HTML_SPLIT_RANKS 1000
/* Characters of a label drawn beside a bar (the tooltip has all of it). */
#define JR_HTML_LABEL_CHARS 40

/* A segment: files[f] of manifest m. */
struct jr_seg_ref {
	size_t m, f;
};

/* The segments with a summary, grouped by region: region i's are
 * refs[start[i]] .. refs[start[i + 1] - 1], in manifest order. */
struct jr_segs {
	struct jr_seg_ref *refs;
	size_t *start;            /* nregions + 1 */
	uint64_t charged;         /* to the report's budget */
};

/* 0, -ENOSPC (past the report's budget) or -ENOMEM (then jr_segs_free()). */
int jr_segs_build(struct jr_segs *s, const struct job_report *r, const struct manifest *ms,
		  size_t n);
void jr_segs_free(struct jr_segs *s, struct mf_budget *b);

/* @s as HTML text or attribute value (quotes escaped too). */
void html_text(FILE *f, const char *s);
/* @s, at most @max characters of it, then "…" when cut. */
void html_text_cut(FILE *f, const char *s, size_t max);
/* @s percent-encoded for a relative URL, '/' kept. */
void html_url_path(FILE *f, const char *s);
/* True when segment @x of @m belongs to rank @k of a region. */
bool jr_file_is_rank(const struct manifest *m, const struct mf_file *x, const struct jr_rank *k);
/* The label jr_rank_label() gives the rank of segment @x of @m. */
void jr_file_label(const struct manifest *m, const struct mf_file *x, char *buf, size_t len);

/* Region @g's steps, every rank's segment of each side by side (one column
 * per rank up to JR_HTML_MATRIX_RANKS), the ranks without one marked. */
void jr_html_steps(FILE *f, const struct job_report *r, const struct jr_region *g);
/* The region's collectives across ranks (html_colls.c); nothing without. */
void jr_html_colls(FILE *f, const struct job_report *r, const struct jr_region *g);
/* Region @g's split into its sub-regions, a row per rank. */
void jr_html_split(FILE *f, const struct jr_region *g);

/*
 * @to relative to the directory @from (both absolute, without "." or ".."
 * parts, as realpath() gives them), into @out: "" when they are the same.
 * -ENAMETOOLONG when it does not fit.
 */
int jr_rel_path(const char *from, const char *to, char *out, size_t len);

/* The region's mean/min/max segment time per rank as inline SVG,
 * id="rank-chart-@idx"; the slowest rank in red when it is a straggler,
 * the median dashed. */
void jr_svg_ranks(FILE *f, const struct jr_region *g, size_t idx);
/* Every complete segment of region @g as a dot (its step, ms), the same
 * step of every rank one above the other, id="segment-chart-@idx"; the
 * straggler's in red. */
void jr_svg_segments(FILE *f, const struct job_report *r, const struct jr_region *g, size_t idx);

#endif /* FVBPF_REPORT_HTML_INTERNAL_H */
