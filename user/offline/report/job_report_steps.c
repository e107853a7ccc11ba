// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report`: a region's steps with every rank's segment side by side,
 * the ranks without a segment at a step, and the split of the region into
 * its sub-regions per rank, as text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "offline/report/job_report.h"

void jr_wallclock(int64_t ns, char *buf, size_t len)
{
	time_t sec = (time_t)(ns / 1000000000);
	int64_t frac = ns % 1000000000;
	struct tm tm;
	char date[32];

	if (frac < 0) {
		frac += 1000000000;
		sec--;
	}
	if (!gmtime_r(&sec, &tm) || !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%s.%06dZ", date, (int)(frac / 1000));
}

static void print_stream(FILE *f, const struct job_report *r, size_t stream)
{
	char label[512], *clean;

	jr_stream_label(r, stream, label, sizeof(label));
	clean = jr_tty(label);
	fputs(clean ? clean : "?", f);
	free(clean);
}

static void step_line(FILE *f, const struct job_report *r, size_t s)
{
	const struct sp_step *t = &r->pairs.steps[s];
	struct jr_step_stats st;
	char when[48], ranks[48];

	jr_step_stats(r, s, &st);
	jr_wallclock(t->start, when, sizeof(when));
	snprintf(ranks, sizeof(ranks), "%zu/%zu", st.members, st.streams);
	fprintf(f, "  %8zu  %-27s %9s", t->number, when, ranks);
	if (!st.have) {
		fprintf(f, " %10s %10s %8s  (no complete segment)\n", "-", "-", "-");
		return;
	}
	fprintf(f, " %10.3f %10.3f %7.1f%%  ", (double)st.min_ns / 1e6, (double)st.max_ns / 1e6,
		st.min_ns > 0 ? 100.0 * (double)(st.max_ns - st.min_ns) / (double)st.min_ns : 0.0);
	print_stream(f, r, r->pairs.segs[st.slowest].stream);
	fprintf(f, "%s%s\n", st.complete < st.members ? " (incomplete ones left out)" : "",
		t->disjoint ? " (its segments do not all overlap in time)" : "");
}

/* Each rank that misses steps: how many, and the first of them. */
static void missing_lines(FILE *f, const struct job_report *r, const struct sp_region *pr)
{
	size_t i, s, shown = 0, listed;

	for (i = pr->first_stream; i < pr->first_stream + pr->nstreams; i++) {
		size_t miss = pr->nsteps - r->pairs.streams[i].nsegs;

		if (!miss)
			continue;
		if (shown++ == JR_TEXT_MISSING) {
			fputs("    ... (--json lists every rank)\n", f);
			return;
		}
		fputs("    ", f);
		print_stream(f, r, i);
		fprintf(f, ": no segment at %zu of %zu steps (", miss, pr->nsteps);
		/* the steps it lacks: those whose members skip it */
		for (s = pr->first_step, listed = 0; s < pr->first_step + pr->nsteps && listed < 8; s++)
			if (!sp_has_stream(&r->pairs, s, i))
				fprintf(f, "%s%zu", listed++ ? ", " : "", r->pairs.steps[s].number);
		fprintf(f, "%s)\n", miss > listed ? ", ..." : "");
	}
}

int jr_print_steps(FILE *f, const struct job_report *r, const struct jr_region *g)
{
	const struct sp_region *pr = g->pairs;
	size_t s, lacking = 0;

	if (!pr) {
		fputs("  steps: none placed (no segment with wall-clock times)\n", f);
		return 0;
	}
	for (s = pr->first_step; s < pr->first_step + pr->nsteps; s++)
		lacking += r->pairs.steps[s].n < pr->nstreams;
	fprintf(f, "  steps: %zu, paired across %zu rank%s by %s", pr->nsteps, pr->nstreams,
		pr->nstreams == 1 ? "" : "s", pr->by_key ? "step key" :
		"time overlap on the wall clock (each directory's own clock offset)");
	if (pr->no_times)
		fprintf(f, "; %zu segment%s without wall-clock times not placed", pr->no_times,
			pr->no_times == 1 ? "" : "s");
	fputs(pr->nstreams < 2 ? " (one rank: nothing to pair)\n" : "\n", f);
	if (pr->nstreams < 2)
		return 0;
	fprintf(f, "  %8s  %-27s %9s %10s %10s %8s  %s\n", "step", "start (UTC)", "ranks", "min ms",
		"max ms", "max-min", "slowest at the step");
	for (s = pr->first_step; s < pr->first_step + pr->nsteps && s < pr->first_step + JR_TEXT_STEPS;
	     s++)
		step_line(f, r, s);
	if (pr->nsteps > JR_TEXT_STEPS)
		fprintf(f, "  ... %zu more steps (--json lists them all)\n", pr->nsteps - JR_TEXT_STEPS);
	if (!lacking) {
		fputs("  every rank has a segment at every step\n", f);
		return 0;
	}
	fprintf(f, "  %zu step%s lack a rank: a segment there has no counterpart on it\n", lacking,
		lacking == 1 ? "" : "s");
	missing_lines(f, r, pr);
	return ferror(f) ? -EIO : 0;
}

static void split_row(FILE *f, const char *name, size_t depth, int64_t ns, uint64_t calls,
		      const struct jr_rank *k)
{
	char *clean = jr_tty(name);
	int pad = (int)(depth ? depth - 1 : 0) * 2;
	double mean = (double)ns / (double)k->complete / 1e6;

	fprintf(f, "      %*s%-*s %10.3f %7.1f%%", pad, "", 44 - pad, clean ? clean : "?", mean,
		k->sum_ns > 0 ? 100.0 * (double)ns / (double)k->sum_ns : 0.0);
	if (calls)
		fprintf(f, "  %.1f calls", (double)calls / (double)k->complete);
	fputc('\n', f);
	free(clean);
}

static void split_rank(FILE *f, const struct jr_region *g, const struct jr_rank *k)
{
	char label[512], *clean, outside[600];
	uint64_t calls;
	int64_t ns;
	size_t j, i;

	jr_rank_label(k, label, sizeof(label));
	clean = jr_tty(label);
	fprintf(f, "    %s (%zu complete segment%s, mean %.3f ms):\n", clean ? clean : "?", k->complete,
		k->complete == 1 ? "" : "s", k->mean_ms);
	free(clean);
	/* sub_order: the tree inside the region first, then the others */
	for (j = 0; j < g->nsubs && g->subs[g->sub_order[j]].depth; j++) {
		i = g->sub_order[j];
		ns = jr_sub_ns(g, k, i, &calls);
		split_row(f, g->subs[i].name, g->subs[i].depth, ns, calls, k);
	}
	clean = jr_tty(g->name);
	snprintf(outside, sizeof(outside), "(%s outside these)", clean ? clean : "?");
	split_row(f, outside, 1, jr_outside_ns(g, k), 0, k);
	if (j < g->nsubs)
		fprintf(f, "      not inside %s on its thread:\n", clean ? clean : "?");
	free(clean);
	for (; j < g->nsubs; j++) {
		i = g->sub_order[j];
		ns = jr_sub_ns(g, k, i, &calls);
		split_row(f, g->subs[i].name, 1, ns, calls, k);
	}
}

int jr_print_split(FILE *f, const struct job_report *r, const struct jr_region *g)
{
	size_t j, shown = 0;
	bool flat = false;
	char *name;

	(void)r;
	if (!g->nsubs)
		return 0;
	for (j = 0; j < g->nsubs; j++)
		flat = flat || !g->subs[j].parent_known;
	name = jr_tty(g->name);
	fprintf(f, "\n  split of %s into its sub-regions per rank (mean ms per complete segment, "
		"share of the segment time):\n", name ? name : "?");
	free(name);
	if (flat)
		fputs("    (summaries written before region rows named their parent: sub-regions "
		      "shown flat, nested ones counted twice)\n", f);
	if (g->subs_dropped)
		fprintf(f, "    (%llu rows of sub-regions past the first %d left out)\n",
			(unsigned long long)g->subs_dropped, JR_SUBS_MAX);
	for (j = 0; j < g->nranks; j++) {
		if (!g->ranks[j].complete)
			continue;
		if (shown++ == JR_TEXT_SPLIT_RANKS) {
			fprintf(f, "    ... (--json and --html show every rank)\n");
			break;
		}
		split_rank(f, g, &g->ranks[j]);
	}
	return ferror(f) ? -EIO : 0;
}
