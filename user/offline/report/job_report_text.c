// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report`: the job report printed for a person, its ranks labelled and
 * its operators ranked. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "offline/report/job_report.h"
#include "offline/report/job_report_colls.h"
#include "offline/report/job_report_dl.h"
#include "util/text_sanitize.h"

void jr_rank_label(const struct jr_rank *k, char *buf, size_t len)
{
	int n = k->rank < 0 ? snprintf(buf, len, "%s%sno rank", k->host, k->host[0] ? " " : "") :
		snprintf(buf, len, "%s%srank %d", k->host, k->host[0] ? " " : "", k->rank);

	if (n < 0 || (size_t)n >= len)
		return;
	if (k->restart)
		n += snprintf(buf + n, len - (size_t)n, " restart %d", k->restart);
	if (k->pid > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " pid %d", k->pid);
}

bool jr_kind_is_device(const char *kind)
{
	return !strcmp(kind, "kernel") || !strcmp(kind, "gpu_memcpy") || !strcmp(kind, "gpu_memset");
}

static bool sort_by_cpu;

static int cmp_op(const void *a, const void *b)
{
	const struct jr_op *x = *(const struct jr_op *const *)a, *y = *(const struct jr_op *const *)b;
	int64_t kx = sort_by_cpu ? x->cpu_ns : x->device_ns, ky = sort_by_cpu ? y->cpu_ns : y->device_ns;
	int c;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->kind, y->kind);
}

size_t jr_top(const struct jr_region *g, bool device, unsigned int top, const struct jr_op ***out,
	      bool *by_cpu)
{
	const struct jr_op **v;
	bool any_dev = false;
	size_t i, n = 0;

	*out = NULL;
	*by_cpu = false;
	v = malloc((g->nops ? g->nops : 1) * sizeof(*v));
	if (!v)
		return 0;
	for (i = 0; i < g->nops; i++) {
		if (jr_kind_is_device(g->ops[i].kind) != device)
			continue;
		v[n++] = &g->ops[i];
		if (g->ops[i].device_ns > 0)
			any_dev = true;
	}
	*by_cpu = !any_dev;
	sort_by_cpu = !any_dev;
	qsort(v, n, sizeof(*v), cmp_op);
	*out = v;
	return n < top ? n : top;
}

/* Target text for the terminal, into a buffer the caller frees. */
char *jr_tty(const char *s)
{
	size_t n = text_clean_bound(s);
	char *b = malloc(n);

	if (b)
		text_clean_terminal(b, n, s);
	return b;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static void print_label(FILE *f, const struct jr_rank *k)
{
	char raw[512];
	char *clean;

	jr_rank_label(k, raw, sizeof(raw));
	clean = jr_tty(raw);
	fputs(clean ? clean : "?", f);
	free(clean);
}

static int print_ops(FILE *f, const struct jr_region *g, bool device, unsigned int top)
{
	const struct jr_op **v;
	char kind[20];
	char *name;
	bool by_cpu;
	size_t i, n;

	n = jr_top(g, device, top, &v, &by_cpu);
	if (!v)
		return -ENOMEM;
	fprintf(f, "\n  top %u %s by %s time, summed over ranks", top, device ? "kernels" : "operators",
		by_cpu ? "CPU" : "device");
	if (!n)
		fputs(": none recorded\n", f);
	else if (by_cpu)
		fprintf(f, " (no device time recorded: ranked by CPU time%s):\n",
			device ? ", a kernel's CPU time is that of its launching calls" : "");
	else
		fputs(":\n", f);
	if (n)
		fprintf(f, "  %12s %12s %12s %10s  %-16s %s\n", "device ms", "CPU ms", "self CPU ms",
			"calls", "kind", "name");
	for (i = 0; i < n; i++) {
		text_clean_terminal(kind, 17, v[i]->kind);
		name = jr_tty(v[i]->name);
		fprintf(f, "  %12.3f %12.3f %12.3f %10llu  %-16s %s\n", ms(v[i]->device_ns),
			ms(v[i]->cpu_ns), ms(v[i]->self_cpu_ns), (unsigned long long)v[i]->count, kind,
			name ? name : "?");
		free(name);
	}
	free(v);
	return 0;
}

/* Segments that do not count: how many, why, and whether they are in. */
static void print_uncounted(FILE *f, const struct job_report *r, const struct jr_region *g)
{
	char *why;
	size_t i;

	if (!g->uncounted)
		return;
	fprintf(f, "  %zu segment%s do%s not count (", g->uncounted, g->uncounted == 1 ? "" : "s",
		g->uncounted == 1 ? "es" : "");
	for (i = 0; i < 4 && g->whys[i].why; i++) {
		why = jr_tty(g->whys[i].why);
		fprintf(f, "%s%s: %zu", i ? ", " : "", why ? why : "?", g->whys[i].n);
		free(why);
	}
	if (g->whys_other)
		fprintf(f, ", other reasons: %zu", g->whys_other);
	fputs(r->with_uncounted ? "): taken in, --include-uncounted\n" :
	      "): left out of every figure, --include-uncounted takes them in\n", f);
}

static void print_slowest(FILE *f, const struct jr_region *g)
{
	if (!g->have_slowest) {
		fputs("  slowest rank: none (no complete segment)\n", f);
		return;
	}
	fputs("  slowest rank: ", f);
	print_label(f, &g->ranks[g->slowest]);
	fprintf(f, ", mean %.3f ms: %.3f ms (%.1f%%) over the median rank mean %.3f ms",
		g->ranks[g->slowest].mean_ms, g->over_ms, g->over_pct, g->median_ms);
	if (g->straggler)
		fprintf(f, ": a straggler (at least %.0f%% over the median and more than the ranks' "
			"own step-to-step spread, %.3f ms)\n", JR_STRAGGLER_PCT, g->spread_ms);
	else if (g->nranks < 2 || g->over_ms <= 0)
		fputs(": nothing to compare\n", f);
	else
		fprintf(f, ": not a straggler (%s)\n", g->over_pct < JR_STRAGGLER_PCT ?
			"less than 5% over the median" : "within the ranks' own step-to-step spread");
}

static size_t complete_of(const struct job_report *r, const struct jr_region *g)
{
	return g->segments - g->incomplete - (r->with_uncounted ? 0 : g->uncounted);
}

static int print_region(FILE *f, const struct job_report *r, const struct jr_region *g,
			unsigned int top)
{
	const struct jr_rank *k;
	char *name;
	size_t j;
	int ret;

	name = jr_tty(g->name);
	fprintf(f, "\nregion %s: %zu segments (%zu complete, %zu incomplete", name ? name : "?",
		g->segments, complete_of(r, g), g->incomplete);
	if (g->uncounted)
		fprintf(f, ", %zu not counted", g->uncounted);
	fprintf(f, "), %zu rank%s\n", g->nranks, g->nranks == 1 ? "" : "s");
	free(name);
	print_uncounted(f, r, g);
	fprintf(f, "  %8s %10s %12s %12s %12s  %s\n", "segments", "incomplete", "mean ms",
		"min ms", "max ms", "rank");
	for (j = 0; j < g->nranks; j++) {
		k = &g->ranks[j];
		if (k->complete)
			fprintf(f, "  %8zu %10zu %12.3f %12.3f %12.3f  ", k->segments, k->incomplete,
				k->mean_ms, ms(k->min_ns), ms(k->max_ns));
		else
			fprintf(f, "  %8zu %10zu %12s %12s %12s  ", k->segments, k->incomplete, "-",
				"-", "-");
		print_label(f, k);
		fputc('\n', f);
	}
	print_slowest(f, g);
	ret = jr_print_steps(f, r, g);
	if (!ret && g->colls)
		jr_colls_print(f, r, g->colls);
	if (!ret)
		jr_dl_print(f, g);
	if (!ret)
		ret = jr_print_split(f, r, g);
	if (!ret)
		ret = print_ops(f, g, false, top);
	if (!ret)
		ret = print_ops(f, g, true, top);
	return ret;
}

/* @ns as seconds with every nanosecond, negative ones too. */
static void print_seconds(FILE *f, const char *before, int64_t ns)
{
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	fprintf(f, "%s%s%" PRIu64 ".%09" PRIu64, before, ns < 0 ? "-" : "", a / 1000000000u,
		a % 1000000000u);
}

/*
 * The clock offset each directory's segments were placed by: pairing by
 * time compares hosts' wall clocks as they are, so a reader must see what
 * was applied and what was assumed.
 */
static void print_clocks(FILE *f, const struct job_report *r)
{
	int64_t off, moved;
	char *host, *dir;
	size_t i;

	fputs(jr_any_skew(r) ?
	      "clocks: each directory's segments are placed on its host's wall clock "
	      "(CLOCK_MONOTONIC + the offset below), another host's moved by the skew the "
	      "collectives it shares with the first directory's say (the median difference of "
	      "their exits)\n" :
	      "clocks: each directory's segments are placed on its host's wall clock "
	      "(CLOCK_MONOTONIC + the offset below); no offset is applied between hosts, whose "
	      "realtime clocks are taken as synchronised (NTP/PTP)\n", f);
	for (i = 0; r->ms && i < r->ndirs && i < JR_TEXT_CLOCKS; i++) {
		const struct manifest *m = &r->ms[i];
		enum mf_applied how = mf_applied_offset(m, &off, &moved);

		host = jr_tty(m->hostname[0] ? m->hostname : "?");
		dir = jr_tty(m->dir);
		fprintf(f, "  %s, %s: ", host ? host : "?", dir ? dir : "?");
		if (how == MF_APPLIED_ATTACH_START || how == MF_APPLIED_MEAN)
			print_seconds(f, "offset ", off);
		if (how == MF_APPLIED_ATTACH_START)
			fprintf(f, " s, CLOCK_REALTIME - CLOCK_MONOTONIC at attach start (manifest "
				"clock; %+.3f us by its end)\n", (double)moved / 1e3);
		else if (how == MF_APPLIED_MEAN)
			fprintf(f, " s, %s\n", m->clock_source == MF_CLOCK_MANIFEST ?
				"the mean of the manifest's at attach start and end" :
				"from a summary's start_wallclock (1 us steps)");
		else if (how == MF_APPLIED_OWN)
			fputs("the segments' own wall-clock times (no manifest clock)\n", f);
		else
			fputs("none: no clock, its segments are not placed in time\n", f);
		if (m->skew_pairs)
			fprintf(f, "    skew from %zu collective exits shared with the first directory: "
				"%+.3f ms (interquartile range %.3f ms), applied\n", m->skew_pairs,
				(double)m->skew_ns / 1e6, (double)m->skew_spread_ns / 1e6);
		free(host);
		free(dir);
	}
	if (r->ndirs > JR_TEXT_CLOCKS)
		fprintf(f, "  ... %zu more directories (--json lists every one)\n",
			r->ndirs - JR_TEXT_CLOCKS);
}

int job_report_print(FILE *f, const struct job_report *r, unsigned int top)
{
	size_t i, incomplete = 0, uncounted = 0;
	int ret;

	for (i = 0; i < r->nregions; i++) {
		incomplete += r->regions[i].incomplete;
		uncounted += r->regions[i].uncounted;
	}
	fprintf(f, "fvbpf report: %zu director%s, %zu node%s, %zu rank%s, %zu region%s\n", r->ndirs,
		r->ndirs == 1 ? "y" : "ies", r->nhosts, r->nhosts == 1 ? "" : "s", r->nranks,
		r->nranks == 1 ? "" : "s", r->nregions, r->nregions == 1 ? "" : "s");
	fprintf(f, "incomplete segments (%zu) are counted apart and left out of every time and operator "
		"figure below", incomplete);
	if (uncounted && r->with_uncounted)
		fprintf(f, "; the %zu that do not count are taken in (--include-uncounted)", uncounted);
	else if (uncounted)
		fprintf(f, "; so are the %zu that do not count (--include-uncounted takes them in)",
			uncounted);
	fputc('\n', f);
	print_clocks(f, r);
	if (!r->nregions)
		fputs("no segments listed\n", f);
	for (i = 0; i < r->nregions; i++) {
		ret = print_region(f, r, &r->regions[i], top);
		if (ret)
			return ret;
	}
	return ferror(f) ? -EIO : 0;
}
