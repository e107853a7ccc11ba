// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* fvbpf merge: alignment arithmetic, pid and flow-id remapping, streaming. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offline/manifest/manifest_read.h"
#include "offline/merge/trace_merge.h"
#include "unit.h"

static char tmpdir[] = "/tmp/fvbpf-tm.XXXXXX";

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

static const char *TRACE =
	"{\"otherData\":{\"x\":[1,{\"y\":\"]}\\\"\"}]},\"traceEvents\":[\n"
	"{\"ph\":\"M\",\"pid\":77,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"rank 0: t\"}},\n"
	"{\"ph\":\"M\",\"pid\":77,\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":0}},\n"
	"{\"ph\":\"X\",\"name\":\"op\",\"pid\":77,\"tid\":77,\"ts\":1000.500,\"dur\":10.000},\n"
	"{\"ph\":\"s\",\"id\":5,\"pid\":77,\"tid\":77,\"ts\":1001.000},\n"
	"{\"ph\":\"f\",\"bp\":\"e\",\"id\":5,\"pid\":0,\"tid\":7,\"ts\":1002.000}\n"
	"],\"displayTimeUnit\":\"ns\"}\n";

/* Two nodes, one rank each; B's offset is A's + 2.5 ms + 123 ns. */
static int build(struct manifest ms[2])
{
	char a[512], b[512], err[512];
	int ret;

	snprintf(a, sizeof(a), "%s/a", tmpdir);
	snprintf(b, sizeof(b), "%s/b", tmpdir);
	mkdir(a, 0755);
	mkdir(b, 0755);
	put(a, "manifest.json", "{\"tool\":\"fvbpf\",\"hostname\":\"A\",\"clock\":{"
	    "\"start\":{\"monotonic_ns\":0,\"realtime_ns\":1000000000,\"read_span_ns\":5},"
	    "\"end\":{\"monotonic_ns\":10,\"realtime_ns\":1000000010,\"read_span_ns\":5}},"
	    "\"files\":[{\"pid\":77,\"rank\":0,\"segment\":0,\"region\":\"step\",\"trace\":\"t.json\","
	    "\"summary_json\":\"s.json\"},"
	    "{\"pid\":77,\"rank\":0,\"segment\":1,\"region\":\"step\",\"trace\":\"t.json\","
	    "\"summary_json\":\"s1.json\"}]}");
	put(a, "s.json", "{\"metadata\":{\"region\":\"step\",\"start_us\":1000.000,\"end_us\":1100.000}}");
	put(a, "s1.json", "{\"metadata\":{\"region\":\"step\",\"start_us\":5000.000,\"end_us\":5100.000}}");
	put(a, "t.json", TRACE);
	put(b, "manifest.json", "{\"tool\":\"fvbpf\",\"hostname\":\"B\",\"clock\":{"
	    "\"start\":{\"monotonic_ns\":0,\"realtime_ns\":1002500123,\"read_span_ns\":5},"
	    "\"end\":{\"monotonic_ns\":10,\"realtime_ns\":1002500133,\"read_span_ns\":5}},"
	    "\"files\":[{\"pid\":77,\"rank\":1,\"segment\":0,\"region\":\"step\",\"trace\":\"t.json\","
	    "\"summary_json\":\"s.json\"},"
	    "{\"pid\":77,\"rank\":1,\"segment\":1,\"region\":\"step\",\"trace\":\"t.json\","
	    "\"summary_json\":\"s1.json\"}]}");
	/* B's segment 1 overlaps A's segment 0 in aligned time, not its segment 0 */
	put(b, "s.json", "{\"metadata\":{\"region\":\"step\",\"start_us\":10.000,\"end_us\":20.000}}");
	put(b, "s1.json", "{\"metadata\":{\"region\":\"step\",\"start_us\":-1450.000,\"end_us\":-1380.000}}");
	put(b, "t.json", TRACE);
	ret = mf_read(a, &ms[0], err, sizeof(err));
	if (!ret)
		ret = mf_read_summaries(&ms[0], NULL, false, err, sizeof(err));
	if (!ret)
		ret = mf_read(b, &ms[1], err, sizeof(err));
	if (!ret)
		ret = mf_read_summaries(&ms[1], NULL, false, err, sizeof(err));
	if (ret)
		printf("# %s\n", err);
	return ret;
}

static const struct tm_opts dflt = { .segment = -1, .step = -1 },
	seg1 = { .region = "step", .segment = 1, .step = -1 },
	step1 = { .region = "step", .segment = -1, .step = 1 },
	seg9 = { .region = "step", .segment = 9, .step = -1 },
	step9 = { .region = "step", .segment = -1, .step = 9 },
	nope = { .region = "nope", .segment = -1, .step = -1 };

static void test_plan_alignment(void)
{
	struct manifest ms[2];
	struct tm_plan p;
	char err[512];

	CHECK_EQ(build(ms), 0);
	CHECK_EQ(ms[0].offset_ns, 1000000000);
	CHECK_EQ(ms[0].uncertainty_ns, 10);
	CHECK_EQ(ms[1].offset_ns, 1002500123);
	CHECK_EQ(tm_plan_build(ms, 2, &dflt, &p, err, sizeof(err)), 0);
	CHECK_STR(p.region, "step");
	CHECK_EQ(p.n, 2);
	CHECK_EQ(p.step, 0);
	CHECK_EQ(p.picks[0].f->rank, 0);
	CHECK_EQ(p.picks[0].f->segment, 0);
	CHECK_EQ(p.picks[1].f->segment, 1);
	CHECK_STR(p.picks[1].how, "same step (time overlap)");
	CHECK_EQ(p.apart, 0);
	/* aligned shift difference = offset difference, exactly */
	CHECK_EQ(p.picks[1].shift_ns - p.picks[0].shift_ns, 2500123);
	/* base: the earliest aligned start (A's 1000 us before B's -1450 + 2500.123 us) */
	CHECK_EQ(p.base_ns, 1000000000 + 1000000); /* A: 1000 us + 1 s */
	tm_plan_free(&p);
	/* --segment 1: A's segment 1 overlaps no segment of B: B is missing
	 * (not its segment 1, which is A's segment 0's step) */
	CHECK_EQ(tm_plan_build(ms, 2, &seg1, &p, err, sizeof(err)), 0);
	CHECK_EQ(p.n, 1);
	CHECK_EQ(p.step, 2);
	CHECK_EQ(p.picks[0].f->segment, 1);
	CHECK_EQ(p.nmissing, 1);
	CHECK_STR(p.missing[0], "rank 1 (B)");
	tm_plan_free(&p);
	/* --step 1: B's segment 0 alone */
	CHECK_EQ(tm_plan_build(ms, 2, &step1, &p, err, sizeof(err)), 0);
	CHECK_EQ(p.n, 1);
	CHECK_EQ(p.picks[0].f->rank, 1);
	CHECK_EQ(p.picks[0].f->segment, 0);
	tm_plan_free(&p);
	CHECK(tm_plan_build(ms, 2, &seg9, &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, "no segment 9") != NULL);
	CHECK(tm_plan_build(ms, 2, &step9, &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, "region 'step' has 3 steps (0 to 2): no step 9") != NULL);
	CHECK(tm_plan_build(ms, 2, &nope, &p, err, sizeof(err)) < 0);
	mf_free(&ms[0]);
	mf_free(&ms[1]);
}

static void test_rewrite(void)
{
	struct tm_src s = { .index = 2, .shift_ns = -500 };
	json_object *ev;

	strcpy(s.prefix, "rank 2 (B)");
	ev = json_tokener_parse("{\"ph\":\"s\",\"id\":5,\"pid\":77,\"ts\":1.000}");
	CHECK_EQ(tm_rewrite_event(ev, &s), 0);
	CHECK_STR(json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN),
		  "{\"ph\":\"s\",\"id\":12884901893,\"pid\":3000,\"ts\":0.500}");
	json_object_put(ev);
	ev = json_tokener_parse("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"GPU 0\"}}");
	CHECK_EQ(tm_rewrite_event(ev, &s), 0);
	CHECK_STR(json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN),
		  "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":3001,\"args\":{\"name\":\"rank 2 (B): GPU 0\"}}");
	json_object_put(ev);
	ev = json_tokener_parse("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":0}");
	CHECK_EQ(tm_rewrite_event(ev, &s), 1);
	json_object_put(ev);
	/* string ids stay unique per rank; timestamps go negative exactly */
	ev = json_tokener_parse("{\"ph\":\"b\",\"id\":\"0x1f\",\"pid\":77,\"ts\":0}");
	CHECK_EQ(tm_rewrite_event(ev, &s), 0);
	CHECK_STR(json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN),
		  "{\"ph\":\"b\",\"id\":\"r2:0x1f\",\"pid\":3000,\"ts\":-0.500}");
	json_object_put(ev);
	/* a pid that is not a number cannot be kept apart: dropped */
	ev = json_tokener_parse("{\"ph\":\"X\",\"pid\":\"x\"}");
	CHECK_EQ(tm_rewrite_event(ev, &s), 1);
	json_object_put(ev);
	CHECK_EQ(s.npids, 2);
	tm_src_free(&s);
}

static void test_merge_file(void)
{
	struct manifest ms[2];
	struct tm_opts o = { .segment = -1, .step = -1 };
	char out[512], err[512], *text = NULL;
	json_object *t, *evs, *e, *v;
	size_t len, i, n, flows = 0;
	int64_t ts_a = 0, ts_b = 0, ids[4];

	CHECK_EQ(build(ms), 0);
	snprintf(out, sizeof(out), "%s/merged.json", tmpdir);
	o.output = out;
	CHECK_EQ(trace_merge(ms, 2, &o, err, sizeof(err)), 0);
	CHECK_EQ(mf_slurp(out, 1 << 20, &text, &len, err, sizeof(err)), 0);
	t = text ? json_tokener_parse(text) : NULL;
	CHECK(t != NULL);
	if (t && json_object_object_get_ex(t, "traceEvents", &evs)) {
		n = json_object_array_length(evs);
		for (i = 0; i < n; i++) {
			e = json_object_array_get_idx(evs, i);
			json_object_object_get_ex(e, "ph", &v);
			if (!strcmp(json_object_get_string(v), "X")) {
				json_object_object_get_ex(e, "pid", &v);
				int64_t pid = json_object_get_int64(v);

				json_object_object_get_ex(e, "ts", &v);
				mf_json_us_to_ns(v, pid == 1000 ? &ts_a : &ts_b);
			}
			if (json_object_object_get_ex(e, "id", &v) && flows < 4)
				ids[flows++] = json_object_get_int64(v);
		}
		/* the same source ts on both: B later by exactly the offset difference */
		CHECK_EQ(ts_b - ts_a, 2500123);
		CHECK_EQ(flows, 4);
		CHECK(ids[0] == ids[1] && ids[2] == ids[3] && ids[0] != ids[2]);
	}
	CHECK(strstr(text, "NTP/PTP") != NULL);
	CHECK(strstr(text, "\"uncertainty_ns\":10,") != NULL);
	CHECK(strstr(text, "rank 1 (B): rank 0: t") != NULL);
	json_object_put(t);
	free(text);
	mf_free(&ms[0]);
	mf_free(&ms[1]);
}

static void test_bad_trace(void)
{
	struct tm_src s = { .index = 0 };
	char path[512], err[512];
	int first = 1;
	FILE *out = fopen("/dev/null", "w");

	snprintf(path, sizeof(path), "%s/bad.json", tmpdir);
	put(tmpdir, "bad.json", "{\"traceEvents\":[{\"ph\":\"X\"");
	CHECK(tm_stream_file(out, path, &s, &first, err, sizeof(err)) < 0);
	CHECK(strstr(err, "not a valid Chrome trace") != NULL);
	put(tmpdir, "bad.json", "{\"other\":1}");
	CHECK(tm_stream_file(out, path, &s, &first, err, sizeof(err)) < 0);
	CHECK(strstr(err, "no \"traceEvents\"") != NULL);
	put(tmpdir, "bad.json", "[{\"ph\":\"X\",\"pid\":1,\"ts\":1}]");
	CHECK_EQ(tm_stream_file(out, path, &s, &first, err, sizeof(err)), 0);
	CHECK_EQ(s.events, 1);
	tm_src_free(&s);
	fclose(out);
}


/* Clock offsets and times at the ends of int64: refused or dropped, no
 * signed overflow (UBSan in the asan build). */
static void test_alignment_overflow(void)
{
	struct tm_src s = { .index = 0, .shift_ns = INT64_MAX };
	struct manifest m;
	struct tm_plan p;
	json_object *ev;
	char d[512], err[512];

	snprintf(d, sizeof(d), "%s/big", tmpdir);
	mkdir(d, 0755);
	put(d, "manifest.json", "{\"tool\":\"fvbpf\",\"hostname\":\"A\",\"clock\":{"
	    "\"start\":{\"monotonic_ns\":0,\"realtime_ns\":9223372036854775000,\"read_span_ns\":5}},"
	    "\"files\":[{\"pid\":7,\"rank\":0,\"segment\":0,\"region\":\"step\",\"trace\":\"t.json\","
	    "\"summary_json\":\"s.json\"}]}");
	put(d, "s.json", "{\"metadata\":{\"region\":\"step\",\"start_us\":9000000000000,"
	    "\"end_us\":9000000000001}}");
	put(d, "t.json", TRACE);
	CHECK_EQ(mf_read(d, &m, err, sizeof(err)), 0);
	CHECK_EQ(mf_read_summaries(&m, NULL, false, err, sizeof(err)), 0);
	CHECK_EQ(m.offset_ns, 9223372036854775000);
	CHECK(tm_plan_build(&m, 1, &dflt, &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, "s.json: start_us and end_us with the node's clock offset do not fit") != NULL);
	mf_free(&m);
	/* an event shifted past int64: dropped, not wrapped */
	ev = json_tokener_parse("{\"ph\":\"X\",\"pid\":1,\"ts\":9000000000000.000}");
	CHECK_EQ(tm_rewrite_event(ev, &s), 1);
	json_object_put(ev);
	s.shift_ns = INT64_MIN;
	ev = json_tokener_parse("{\"ph\":\"X\",\"pid\":1,\"ts\":-9000000000000.000}");
	CHECK_EQ(tm_rewrite_event(ev, &s), 1);
	json_object_put(ev);
	tm_src_free(&s);
}

/* A trace that is a link (to a file of root's, say) or a FIFO is refused by
 * name, promptly, and nothing of it reaches the output. */
static void test_refused_trace(void)
{
	struct tm_src s = { .index = 0 };
	char path[512], secret[512], err[512], *text = NULL;
	int first = 1;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	snprintf(secret, sizeof(secret), "%s/secret.json", tmpdir);
	put(tmpdir, "secret.json", "{\"traceEvents\":[{\"ph\":\"i\",\"name\":\"SECRET\",\"pid\":1}]}");
	chmod(secret, 0600);
	snprintf(path, sizeof(path), "%s/link.json", tmpdir);
	CHECK_EQ(symlink(secret, path), 0);
	CHECK(tm_stream_file(out, path, &s, &first, err, sizeof(err)) < 0);
	CHECK(strstr(err, "link.json: a symbolic link: refused") != NULL);
	snprintf(path, sizeof(path), "%s/fifo.json", tmpdir);
	CHECK_EQ(mkfifo(path, 0600), 0);
	CHECK(tm_stream_file(out, path, &s, &first, err, sizeof(err)) < 0);
	CHECK(strstr(err, "fifo.json: not a regular file: refused") != NULL);
	fclose(out);
	CHECK(!text || !strstr(text, "SECRET"));
	CHECK_EQ(s.events, 0);
	free(text);
	tm_src_free(&s);
}

int main(void)
{
	char cmd[600];

	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_plan_alignment);
	RUN(test_rewrite);
	RUN(test_merge_file);
	RUN(test_bad_trace);
	RUN(test_alignment_overflow);
	RUN(test_refused_trace);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		printf("# could not remove %s\n", tmpdir);
	UNIT_DONE();
}
