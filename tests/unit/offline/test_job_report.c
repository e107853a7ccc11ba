// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* fvbpf report: manifest reading, arithmetic across ranks, hostile text. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offline/report/job_report.h"
#include "offline/manifest/manifest_read.h"
#include "unit.h"

static char tmpdir[] = "/tmp/fvbpf-jr.XXXXXX";

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* A summary of @dur_us with two rows. */
static void summary(const char *dir, const char *name, int rank, const char *dur_us, int incomplete,
		    const char *dev_us, const char *opname)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"rank\":%d,\"region\":\"step\",\"start_us\":1000.000,\"end_us\":2000.000,"
		 "\"duration_us\":%s,\"incomplete\":%s,\"start_wallclock\":\"2026-01-01T00:00:00.000500Z\"},"
		 "\"rows\":[{\"name\":\"step\",\"kind\":\"region\",\"cpu_us\":%s,\"device_us\":0},"
		 "{\"name\":\"%s\",\"kind\":\"cpu_op\",\"cpu_us\":10.5,\"self_cpu_us\":1,"
		 "\"device_us\":%s,\"self_device_us\":0,\"count\":2},"
		 "{\"name\":\"k\",\"kind\":\"kernel\",\"cpu_us\":1,\"device_us\":%s,\"count\":1}]}",
		 rank, dur_us, incomplete ? "true" : "false", dur_us, opname, dev_us, dev_us);
	put(dir, name, text);
}

static char *mkdir_sub(const char *sub)
{
	static char path[8][512];
	static int n;
	char *p = path[n++ % 8];

	snprintf(p, 512, "%s/%s", tmpdir, sub);
	mkdir(p, 0755);
	return p;
}

/* node A: ranks 0 (10, 20, 30 ms; a 1000 ms incomplete) and 1 (40 ms);
 * node B: rank 2 (25 ms), rank 3 restart 1 (35 ms). */
static int build(struct manifest ms[2], const char *dev_us)
{
	char *a = mkdir_sub("a"), *b = mkdir_sub("b"), err[512];
	int ret;

	put(a, "manifest.json",
	    "{\"tool\":\"fvbpf\",\"hostname\":\"nodeA\",\"files\":["
	    "{\"pid\":1,\"rank\":0,\"segment\":0,\"summary_json\":\"s00.json\",\"trace\":\"t\"},"
	    "{\"pid\":1,\"rank\":0,\"segment\":1,\"summary_json\":\"s01.json\",\"trace\":\"t\"},"
	    "{\"pid\":1,\"rank\":0,\"segment\":2,\"summary_json\":\"s02.json\",\"trace\":\"t\"},"
	    "{\"pid\":1,\"rank\":0,\"segment\":3,\"incomplete\":true,\"summary_json\":\"s03.json\"},"
	    "{\"pid\":2,\"rank\":1,\"segment\":0,\"summary_json\":\"s10.json\"}]}");
	summary(a, "s00.json", 0, "10000.000", 0, dev_us, "aten::mm");
	summary(a, "s01.json", 0, "20000.000", 0, dev_us, "aten::mm");
	summary(a, "s02.json", 0, "30000.000", 0, dev_us, "aten::mm");
	summary(a, "s03.json", 0, "1000000.000", 1, "999999", "aten::mm");
	summary(a, "s10.json", 1, "40000.000", 0, dev_us, "aten::add");
	put(b, "manifest.json",
	    "{\"tool\":\"fvbpf\",\"hostname\":\"nodeB\",\"clock\":{"
	    "\"start\":{\"monotonic_ns\":1000,\"realtime_ns\":5000,\"read_span_ns\":10},"
	    "\"end\":{\"monotonic_ns\":2000,\"realtime_ns\":6100,\"read_span_ns\":20}},\"files\":["
	    "{\"pid\":3,\"rank\":2,\"segment\":0,\"summary_json\":\"s20.json\"},"
	    "{\"pid\":4,\"rank\":3,\"restart\":1,\"region\":\"step\",\"segment\":0,\"summary_json\":\"s30.json\"}]}");
	summary(b, "s20.json", 2, "25000.000", 0, dev_us, "aten::mm");
	summary(b, "s30.json", 3, "35000.000", 0, dev_us, "evil\\u001b[2J\\nname");
	ret = mf_read(a, &ms[0], err, sizeof(err));
	if (!ret)
		ret = mf_read_summaries(&ms[0], NULL, true, err, sizeof(err));
	if (!ret)
		ret = mf_read(b, &ms[1], err, sizeof(err));
	if (!ret)
		ret = mf_read_summaries(&ms[1], NULL, true, err, sizeof(err));
	if (ret)
		printf("# %s\n", err);
	return ret;
}

static void test_arithmetic(void)
{
	struct manifest ms[2];
	struct job_report r;
	const struct jr_region *g;
	char label[128];

	CHECK_EQ(build(ms, "5"), 0);
	CHECK_EQ(job_report_build(ms, 2, &r), 0);
	CHECK_EQ(r.nregions, 1);
	CHECK_EQ(r.nhosts, 2);
	g = &r.regions[0];
	CHECK_STR(g->name, "step");
	CHECK_EQ(g->segments, 7);
	CHECK_EQ(g->incomplete, 1);
	CHECK_EQ(g->nranks, 4);
	/* sorted nodeA rank 0, nodeA rank 1, nodeB rank 2, nodeB rank 3 restart 1 */
	CHECK_EQ(g->ranks[0].complete, 3);
	CHECK_EQ(g->ranks[0].incomplete, 1);
	CHECK(g->ranks[0].mean_ms == 20.0);
	CHECK_EQ(g->ranks[0].min_ns, 10000000);
	CHECK_EQ(g->ranks[0].max_ns, 30000000);
	CHECK(g->ranks[1].mean_ms == 40.0);
	jr_rank_label(&g->ranks[3], label, sizeof(label));
	CHECK_STR(label, "nodeB rank 3 restart 1");
	/* means 20, 40, 25, 35: median 30, slowest rank 1: 10 ms, 33.3% */
	CHECK(g->have_slowest);
	CHECK_EQ(g->slowest, 1);
	CHECK(g->median_ms == 30.0);
	CHECK(g->over_ms == 10.0);
	CHECK(g->over_pct > 33.33 && g->over_pct < 33.34);
	job_report_free(&r);
	mf_free(&ms[0]);
	mf_free(&ms[1]);
}

static void test_top_across_ranks(void)
{
	struct manifest ms[2];
	const struct jr_op **v;
	struct job_report r;
	bool by_cpu;
	size_t n;

	CHECK_EQ(build(ms, "5"), 0);
	CHECK_EQ(job_report_build(ms, 2, &r), 0);
	n = jr_top(&r.regions[0], false, 10, &v, &by_cpu);
	CHECK(!by_cpu);
	CHECK_EQ(n, 3);
	/* aten::mm: 4 complete segments x 5 us (the incomplete 999999 left out) */
	CHECK_STR(v[0]->name, "aten::mm");
	CHECK_EQ(v[0]->device_ns, 20000);
	CHECK_EQ(v[0]->count, 8);
	CHECK_EQ(v[0]->cpu_ns, 42000);
	free(v);
	n = jr_top(&r.regions[0], true, 1, &v, &by_cpu);
	CHECK_EQ(n, 1);
	CHECK_STR(v[0]->kind, "kernel");
	CHECK_EQ(v[0]->device_ns, 30000);
	free(v);
	job_report_free(&r);
	mf_free(&ms[0]);
	mf_free(&ms[1]);
}

static void test_no_device_time_ranks_by_cpu(void)
{
	struct manifest ms[2];
	const struct jr_op **v;
	struct job_report r;
	bool by_cpu;
	FILE *f;
	char *buf = NULL;
	size_t len = 0;

	CHECK_EQ(build(ms, "0"), 0);
	CHECK_EQ(job_report_build(ms, 2, &r), 0);
	jr_top(&r.regions[0], false, 10, &v, &by_cpu);
	CHECK(by_cpu);
	free(v);
	f = open_memstream(&buf, &len);
	CHECK_EQ(job_report_print(f, &r, 10), 0);
	fclose(f);
	CHECK(strstr(buf, "no device time recorded: ranked by CPU time") != NULL);
	/* hostile operator name: no escape, no forged line */
	CHECK(strchr(buf, '\x1b') == NULL);
	CHECK(strstr(buf, "evil\\x1b[2J\\x0aname") != NULL);
	CHECK(strstr(buf, "slowest rank: nodeA rank 1, mean 40.000 ms: 10.000 ms (33.3%)") != NULL);
	free(buf);
	job_report_free(&r);
	mf_free(&ms[0]);
	mf_free(&ms[1]);
}

static void test_json_valid(void)
{
	struct manifest ms[2];
	struct job_report r;
	json_object *j, *back;

	CHECK_EQ(build(ms, "5"), 0);
	CHECK_EQ(job_report_build(ms, 2, &r), 0);
	j = job_report_json(&r, 2);
	back = json_tokener_parse(json_object_to_json_string(j));
	CHECK(back != NULL);
	json_object_put(back);
	json_object_put(j);
	job_report_free(&r);
	mf_free(&ms[0]);
	mf_free(&ms[1]);
}

static void test_clock(void)
{
	struct manifest ms[2];

	CHECK_EQ(build(ms, "5"), 0);
	/* nodeA: no clock: from start_wallclock - start_us (µs) */
	CHECK_EQ(ms[0].clock_source, MF_CLOCK_WALLCLOCK);
	CHECK_EQ(ms[0].offset_ns, 1767225600000500000LL - 1000000);
	/* nodeB: offsets 4000 and 4100: mean 4050, uncertainty 100 + 10 + 20 */
	CHECK_EQ(ms[1].clock_source, MF_CLOCK_MANIFEST);
	CHECK_EQ(ms[1].offset_ns, 4050);
	CHECK_EQ(ms[1].uncertainty_ns, 130);
	mf_free(&ms[0]);
	mf_free(&ms[1]);
}

/*
 * The clock lines: per directory the offset its segments were placed by
 * (the attach start's where they carry start_unix_us, negative ones too),
 * and the hostname escaped.
 */
static void test_clock_lines(void)
{
	struct manifest ms[3];
	struct job_report r;
	char err[512], *c = mkdir_sub("clk"), *buf = NULL;
	int64_t off = 7, moved = 7;
	size_t len = 0;
	FILE *f;

	CHECK_EQ(build(ms, "5"), 0);
	put(c, "manifest.json", "{\"tool\":\"fvbpf\",\"hostname\":\"evil\\u001b[2J\",\"clock\":{"
	    "\"start\":{\"monotonic_ns\":5000,\"realtime_ns\":1000,\"read_span_ns\":10},"
	    "\"end\":{\"monotonic_ns\":6000,\"realtime_ns\":2300,\"read_span_ns\":20}},\"files\":["
	    "{\"pid\":5,\"rank\":4,\"segment\":0,\"summary_json\":\"s.json\","
	    "\"start_unix_us\":1.000,\"end_unix_us\":2.000}]}");
	summary(c, "s.json", 4, "1.000", 0, "5", "aten::mm");
	CHECK_EQ(mf_read(c, &ms[2], err, sizeof(err)), 0);
	CHECK_EQ(mf_read_summaries(&ms[2], NULL, true, err, sizeof(err)), 0);
	/* nodeA: no manifest clock, no unix times: the summary's wallclock */
	CHECK_EQ(mf_applied_offset(&ms[0], &off, &moved), MF_APPLIED_MEAN);
	CHECK_EQ(off, 1767225600000500000LL - 1000000);
	CHECK_EQ(moved, 0);
	/* nodeB: a manifest clock, no unix times: the mean */
	CHECK_EQ(mf_applied_offset(&ms[1], &off, &moved), MF_APPLIED_MEAN);
	CHECK_EQ(off, 4050);
	/* unix times: the attach start's offset, -4000 ns, +300 ns by the end */
	CHECK_EQ(mf_applied_offset(&ms[2], &off, &moved), MF_APPLIED_ATTACH_START);
	CHECK_EQ(off, -4000);
	CHECK_EQ(moved, 300);
	CHECK_EQ(job_report_build(ms, 3, &r), 0);
	f = open_memstream(&buf, &len);
	CHECK_EQ(job_report_print(f, &r, 10), 0);
	fclose(f);
	CHECK(strstr(buf, "no offset is applied between hosts") != NULL);
	CHECK(strstr(buf, "  nodeA, ") != NULL);
	CHECK(strstr(buf, ": offset 1767225599.999500000 s, from a summary's start_wallclock") != NULL);
	CHECK(strstr(buf, "  nodeB, ") != NULL);
	CHECK(strstr(buf, ": offset 0.000004050 s, the mean of the manifest's at attach start and end") != NULL);
	CHECK(strstr(buf, "  evil\\x1b[2J, ") != NULL);
	CHECK(strstr(buf, ": offset -0.000004000 s, CLOCK_REALTIME - CLOCK_MONOTONIC at attach start "
		     "(manifest clock; +0.300 us by its end)") != NULL);
	CHECK(strchr(buf, '\x1b') == NULL);
	free(buf);
	job_report_free(&r);
	mf_free(&ms[0]);
	mf_free(&ms[1]);
	mf_free(&ms[2]);
}

static void test_bad_inputs(void)
{
	struct manifest m;
	char err[512], *d = mkdir_sub("bad"), *e = mkdir_sub("empty");
	int64_t ns;

	CHECK(mf_read(e, &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "no manifest.json") != NULL);
	put(d, "manifest.json", "{\"tool\":\"fvbpf\",\"files\":[");
	CHECK(mf_read(d, &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "manifest.json: not valid JSON") != NULL);
	put(d, "manifest.json", "{\"tool\":\"other\",\"files\":[]}");
	CHECK(mf_read(d, &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "not an fvbpf manifest") != NULL);
	put(d, "manifest.json", "{\"tool\":\"fvbpf\",\"files\":[{\"summary_json\":\"../../etc/passwd\"}]}");
	CHECK(mf_read(d, &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "outside the directory") != NULL);
	/* odd fields: strings where numbers go, a missing summary file */
	put(d, "manifest.json", "{\"tool\":\"fvbpf\",\"hostname\":7,\"files\":[1,{\"rank\":\"x\","
	    "\"summary_json\":\"missing.json\"}]}");
	CHECK_EQ(mf_read(d, &m, err, sizeof(err)), 0);
	CHECK_EQ(m.nfiles, 1);
	CHECK_EQ(m.files[0].rank, 0);
	CHECK_STR(m.hostname, "");
	CHECK(mf_read_summaries(&m, NULL, true, err, sizeof(err)) < 0);
	CHECK(strstr(err, "missing.json") != NULL);
	mf_free(&m);
	CHECK(mf_read("/etc/passwd", &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "not a directory") != NULL);
	CHECK_EQ(mf_us_text_to_ns("12.3456", &ns), 0);
	CHECK_EQ(ns, 12346);
	CHECK_EQ(mf_us_text_to_ns("-1.5", &ns), 0);
	CHECK_EQ(ns, -1500);
	CHECK(mf_us_text_to_ns("abc", &ns) < 0);
	CHECK_EQ(mf_parse_wallclock("1970-01-01T00:00:01.000002Z", &ns), 0);
	CHECK_EQ(ns, 1000002000);
	CHECK(mf_parse_wallclock("yesterday", &ns) < 0);
}


/* A manifest of one file entry with @clock (may be "") and its summary. */
static void one_segment(const char *d, const char *clock, const char *meta, const char *rows)
{
	size_t len = strlen(clock) + strlen(meta) + strlen(rows) + 2048;
	char *text = malloc(len);

	if (!text)
		return;
	snprintf(text, len, "{\"tool\":\"fvbpf\",\"hostname\":\"h\",%s\"files\":["
		 "{\"pid\":1,\"rank\":0,\"segment\":0,\"summary_json\":\"s.json\",\"trace\":\"t\"}]}",
		 clock);
	put(d, "manifest.json", text);
	snprintf(text, len, "{\"metadata\":{\"region\":\"step\",%s},\"rows\":[%s]}", meta, rows);
	put(d, "s.json", text);
	free(text);
}

/* Clock values at the ends of int64: no signed overflow (UBSan in the
 * asan build), and a manifest clock that does not fit is not believed. */
static void test_extreme_clock(void)
{
	struct mf_clock_pair a = { 0, 1000, 10 }, b = { 100, 1300, 20 };
	struct manifest m;
	char err[512], *d = mkdir_sub("extreme");
	int64_t off = 7, unc = 7, ns;

	CHECK_EQ(mf_clock_offset(&a, &b, &off, &unc), 0);
	CHECK_EQ(off, 1100);
	CHECK_EQ(unc, 230);
	a = (struct mf_clock_pair){ 0, INT64_MAX, 0 };
	b = (struct mf_clock_pair){ INT64_MAX, 0, 0 };
	CHECK_EQ(mf_clock_offset(&a, &b, &off, &unc), -ERANGE); /* oe - os overflows */
	a = (struct mf_clock_pair){ INT64_MIN, INT64_MAX, 0 };
	CHECK_EQ(mf_clock_offset(&a, &a, &off, &unc), -ERANGE); /* real - mono overflows */
	a = (struct mf_clock_pair){ 0, 5, INT64_MAX };
	CHECK_EQ(mf_clock_offset(&a, &a, &off, &unc), -ERANGE); /* span sum overflows */
	a = (struct mf_clock_pair){ 0, 5, -1 };
	CHECK_EQ(mf_clock_offset(&a, &a, &off, &unc), -ERANGE); /* a negative span */
	/* the same through a manifest: read, its clock ignored */
	one_segment(d, "\"clock\":{\"start\":{\"monotonic_ns\":-9223372036854775808,"
		    "\"realtime_ns\":9223372036854775807,\"read_span_ns\":9223372036854775807},"
		    "\"end\":{\"monotonic_ns\":9223372036854775807,\"realtime_ns\":-9223372036854775808,"
		    "\"read_span_ns\":9223372036854775807}},",
		    "\"start_us\":-9000000000000000,\"end_us\":9000000000000000", "");
	CHECK_EQ(mf_read(d, &m, err, sizeof(err)), 0);
	CHECK(m.clock_source != MF_CLOCK_MANIFEST);
	/* start and end 18e18 ns apart: the span does not fit, no times */
	CHECK_EQ(mf_read_summaries(&m, NULL, true, err, sizeof(err)), 0);
	CHECK(!m.files[0].have_times);
	CHECK_EQ(m.files[0].duration_ns, 0);
	mf_free(&m);
	/* a year past 2262 in nanoseconds */
	CHECK(mf_parse_wallclock("9999-12-31T23:59:59.999999Z", &ns) < 0);
	CHECK_EQ(mf_parse_wallclock("2262-01-01T00:00:00Z", &ns), 0);
}

/* Sums over ranks saturate instead of overflowing. */
static void test_extreme_sums(void)
{
	struct manifest m;
	struct job_report r;
	const struct jr_op **v;
	char err[512], *d = mkdir_sub("sums");
	bool by_cpu;
	size_t n;

	put(d, "manifest.json", "{\"tool\":\"fvbpf\",\"files\":["
	    "{\"rank\":0,\"segment\":0,\"summary_json\":\"a.json\"},"
	    "{\"rank\":0,\"segment\":1,\"summary_json\":\"b.json\"}]}");
	put(d, "a.json", "{\"metadata\":{\"region\":\"step\",\"duration_us\":9000000000000000},"
	    "\"rows\":[{\"name\":\"op\",\"kind\":\"cpu_op\",\"device_us\":9000000000000000,"
	    "\"cpu_us\":-9000000000000000,\"count\":9223372036854775807}]}");
	put(d, "b.json", "{\"metadata\":{\"region\":\"step\",\"duration_us\":9000000000000000},"
	    "\"rows\":[{\"name\":\"op\",\"kind\":\"cpu_op\",\"device_us\":9000000000000000,"
	    "\"cpu_us\":-9000000000000000,\"count\":9223372036854775807}]}");
	CHECK_EQ(mf_read(d, &m, err, sizeof(err)), 0);
	CHECK_EQ(mf_read_summaries(&m, NULL, true, err, sizeof(err)), 0);
	CHECK_EQ(job_report_build(&m, 1, &r), 0);
	CHECK_EQ(r.regions[0].ranks[0].sum_ns, INT64_MAX);
	n = jr_top(&r.regions[0], false, 10, &v, &by_cpu);
	CHECK_EQ(n, 1);
	if (n) {
		CHECK_EQ(v[0]->device_ns, INT64_MAX);
		CHECK_EQ(v[0]->cpu_ns, INT64_MIN);
		CHECK(v[0]->count == (uint64_t)INT64_MAX * 2);
	}
	free(v);
	job_report_free(&r);
	mf_free(&m);
}

/* A manifest of @n entries, each naming summary @fmt (with its number). */
static void many_entries(const char *d, size_t n, const char *fmt)
{
	char *text = malloc(n * 160 + 64), name[64];
	size_t i, len;

	if (!text)
		return;
	len = (size_t)sprintf(text, "{\"tool\":\"fvbpf\",\"files\":[");
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), fmt, i);
		len += (size_t)sprintf(text + len, "%s{\"rank\":%zu,\"segment\":%zu,"
				       "\"summary_json\":\"%s\"}", i ? "," : "", i % 7, i, name);
	}
	strcpy(text + len, "]}");
	put(d, "manifest.json", text);
	free(text);
}

/* One summary listed again and again is one segment; a bound that the
 * tables would pass is refused with the fix in the message. */
static void test_duplicates_and_budget(void)
{
	struct mf_budget b = { .max_memory = 1ULL << 40, .limit = 1 << 20 }; /* RSS: not checked */
	struct job_report r;
	struct manifest m;
	char err[512], *d = mkdir_sub("dup");

	many_entries(d, 20000, "s.json");
	summary(d, "s.json", 0, "1000.000", 0, "5", "aten::mm");
	CHECK_EQ(mf_read(d, &m, err, sizeof(err)), 0);
	CHECK_EQ(m.nfiles, 1);
	CHECK_EQ(m.duplicates, 19999);
	CHECK_EQ(mf_read_summaries(&m, NULL, true, err, sizeof(err)), 0);
	CHECK_EQ(job_report_build(&m, 1, &r), 0);
	CHECK_EQ(r.regions[0].segments, 1);
	job_report_free(&r);
	mf_free(&m);
	/* 20000 distinct entries do not fit in 1 MiB of tables */
	many_entries(d, 20000, "s%06zu.json");
	CHECK_EQ(mf_read_budget(d, &m, &b, err, sizeof(err)), -ENOSPC);
	CHECK(strstr(err, "manifest.json: ") != NULL);
	CHECK(strstr(err, "give a larger one, e.g. --max-memory") != NULL);
	CHECK(strchr(err, '\n') == NULL);
	b.limit = 64 << 20;
	b.held = 0;
	CHECK_EQ(mf_read_budget(d, &m, &b, err, sizeof(err)), 0);
	CHECK_EQ(m.nfiles, 20000);
	mf_free(&m);
}

/* Only regular files inside the directory are read: links (to a file of
 * root's, say) and FIFOs are refused by name, and promptly. */
static void test_refused_files(void)
{
	char err[512], path[600], *d = mkdir_sub("links"), *secret = mkdir_sub("secret");
	struct manifest m;

	summary(secret, "s.json", 0, "1000.000", 0, "5", "SECRET");
	one_segment(d, "", "\"start_us\":1,\"end_us\":2", "");
	unlink(strcat(strcpy(path, d), "/s.json"));
	snprintf(err, sizeof(err), "%s/s.json", secret);
	CHECK_EQ(symlink(err, path), 0);
	CHECK_EQ(mf_read(d, &m, err, sizeof(err)), 0);
	CHECK(mf_read_summaries(&m, NULL, true, err, sizeof(err)) < 0);
	CHECK(strstr(err, "/s.json: a symbolic link: refused") != NULL);
	CHECK(m.nfiles == 1 && !m.files[0].have_summary);
	mf_free(&m);
	unlink(path);
	CHECK_EQ(mkfifo(path, 0600), 0);
	CHECK_EQ(mf_read(d, &m, err, sizeof(err)), 0);
	CHECK(mf_read_summaries(&m, NULL, true, err, sizeof(err)) < 0);
	CHECK(strstr(err, "/s.json: not a regular file: refused") != NULL);
	mf_free(&m);
	/* the manifest itself */
	snprintf(path, sizeof(path), "%s/manifest.json", d);
	rename(path, strcat(strcpy(err, d), "/real.json"));
	CHECK_EQ(symlink("real.json", path), 0);
	CHECK(mf_read(d, &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "manifest.json: a symbolic link: refused") != NULL);
	unlink(path);
	CHECK_EQ(mkfifo(path, 0600), 0);
	CHECK(mf_read(d, &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "manifest.json: not a regular file: refused") != NULL);
}

/* The streamed reading: rows before the metadata are read in a second
 * pass; what is not one JSON value is refused as before. */
static void test_streamed_reading(void)
{
	struct manifest m;
	struct job_report r;
	char err[512], *d = mkdir_sub("stream");

	put(d, "manifest.json", "{\"files\":[{\"rank\":0,\"summary_json\":\"s.json\"}],"
	    "\"processes\":[{\"x\":[1,2,{\"y\":\"]}\\\"\"}]}],\"tool\":\"fvbpf\"}\n");
	put(d, "s.json", "{\"rows\":[{\"name\":\"op\",\"kind\":\"cpu_op\",\"cpu_us\":3}],"
	    "\"metadata\":{\"region\":\"step\",\"duration_us\":5}}");
	CHECK_EQ(mf_read(d, &m, err, sizeof(err)), 0);
	CHECK_EQ(mf_read_summaries(&m, NULL, true, err, sizeof(err)), 0);
	CHECK_EQ(job_report_build(&m, 1, &r), 0);
	CHECK_EQ(r.regions[0].nops, 1);
	CHECK_EQ(r.regions[0].ops[0].cpu_ns, 3000);
	job_report_free(&r);
	mf_free(&m);
	put(d, "manifest.json", "{\"tool\":\"fvbpf\",\"files\":[]} x");
	CHECK(mf_read(d, &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "manifest.json: not valid JSON") != NULL);
	put(d, "manifest.json", "{\"tool\":\"fvbpf\",\"files\":[],\"w\":[1,}");
	CHECK(mf_read(d, &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "manifest.json: not valid JSON") != NULL);
	put(d, "manifest.json", "{\"tool\":\"fvbpf\",\"files\":[],\"w\":\"a\nb\"}");
	CHECK(mf_read(d, &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "manifest.json: not valid JSON") != NULL);
	put(d, "manifest.json", "[]");
	CHECK(mf_read(d, &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "not an fvbpf manifest") != NULL);
}

/* Region rows a summary controls: parents in a circle, a chain deeper
 * than JR_SPLIT_DEPTH, more distinct sub-regions than JR_SUBS_MAX (the
 * rest counted), hostile names; the split stays bounded, ordered, valid
 * JSON, and the text carries no control character. */
static void test_hostile_split(void)
{
	char *d = mkdir_sub("split"), *rows = malloc(1 << 16), err[512], *buf = NULL;
	const struct jr_region *g;
	struct job_report r;
	struct manifest m;
	size_t used = 0, i, len = 0, inside = 0;
	json_object *j, *back;
	FILE *f;
	int k;

	if (!rows)
		return;
	used += (size_t)snprintf(rows + used, 65536 - used,
		"{\"name\":\"step\",\"kind\":\"region\",\"parent\":\"\",\"cpu_us\":1000},"
		"{\"name\":\"a\",\"kind\":\"region\",\"parent\":\"b\",\"cpu_us\":1},"
		"{\"name\":\"b\",\"kind\":\"region\",\"parent\":\"a\",\"cpu_us\":1},"
		"{\"name\":\"x\\u001b[2J\",\"kind\":\"region\",\"parent\":\"step\",\"cpu_us\":5},"
		"{\"name\":\"big\",\"kind\":\"region\",\"parent\":\"step\",\"cpu_us\":9000}");
	for (k = 0; k < 12; k++) { /* a chain: c0 in step, c1 in c0, ... */
		char parent[16];

		snprintf(parent, sizeof(parent), k ? "c%d" : "step", k - 1);
		used += (size_t)snprintf(rows + used, 65536 - used,
			",{\"name\":\"c%d\",\"kind\":\"region\",\"parent\":\"%s\",\"cpu_us\":1}",
			k, parent);
	}
	for (k = 0; k < 80; k++)
		used += (size_t)snprintf(rows + used, 65536 - used,
			",{\"name\":\"r%d\",\"kind\":\"region\",\"parent\":\"step\",\"cpu_us\":1}", k);
	one_segment(d, "", "\"start_us\":1,\"end_us\":1001,\"duration_us\":1000", rows);
	free(rows);
	CHECK_EQ(mf_read(d, &m, err, sizeof(err)), 0);
	CHECK_EQ(mf_read_summaries(&m, NULL, true, err, sizeof(err)), 0);
	CHECK_EQ(job_report_build(&m, 1, &r), 0);
	g = &r.regions[0];
	CHECK_EQ(g->nsubs, JR_SUBS_MAX);
	CHECK(g->subs_dropped > 0);
	/* the tree first, the biggest first; the circle and the cut chain outside */
	CHECK_STR(g->subs[g->sub_order[0]].name, "big");
	for (i = 0; i < g->nsubs; i++) {
		const struct jr_sub *x = &g->subs[g->sub_order[i]];

		CHECK(x->depth <= JR_SPLIT_DEPTH);
		if (x->depth)
			inside = i + 1;
		if (!strcmp(x->name, "a") || !strcmp(x->name, "b") || !strcmp(x->name, "c9"))
			CHECK_EQ(x->depth, 0);
		if (!strcmp(x->name, "c7"))
			CHECK_EQ(x->depth, 8);
	}
	for (i = inside; i < g->nsubs; i++)
		CHECK_EQ(g->subs[g->sub_order[i]].depth, 0);
	/* outside the sub-regions: never below 0 (they sum past the segment) */
	CHECK_EQ(jr_outside_ns(g, &g->ranks[0]), 0);
	j = job_report_json(&r, 5);
	back = json_tokener_parse(json_object_to_json_string(j));
	CHECK(back != NULL);
	json_object_put(back);
	json_object_put(j);
	f = open_memstream(&buf, &len);
	if (f) {
		CHECK_EQ(job_report_print(f, &r, 5), 0);
		fclose(f);
		CHECK(strchr(buf, '\x1b') == NULL);
		CHECK(strstr(buf, "x\\x1b[2J") != NULL);
		CHECK(strstr(buf, "past the first 64 left out") != NULL);
		free(buf);
	}
	job_report_free(&r);
	mf_free(&m);
	/* a reason not to count that is not text for a key or a terminal */
	one_segment(d, "", "\"start_us\":1,\"end_us\":2,\"counted\":false,"
		    "\"not_counted_why\":\"\\u001b[31m\xff\\\"}\"", "");
	CHECK_EQ(mf_read(d, &m, err, sizeof(err)), 0);
	CHECK_EQ(mf_read_summaries(&m, NULL, true, err, sizeof(err)), 0);
	CHECK_EQ(job_report_build(&m, 1, &r), 0);
	CHECK_EQ(r.regions[0].uncounted, 1);
	j = job_report_json(&r, 5);
	back = json_tokener_parse(json_object_to_json_string(j));
	CHECK(back != NULL);
	json_object_put(back);
	json_object_put(j);
	buf = NULL;
	f = open_memstream(&buf, &len);
	if (f) {
		CHECK_EQ(job_report_print(f, &r, 5), 0);
		fclose(f);
		CHECK(strchr(buf, '\x1b') == NULL);
		CHECK(strstr(buf, "1 segment does not count (\\x1b[31m") != NULL);
		free(buf);
	}
	job_report_free(&r);
	mf_free(&m);
}

/* A summary of rank @rank, @dur_us long, with @dl as its "dataloader". */
static void dl_summary(const char *dir, const char *name, int rank, int dur_ms, int incomplete,
		       const char *dl)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"rank\":%d,\"region\":\"step\",\"start_us\":1000.000,"
		 "\"end_us\":%d.000,\"duration_us\":%d.000,\"incomplete\":%s},"
		 "\"rows\":[{\"name\":\"step\",\"kind\":\"region\",\"cpu_us\":%d}],"
		 "\"dataloader\":%s}",
		 rank, 1000 + dur_ms * 1000, dur_ms * 1000, incomplete ? "true" : "false",
		 dur_ms * 1000, dl);
	put(dir, name, text);
}

/* Per rank, the trainer's wait for its DataLoader summed over its complete
 * segments; a null, hostile or out-of-range "dataloader" adds nothing. */
static void test_dataloader_share(void)
{
	char *d = mkdir_sub("dl"), err[512], *buf = NULL;
	struct job_report r;
	struct manifest m;
	const struct jr_rank *k;
	size_t len = 0;
	FILE *f;

	put(d, "manifest.json",
	    "{\"tool\":\"fvbpf\",\"hostname\":\"h\",\"files\":["
	    "{\"pid\":1,\"rank\":0,\"segment\":0,\"summary_json\":\"s0.json\",\"trace\":\"t\"},"
	    "{\"pid\":1,\"rank\":0,\"segment\":1,\"summary_json\":\"s1.json\",\"trace\":\"t\"},"
	    "{\"pid\":1,\"rank\":0,\"segment\":2,\"summary_json\":\"s2.json\",\"trace\":\"t\"},"
	    "{\"pid\":1,\"rank\":0,\"segment\":3,\"summary_json\":\"s3.json\",\"trace\":\"t\"},"
	    "{\"pid\":1,\"rank\":0,\"segment\":4,\"incomplete\":true,\"summary_json\":\"s4.json\"},"
	    "{\"pid\":1,\"rank\":0,\"segment\":5,\"summary_json\":\"s5.json\",\"trace\":\"t\"},"
	    "{\"pid\":2,\"rank\":1,\"segment\":0,\"summary_json\":\"s6.json\",\"trace\":\"t\"}]}");
	dl_summary(d, "s0.json", 0, 10, 0,
		   "{\"per_batch\":[{\"batch\":0,\"wait_us\":999999}],\"wait_us\":1500.700,"
		   "\"workers\":[{\"wait_us\":7}],\"batches\":3,\"bottleneck\":null}");
	dl_summary(d, "s1.json", 0, 10, 0, "null");
	dl_summary(d, "s2.json", 0, 10, 0, "{\"wait_us\":\"x\",\"batches\":-5}");
	dl_summary(d, "s3.json", 0, 10, 0, "{\"wait_us\":1e300,\"batches\":4}");
	dl_summary(d, "s4.json", 0, 10, 1, "{\"wait_us\":9000,\"batches\":9}");
	dl_summary(d, "s5.json", 0, 20, 0, "{\"batches\":2,\"wait_us\":2500}");
	dl_summary(d, "s6.json", 1, 10, 0, "{\"wait_us\":0,\"batches\":0}");
	CHECK_EQ(mf_read(d, &m, err, sizeof(err)), 0);
	CHECK_EQ(mf_read_summaries(&m, NULL, true, err, sizeof(err)), 0);
	CHECK(m.files[0].have_dl && m.files[0].dl_wait_ns == 1500700 && m.files[0].dl_batches == 3);
	CHECK(!m.files[1].have_dl && !m.files[2].have_dl && !m.files[3].have_dl);
	CHECK_EQ(job_report_build(&m, 1, &r), 0);
	CHECK_EQ(r.regions[0].nranks, 2);
	k = &r.regions[0].ranks[0];
	CHECK_EQ(k->complete, 5);
	CHECK_EQ(k->dl_segments, 2);
	CHECK_EQ(k->dl_wait_ns, 4000700);
	CHECK_EQ(k->dl_batches, 5);
	CHECK_EQ(k->dl_seg_ns, 30000000);
	CHECK_EQ(r.regions[0].ranks[1].dl_segments, 1);
	f = open_memstream(&buf, &len);
	CHECK(f != NULL);
	if (f) {
		job_report_print(f, &r, 10);
		fclose(f);
	}
	CHECK(buf && strstr(buf, "DataLoader: the trainer's wait for batches"));
	/* 4.0007 ms of 30 ms: 13.3 % */
	CHECK(buf && strstr(buf, "         2        4.001    13.3%        5  h rank 0\n"));
	CHECK(buf && strstr(buf, "         1        0.000     0.0%        0  h rank 1\n"));
	free(buf);
	job_report_free(&r);
	mf_free(&m);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_arithmetic);
	RUN(test_top_across_ranks);
	RUN(test_no_device_time_ranks_by_cpu);
	RUN(test_json_valid);
	RUN(test_clock);
	RUN(test_clock_lines);
	RUN(test_bad_inputs);
	RUN(test_extreme_clock);
	RUN(test_extreme_sums);
	RUN(test_duplicates_and_budget);
	RUN(test_refused_files);
	RUN(test_streamed_reading);
	RUN(test_hostile_split);
	RUN(test_dataloader_share);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			printf("# could not remove %s\n", tmpdir);
	}
	UNIT_DONE();
}
