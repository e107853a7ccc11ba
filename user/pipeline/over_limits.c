// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include "pipeline/api_pairing.h"
#include "pipeline/gpu_join.h"
#include "util/log.h"
#include "pipeline/over_limits.h"
#include "pipeline/segment.h"

bool over_limits_of(const struct session_target *t, struct over_limits *o)
{
	const struct segment *cur = t->tracker.cur;

	o->slices = t->tracker.slices_dropped + (cur ? cur->slices_dropped : 0);
	o->calls = t->tracker.calls_dropped + (cur ? cur->calls_dropped : 0);
	o->gpu = t->gpu.over_limit;
	o->kernel_names = t->gpu.names_dropped;
	o->region_threads = t->tracker.thread_events_dropped;
	o->cuda_threads = t->pairing.threads_dropped;
	return o->slices || o->calls || o->gpu || o->kernel_names || o->region_threads ||
	       o->cuda_threads;
}

void over_limits_print(FILE *f, const struct session_target *t)
{
	struct over_limits o;

	if (!over_limits_of(t, &o))
		return;
	fprintf(f, "    over limits (counted, not recorded): %llu region slices, %llu CUDA calls, "
		"%llu GPU records (per segment: %u, %u, %u); %llu kernel names (per process: %u); "
		"%llu events of threads past %u\n",
		(unsigned long long)o.slices, (unsigned long long)o.calls,
		(unsigned long long)o.gpu, SEG_MAX_SLICES, SEG_MAX_CALLS, SEG_MAX_GPU,
		(unsigned long long)o.kernel_names, GPU_JOIN_MAX_NAMES,
		(unsigned long long)(o.region_threads + o.cuda_threads), SEG_MAX_THREADS);
}

json_object *over_limits_json(const struct session_target *t)
{
	json_object *j = json_object_new_object();
	struct over_limits o;

	over_limits_of(t, &o);
	json_object_object_add(j, "slices", json_object_new_uint64(o.slices));
	json_object_object_add(j, "cuda_calls", json_object_new_uint64(o.calls));
	json_object_object_add(j, "gpu_records", json_object_new_uint64(o.gpu));
	json_object_object_add(j, "kernel_names", json_object_new_uint64(o.kernel_names));
	json_object_object_add(j, "region_thread_events", json_object_new_uint64(o.region_threads));
	json_object_object_add(j, "cuda_thread_events", json_object_new_uint64(o.cuda_threads));
	return j;
}

json_object *over_limits_bounds_json(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "slices_per_segment", json_object_new_uint64(SEG_MAX_SLICES));
	json_object_object_add(o, "cuda_calls_per_segment", json_object_new_uint64(SEG_MAX_CALLS));
	json_object_object_add(o, "gpu_records_per_segment", json_object_new_uint64(SEG_MAX_GPU));
	json_object_object_add(o, "kernel_names_per_process", json_object_new_uint64(GPU_JOIN_MAX_NAMES));
	json_object_object_add(o, "region_threads_per_process", json_object_new_uint64(SEG_MAX_THREADS));
	json_object_object_add(o, "cuda_threads_per_process", json_object_new_uint64(API_MAX_THREADS));
	json_object_object_add(o, "warnings_shown_per_kind", json_object_new_uint64(LOG_WARN_BURST));
	return o;
}
