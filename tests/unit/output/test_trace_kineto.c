// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Kineto's keys in fvbpf's JSON trace (user/output/json/trace_kineto.c), on a
 * segment whose answers are known: two nested ops, three CUDA calls (inside
 * the inner op, inside the outer op only, outside both), their GPU records
 * and a stream sync.  What HolisticTraceAnalysis relies on: the rank as its
 * regex finds it, ProfilerStep#N, External id joining op, call and kernel,
 * Kineto's argument names, cuda_sync, ts on metadata events.
 */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/seg_output.h"
#include "output/json/trace_writer.h"
#include "pipeline/registry.h"
#include "pipeline/segment.h"
#include "util/name_table.h"
#include "unit.h"

static struct region_registry reg;
static struct name_table knames;
static struct proc_target proc;
static struct session_meta meta;
static struct segment seg;
static struct torch_call ops[2];
static struct api_call calls[3];
static struct seg_slice slice;

static struct api_call call_at(uint32_t tid, uint64_t start, uint64_t end, uint32_t corr)
{
	struct api_call c;

	memset(&c, 0, sizeof(c));
	c.tid = tid;
	c.api_id = (uint32_t)cuda_api_find("cudaLaunchKernel");
	c.start_ns = start;
	c.end_ns = end;
	c.correlation = corr;
	c.gpu_records = 1;
	return c;
}

static void gpu(uint16_t kind, uint32_t corr, uint64_t s, uint64_t e, int64_t call, uint8_t sub)
{
	struct gpu_activity a;

	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.correlation = corr;
	a.start = s;
	a.end = e;
	a.device = 1;
	a.stream = 7;
	a.call = call;
	a.copy_kind = sub;
	a.bytes = 4096;
	a.registers = 32;
	a.static_smem = 16;
	a.dynamic_smem = 112;
	CHECK_EQ(seg_add_gpu(&seg, &a), 0);
}

static void setup(void)
{
	uint32_t me = (uint32_t)getpid();

	registry_init(&reg);
	name_table_init(&knames);
	proc.pid = (pid_t)me;
	proc.rank = 3;
	proc.ri.world_size = 4;
	meta.mono_at_start_ns = 1000000;
	meta.real_at_start_ns = 1700000000000000000ull;
	seg.pid = me;
	seg.seq = 12;
	seg.region = (uint32_t)registry_find(&reg, "training_train_one_step");
	seg.start_ns = 50000;
	seg.end_ns = 1300000;
	slice = (struct seg_slice){ .tid = me, .region = seg.region, .start_ns = 50000,
				    .end_ns = 1300000 };
	seg.slices = &slice;
	seg.nslices = 1;
	ops[0] = (struct torch_call){ .start_ns = 100000, .end_ns = 1000000, .tid = me,
				      .name = name_table_intern(&knames, "aten::linear") };
	ops[1] = (struct torch_call){ .start_ns = 200000, .end_ns = 600000, .tid = me,
				      .name = name_table_intern(&knames, "aten::addmm"), .depth = 1 };
	seg.ops = ops;
	seg.nops = 2;
	calls[0] = call_at(me, 300000, 400000, 11);   /* in addmm */
	calls[1] = call_at(me, 700000, 800000, 12);   /* in linear only */
	calls[2] = call_at(me, 1100000, 1200000, 13); /* in no op */
	seg.calls = calls;
	seg.ncalls = 3;
	gpu(FVBPF_GPU_KERNEL, 11, 450000, 500000, 0, 0);
	gpu(FVBPF_GPU_MEMCPY, 13, 1250000, 1260000, 2, 1);
	gpu(FVBPF_GPU_SYNC, 0, 1270000, 1280000, -1, 3);
}

static char *write_trace(size_t *len)
{
	struct seg_output_ctx c = { .seg = &seg, .proc = &proc, .reg = &reg, .meta = &meta,
				    .knames = &knames, .format = TRACE_JSON };
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	CHECK_EQ(trace_write(f, &c), 0);
	fclose(f);
	return buf;
}

static int64_t arg_int(json_object *e, const char *key)
{
	json_object *args, *v;

	if (!json_object_object_get_ex(e, "args", &args) || !json_object_object_get_ex(args, key, &v))
		return -1;
	return json_object_get_int64(v);
}

static const char *str(json_object *e, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(e, key, &v) ? json_object_get_string(v) : "";
}

static void test_kineto_keys(void)
{
	json_object *t, *evs, *e, *v;
	size_t len = 0, i, n;
	int steps = 0, syncs = 0, annots = 0, meta_no_ts = 0, kernels = 0;
	int64_t ext_call[3] = { -1, -1, -1 };
	regmatch_t m[2];
	regex_t re;
	char *out;

	setup();
	out = write_trace(&len);
	CHECK(out != NULL);
	if (!out)
		return;
	/* HTA's own regex, on the text, finds this rank first */
	CHECK_EQ(regcomp(&re, "\"rank\":[[:space:]]+([0-9]+)", REG_EXTENDED), 0);
	CHECK_EQ(regexec(&re, out, 2, m, 0), 0);
	CHECK_EQ(atoi(out + m[1].rm_so), 3);
	regfree(&re);
	t = json_tokener_parse(out);
	CHECK(t != NULL);
	CHECK(json_object_object_get_ex(t, "distributedInfo", &v));
	CHECK_EQ(json_object_get_int(json_object_object_get(v, "world_size")), 4);
	CHECK(json_object_object_get_ex(t, "baseTimeNanoseconds", &v));
	CHECK(json_object_get_uint64(v) == 1700000000000000000ull - 1000000);
	CHECK(json_object_object_get_ex(t, "traceEvents", &evs));
	n = json_object_array_length(evs);
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(evs, i);
		if (!strcmp(str(e, "ph"), "M") && !json_object_object_get_ex(e, "ts", &v))
			meta_no_ts++;
		if (!strcmp(str(e, "name"), "ProfilerStep#12")) {
			steps++;
			CHECK(!strcmp(str(e, "cat"), "user_annotation"));
			CHECK_EQ(json_object_get_double(json_object_object_get(e, "ts")), 50.0);
			CHECK_EQ(json_object_get_double(json_object_object_get(e, "dur")), 1250.0);
		}
		if (!strcmp(str(e, "name"), "aten::linear"))
			CHECK_EQ(arg_int(e, "External id"), 1);
		if (!strcmp(str(e, "name"), "aten::addmm"))
			CHECK_EQ(arg_int(e, "External id"), 2);
		if (!strcmp(str(e, "cat"), "cuda_runtime")) {
			int64_t corr = arg_int(e, "correlation");

			if (corr >= 11 && corr <= 13)
				ext_call[corr - 11] = arg_int(e, "External id");
		}
		if (!strcmp(str(e, "cat"), "kernel")) {
			kernels++;
			CHECK_EQ(arg_int(e, "External id"), 2);
			CHECK_EQ(arg_int(e, "registers per thread"), 32);
			CHECK_EQ(arg_int(e, "shared memory"), 128);
		}
		if (!strcmp(str(e, "cat"), "gpu_memcpy")) {
			CHECK_EQ(arg_int(e, "External id"), -1);
			CHECK(json_object_object_get_ex(json_object_object_get(e, "args"),
							"memory bandwidth (GB/s)", &v));
		}
		if (!strcmp(str(e, "cat"), "cuda_sync")) {
			syncs++;
			CHECK(!strcmp(str(e, "name"), "Stream Sync"));
		}
		if (!strcmp(str(e, "cat"), "gpu_user_annotation")) {
			annots++;
			CHECK(!strcmp(str(e, "name"), "fvbpf.region::training_train_one_step"));
			/* the kernel and the copy launched inside the region */
			CHECK_EQ(json_object_get_double(json_object_object_get(e, "ts")), 450.0);
			CHECK_EQ(json_object_get_double(json_object_object_get(e, "dur")), 810.0);
		}
		if (!strcmp(str(e, "ph"), "X") && strcmp(str(e, "cat"), "user_annotation") &&
		    strcmp(str(e, "cat"), "gpu_user_annotation"))
			CHECK(arg_int(e, "Ev Idx") >= 0);
	}
	CHECK_EQ(steps, 1);
	CHECK_EQ(kernels, 1);
	CHECK_EQ(syncs, 1);
	CHECK_EQ(annots, 1);
	CHECK_EQ(meta_no_ts, 0);
	CHECK_EQ(ext_call[0], 2);  /* made inside addmm */
	CHECK_EQ(ext_call[1], 1);  /* inside linear only */
	CHECK_EQ(ext_call[2], -1); /* in no op: none */
	json_object_put(t);
	free(out);
	free(seg.gpu);
	name_table_free(&knames);
}

/* A launcher (no rank) writes no distributedInfo: HTA must not read it
 * as rank 0 by its regex. */
static void test_kineto_no_rank(void)
{
	json_object *t, *v;
	size_t len = 0;
	char *out;

	seg = (struct segment){ 0 }; /* the first test freed its GPU records */
	setup();
	proc.rank = PROC_NO_RANK;
	proc.name_by_pid = true;
	out = write_trace(&len);
	CHECK(out != NULL);
	if (!out)
		return;
	CHECK(!strstr(out, "\"rank\": "));
	t = json_tokener_parse(out);
	CHECK(t != NULL);
	CHECK(!json_object_object_get_ex(t, "distributedInfo", &v));
	CHECK(json_object_object_get_ex(t, "baseTimeNanoseconds", &v));
	json_object_put(t);
	free(out);
	free(seg.gpu);
	name_table_free(&knames);
	proc.rank = 3;
	proc.name_by_pid = false;
}

int main(void)
{
	RUN(test_kineto_keys);
	RUN(test_kineto_no_rank);
	UNIT_DONE();
}
