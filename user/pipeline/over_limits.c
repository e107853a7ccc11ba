// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <string.h>

#include "pipeline/api_pairing.h"
#include "target/demangle.h"
#include "target/elf_file.h"
#include "pipeline/gpu_join.h"
#include "util/log.h"
#include "pipeline/over_limits.h"
#include "pipeline/segment.h"
#include "util/name_table.h"
#include "target/sym_table.h"
#include "target/symbolizer.h"

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

/* The session's bounds (moved in from bounds.c). */
void bounds_collect(const struct session *s, struct bounds *b)
{
	struct symbolizer_stats st = { 0 };
	int i;

	memset(b, 0, sizeof(*b));
	if (s->sym)
		symbolizer_stats(s->sym, &st);
	b->symbol_files_evicted = st.files_evicted;
	b->symbol_tables_capped = st.syms_capped;
	b->maps_capped = st.maps_capped;
	/* Process-wide: the GPU joins demangle CUPTI's names too. */
	b->names_demangle_capped = demangle_capped_total();
	b->kernel_names_capped = s->knames.capped;
	for (i = 0; i < s->ntargets; i++)
		b->addresses_not_cached += s->targets[i].kernels.refused +
					   s->targets[i].gpu.names.refused +
					   s->targets[i].gpu.corrs.refused;
}

bool bounds_any(const struct bounds *b)
{
	return b->symbol_files_evicted || b->symbol_tables_capped || b->maps_capped ||
	       b->names_demangle_capped || b->kernel_names_capped || b->addresses_not_cached;
}

void bounds_limits_json(json_object *limits)
{
	json_object_object_add(limits, "symbol_files_cached", json_object_new_uint64(SYMBOLIZER_MAX_FILES));
	json_object_object_add(limits, "symbol_cache_bytes", json_object_new_uint64(SYMBOLIZER_MAX_BYTES));
	json_object_object_add(limits, "symbols_per_file", json_object_new_uint64(ELF_FILE_MAX_SYMS));
	json_object_object_add(limits, "symbol_name_bytes", json_object_new_uint64(SYM_TABLE_NAME_MAX));
	json_object_object_add(limits, "demangle_input_bytes", json_object_new_uint64(DEMANGLE_IN_MAX));
	json_object_object_add(limits, "demangle_output_bytes", json_object_new_uint64(DEMANGLE_OUT_MAX));
	json_object_object_add(limits, "kernel_names_per_session", json_object_new_uint64(NAME_TABLE_MAX_NAMES));
	json_object_object_add(limits, "addresses_per_cache", json_object_new_uint64(ADDR_CACHE_MAX_ENTRIES));
}

/* Only when a target drove fvbpf past a bound of the session (moved from exit_report.c). */
void over_limits_session_print(FILE *f, const struct session *s)
{
	struct bounds b;

	bounds_collect(s, &b);
	if (!bounds_any(&b))
		return;
	fprintf(f, "  over limits (session): %llu symbol files evicted, %llu symbol tables capped, "
	       "%llu maps reads cut, %llu names cut by the demangler, %llu kernel names over the "
	       "limit, %llu addresses not cached\n", (unsigned long long)b.symbol_files_evicted,
	       (unsigned long long)b.symbol_tables_capped, (unsigned long long)b.maps_capped,
	       (unsigned long long)b.names_demangle_capped,
	       (unsigned long long)b.kernel_names_capped,
	       (unsigned long long)b.addresses_not_cached);
}

/* What was not kept because the target drove fvbpf past a bound (moved from manifest.c). */
json_object *over_limits_session_json(const struct session *s)
{
	json_object *o = json_object_new_object();
	struct bounds b;

	bounds_collect(s, &b);
	json_object_object_add(o, "symbol_files_evicted", json_object_new_int64((int64_t)b.symbol_files_evicted));
	json_object_object_add(o, "symbol_tables_capped", json_object_new_int64((int64_t)b.symbol_tables_capped));
	json_object_object_add(o, "maps_capped", json_object_new_int64((int64_t)b.maps_capped));
	json_object_object_add(o, "names_demangle_capped", json_object_new_int64((int64_t)b.names_demangle_capped));
	json_object_object_add(o, "kernel_names_capped", json_object_new_int64((int64_t)b.kernel_names_capped));
	json_object_object_add(o, "addresses_not_cached", json_object_new_int64((int64_t)b.addresses_not_cached));
	return o;
}
