// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Ranks paired by training step (issue 35), never by segment number: on
 * the wall clock (each directory's own offset), by step key where every
 * segment has one, counted-false segments left out unless asked for, a
 * rank without a segment at a step found, hostile keys refused.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offline/manifest/manifest_read.h"
#include "offline/step_pairs.h"
#include "unit.h"

static char tmpdir[] = "/tmp/fvbpf-sp.XXXXXX";

#define P 100000000LL /* ns between steps */

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

struct seg_spec {
	int rank, segment;
	int64_t start_ns, end_ns; /* CLOCK_MONOTONIC of the directory */
	const char *extra;        /* more metadata members, "" none */
	const char *region;       /* NULL: "step" */
};

/* A directory @sub of host @host whose realtime - monotonic offset is
 * @offset (a manifest clock), its segments @s. */
static char *make_dir(const char *sub, const char *host, int64_t offset, const struct seg_spec *s,
		      size_t n)
{
	static char dirs[8][512];
	static int k;
	char *d = dirs[k++ % 8], text[65536], name[64], meta[1024];
	size_t i, used;

	snprintf(d, 512, "%s/%s", tmpdir, sub);
	mkdir(d, 0755);
	used = (size_t)snprintf(text, sizeof(text), "{\"tool\":\"fvbpf\",\"hostname\":\"%s\",\"clock\":{"
				"\"start\":{\"monotonic_ns\":1000000000000,\"realtime_ns\":%lld,"
				"\"read_span_ns\":0}},\"files\":[", host, (long long)(1000000000000LL + offset));
	for (i = 0; i < n; i++) {
		const char *region = s[i].region ? s[i].region : "step";

		snprintf(name, sizeof(name), "s%d_%d.json", s[i].rank, s[i].segment);
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "%s{\"pid\":%d,\"rank\":%d,\"segment\":%d,\"region\":\"%s\","
					 "\"summary_json\":\"%s\",\"trace\":\"t%s\"}", i ? "," : "",
					 100 + s[i].rank, s[i].rank, s[i].segment, region, name, name);
		snprintf(meta, sizeof(meta), "{\"metadata\":{\"region\":\"%s\",\"start_us\":%lld.%03lld,"
			 "\"end_us\":%lld.%03lld%s},\"rows\":[]}", region, (long long)(s[i].start_ns / 1000),
			 (long long)(s[i].start_ns % 1000), (long long)(s[i].end_ns / 1000),
			 (long long)(s[i].end_ns % 1000), s[i].extra);
		put(d, name, meta);
	}
	snprintf(text + used, sizeof(text) - used, "]}");
	put(d, "manifest.json", text);
	return d;
}

static const struct sp_opts counted_only = { .region = "step" }, all = { .with_uncounted = true };

static int load(struct manifest *m, const char *dir)
{
	char err[512];
	int ret = mf_read(dir, m, err, sizeof(err));

	if (!ret)
		ret = mf_read_summaries(m, NULL, false, err, sizeof(err));
	if (ret)
		printf("# %s\n", err);
	return ret;
}

/* The segment number of @rank's member of step @s, -1 none. */
static int member(const struct step_pairs *p, const struct manifest *ms, size_t s, int rank)
{
	size_t i;

	if (s >= p->nsteps)
		return -2;
	for (i = p->steps[s].first; i < p->steps[s].first + p->steps[s].n; i++)
		if (sp_file(p, ms, i)->rank == rank)
			return (int)sp_file(p, ms, i)->segment;
	return -1;
}

/*
 * Rank 0 (host A) steps 0-4; rank 1 (host B, its CLOCK_MONOTONIC 7 s
 * apart, its offset the other way) armed two steps later: its segment 0 is
 * rank 0's segment 2, its segment 2 has no counterpart on rank 0... and
 * rank 0's segments 0 and 1 none on rank 1.
 */
static void test_by_time(void)
{
	struct seg_spec a[5], b[4];
	struct manifest ms[2];
	struct step_pairs p;
	size_t miss[4], i;
	int64_t offb = 5000000000LL - 7000000000LL;

	for (i = 0; i < 5; i++)
		a[i] = (struct seg_spec){ 0, (int)i, 10 * P + (int64_t)i * P,
					  10 * P + (int64_t)i * P + 80000000, "", NULL };
	/* rank 1: the same wall times, 1 ms later, through its own offset */
	for (i = 0; i < 4; i++)
		b[i] = (struct seg_spec){ 1, (int)i, 10 * P + (int64_t)(i + 2) * P + 1000000 + 5000000000LL - offb,
					  10 * P + (int64_t)(i + 2) * P + 82000000 + 5000000000LL - offb, "", NULL };
	CHECK_EQ(load(&ms[0], make_dir("ta", "A", 5000000000LL, a, 5)), 0);
	CHECK_EQ(load(&ms[1], make_dir("tb", "B", offb, b, 4)), 0);
	CHECK_EQ(step_pairs_build(&p, ms, 2, &counted_only, NULL), 0);
	CHECK_EQ(p.nregions, 1);
	CHECK(!p.regions[0].by_key);
	CHECK_EQ(p.nstreams, 2);
	CHECK_EQ(p.nsteps, 6);
	CHECK_EQ(member(&p, ms, 0, 0), 0);
	CHECK_EQ(member(&p, ms, 0, 1), -1);
	CHECK_EQ(member(&p, ms, 1, 1), -1);
	CHECK_EQ(member(&p, ms, 2, 0), 2);
	CHECK_EQ(member(&p, ms, 2, 1), 0);
	CHECK_EQ(member(&p, ms, 4, 0), 4);
	CHECK_EQ(member(&p, ms, 4, 1), 2);
	CHECK_EQ(member(&p, ms, 5, 0), -1);
	CHECK_EQ(member(&p, ms, 5, 1), 3);
	CHECK_EQ(sp_missing(&p, 0, miss, 4), 1);
	CHECK_EQ(miss[0], 1); /* stream 1: host B rank 1 */
	CHECK_EQ(sp_missing(&p, 3, miss, 4), 0);
	CHECK_EQ(p.steps[2].start, 5000000000LL + 12 * P);
	step_pairs_free(&p, NULL);
	mf_free(&ms[0]);
	mf_free(&ms[1]);
}

/* counted false: left out, said; taken with_uncounted.  A directory
 * without the new keys: started_before_attach stands for counted. */
static void test_uncounted(void)
{
	struct seg_spec a[3] = {
		{ 0, 0, 10 * P, 10 * P + 10, ",\"counted\":false,\"not_counted_why\":\"fragment\"", NULL },
		{ 0, 1, 11 * P, 11 * P + 10, "", NULL },
		{ 0, 2, 12 * P, 12 * P + 10, ",\"started_before_attach\":true", NULL },
	};
	struct manifest m;
	struct step_pairs p;

	CHECK_EQ(load(&m, make_dir("uc", "A", 0, a, 3)), 0);
	CHECK(!m.files[0].counted);
	CHECK_STR(m.files[0].not_counted_why, "fragment");
	CHECK(m.files[1].counted);
	CHECK_STR(m.files[1].not_counted_why, "");
	CHECK(!m.files[2].counted);
	CHECK_STR(m.files[2].not_counted_why, "started before attach");
	CHECK_EQ(step_pairs_build(&p, &m, 1, &counted_only, NULL), 0);
	CHECK_EQ(p.nsegs, 1);
	CHECK_EQ(p.uncounted, 2);
	step_pairs_free(&p, NULL);
	CHECK_EQ(step_pairs_build(&p, &m, 1, &all, NULL), 0);
	CHECK_EQ(p.nsegs, 3);
	CHECK_EQ(p.nsteps, 3);
	step_pairs_free(&p, NULL);
	mf_free(&m);
}

/* Every segment keyed: one step per key whatever the times (which do not
 * overlap: said), in the order of their start; one unkeyed segment and
 * the whole region is paired by time. */
static void test_by_key(void)
{
	struct seg_spec a[2] = {
		{ 0, 0, 10 * P, 10 * P + 10, ",\"step_key\":\"pg0:7\"", NULL },
		{ 0, 1, 11 * P, 11 * P + 10, ",\"step_key\":\"pg0:8\"", NULL },
	};
	struct seg_spec b[2] = {
		{ 1, 0, 30 * P, 30 * P + 10, ",\"step_key\":\"pg0:8\"", NULL },
		{ 1, 1, 31 * P, 31 * P + 10, ",\"step_key\":\"pg0:9\"", NULL },
	};
	struct manifest ms[2];
	struct step_pairs p;

	CHECK_EQ(load(&ms[0], make_dir("ka", "A", 0, a, 2)), 0);
	CHECK_EQ(load(&ms[1], make_dir("kb", "B", 0, b, 2)), 0);
	CHECK_EQ(step_pairs_build(&p, ms, 2, &counted_only, NULL), 0);
	CHECK(p.regions[0].by_key);
	CHECK_EQ(p.nsteps, 3);
	CHECK_EQ(member(&p, ms, 0, 0), 0);
	CHECK_EQ(member(&p, ms, 1, 0), 1);
	CHECK_EQ(member(&p, ms, 1, 1), 0);
	CHECK(p.steps[1].disjoint);
	CHECK(!p.steps[0].disjoint);
	CHECK_EQ(member(&p, ms, 2, 1), 1);
	step_pairs_free(&p, NULL);
	ms[1].files[1].step_key = "";
	CHECK_EQ(step_pairs_build(&p, ms, 2, &counted_only, NULL), 0);
	CHECK(!p.regions[0].by_key);
	CHECK_EQ(p.nsteps, 4);
	step_pairs_free(&p, NULL);
	mf_free(&ms[0]);
	mf_free(&ms[1]);
}

/* Regions are paired apart, each numbering its own steps; a rank with
 * segments of one region only is no rank of the other's. */
static void test_regions(void)
{
	struct seg_spec a[4] = {
		{ 0, 0, 10 * P, 10 * P + 50, "", "step" },
		{ 0, 1, 10 * P + 60, 10 * P + 70, "", "opt" },
		{ 0, 2, 11 * P, 11 * P + 50, "", "step" },
		{ 1, 0, 10 * P + 1, 10 * P + 49, "", "step" },
	};
	const struct sp_region *r;
	struct manifest m;
	struct step_pairs p;
	struct sp_opts o = { NULL, false, NULL };

	CHECK_EQ(load(&m, make_dir("rg", "A", 0, a, 4)), 0);
	CHECK_EQ(step_pairs_build(&p, &m, 1, &o, NULL), 0);
	CHECK_EQ(p.nregions, 2);
	r = sp_region_find(&p, "opt");
	CHECK(r && r->nsteps == 1 && r->nstreams == 1 && p.steps[r->first_step].number == 0);
	CHECK(r && sp_missing(&p, r->first_step, NULL, 0) == 0);
	r = sp_region_find(&p, "step");
	CHECK(r && r->nsteps == 2 && r->nstreams == 2);
	CHECK(r && p.steps[r->first_step].n == 2 && p.steps[r->first_step + 1].number == 1);
	CHECK(r && sp_missing(&p, r->first_step + 1, NULL, 0) == 1);
	step_pairs_free(&p, NULL);
	mf_free(&m);
}

/* start_unix_us given: believed over the monotonic times; a key too long
 * or with a NUL inside is no key. */
static void test_hostile_keys(void)
{
	char longkey[MF_STEP_KEY_MAX + 40], extra[MF_STEP_KEY_MAX + 80];
	struct seg_spec a[3];
	struct manifest m;
	int64_t s, e;

	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	snprintf(extra, sizeof(extra), ",\"step_key\":\"%s\"", longkey);
	a[0] = (struct seg_spec){ 0, 0, 10, 20, extra, NULL };
	a[1] = (struct seg_spec){ 0, 1, 30, 40, ",\"step_key\":\"a\\u0000b\"", NULL };
	a[2] = (struct seg_spec){ 0, 2, 50, 60, ",\"start_unix_us\":1767225600000000.001,"
				  "\"end_unix_us\":1767225600000000.002", NULL };
	CHECK_EQ(load(&m, make_dir("hk", "A", 0, a, 3)), 0);
	CHECK(m.files[0].step_key_refused);
	CHECK_STR(m.files[0].step_key, "");
	CHECK(m.files[1].step_key_refused);
	CHECK_STR(m.files[1].step_key, "");
	CHECK_EQ(mf_file_wallclock(&m, &m.files[2], &s, &e), 0);
	CHECK_EQ(s, 1767225600000000001LL);
	CHECK_EQ(e, 1767225600000000002LL);
	CHECK_EQ(mf_file_wallclock(&m, &m.files[0], &s, &e), 0);
	CHECK_EQ(s, 10);
	mf_free(&m);
}

int main(void)
{
	char cmd[600];

	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_by_time);
	RUN(test_uncounted);
	RUN(test_by_key);
	RUN(test_regions);
	RUN(test_hostile_keys);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		printf("# could not remove %s\n", tmpdir);
	UNIT_DONE();
}
