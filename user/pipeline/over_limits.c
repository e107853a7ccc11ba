// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stddef.h>
#include <string.h>

#include "pipeline/api_pairing.h"
#include "pipeline/gpu_join.h"
#include "pipeline/over_limits.h"
#include "pipeline/pystack.h"
#include "pipeline/segment.h"
#include "proc/elf/demangle.h"
#include "proc/elf/elf_file.h"
#include "proc/elf/sym_table.h"
#include "proc/elf/symbolizer.h"
#include "util/log.h"
#include "util/name_table.h"

/* A counter: its manifest key and where its struct keeps it. */
struct counter_row {
	const char *key;
	size_t off;
};

#define PROCESS_ROW(key, field) { key, offsetof(struct over_limits, field) }
#define SESSION_ROW(field) { #field, offsetof(struct bounds, field) }

static const struct counter_row process_rows[] = {
	PROCESS_ROW("slices", slices),
	PROCESS_ROW("cuda_calls", calls),
	PROCESS_ROW("gpu_records", gpu),
	PROCESS_ROW("kernel_names", kernel_names),
	PROCESS_ROW("region_thread_events", region_threads),
	PROCESS_ROW("cuda_thread_events", cuda_threads),
	PROCESS_ROW("python_stacks", python_stacks),
};

static const struct counter_row session_rows[] = {
	SESSION_ROW(symbol_files_evicted),
	SESSION_ROW(symbol_tables_capped),
	SESSION_ROW(maps_capped),
	SESSION_ROW(names_demangle_capped),
	SESSION_ROW(names_capped),
	SESSION_ROW(addresses_not_cached),
};

/* Every bound, as the manifest's "limits" lists them. */
static const struct {
	const char *key;
	uint64_t value;
} bound_rows[] = {
	{ "slices_per_segment", SEG_MAX_SLICES },
	{ "cuda_calls_per_segment", SEG_MAX_CALLS },
	{ "gpu_records_per_segment", SEG_MAX_GPU },
	{ "kernel_names_per_process", GPU_JOIN_MAX_NAMES },
	{ "region_threads_per_process", SEG_MAX_THREADS },
	{ "cuda_threads_per_process", API_MAX_THREADS },
	{ "warnings_shown_per_kind", LOG_WARN_BURST },
	{ "symbol_files_cached", SYMBOLIZER_MAX_FILES },
	{ "symbol_cache_bytes", SYMBOLIZER_MAX_BYTES },
	{ "symbols_per_file", ELF_FILE_MAX_SYMS },
	{ "symbol_name_bytes", SYM_TABLE_NAME_MAX },
	{ "demangle_input_bytes", DEMANGLE_IN_MAX },
	{ "demangle_output_bytes", DEMANGLE_OUT_MAX },
	{ "names_per_session", NAME_TABLE_MAX_NAMES },
	{ "name_bytes_per_session", NAME_TABLE_MAX_BYTES },
	{ "addresses_per_cache", ADDR_CACHE_MAX_ENTRIES },
	{ "python_stacks_per_session", PYSTACK_MAX_STACKS },
	{ "python_code_objects_per_process", PYSTACK_MAX_CODES },
};

#define NROWS(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t row_value(const void *counters, const struct counter_row *r)
{
	uint64_t v;

	memcpy(&v, (const char *)counters + r->off, sizeof(v));
	return v;
}

static bool any_set(const void *counters, const struct counter_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (row_value(counters, &rows[i]))
			return true;
	return false;
}

static json_object *rows_json(const void *counters, const struct counter_row *rows, size_t n)
{
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_object_add(o, rows[i].key,
				       json_object_new_uint64(row_value(counters, &rows[i])));
	return o;
}

bool over_limits_of(const struct session_target *t, struct over_limits *o)
{
	const struct segment *cur = t->tracker->cur;

	o->slices = t->tracker->slices_dropped + (cur ? cur->slices_dropped : 0);
	o->calls = t->tracker->calls_dropped + (cur ? cur->calls_dropped : 0);
	o->gpu = t->gpu->over_limit;
	o->kernel_names = t->gpu->names_dropped;
	o->region_threads = t->tracker->thread_events_dropped;
	o->cuda_threads = t->pairing->threads_dropped;
	o->python_stacks = t->pystk ? t->pystk->n.refused : t->pystk_refused;
	return any_set(o, process_rows, NROWS(process_rows));
}

bool bounds_collect(const struct session *s, struct bounds *b)
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
	b->names_capped = s->knames.capped;
	for (i = 0; i < s->ntargets; i++)
		b->addresses_not_cached += s->targets[i].kernels.refused +
					   s->targets[i].gpu->names.refused +
					   s->targets[i].gpu->corrs.refused;
	return any_set(b, session_rows, NROWS(session_rows));
}

void over_limits_print(FILE *f, const struct session_target *t)
{
	struct over_limits o;

	if (!over_limits_of(t, &o))
		return;
	fprintf(f, "    over limits (counted, not recorded): %llu region slices, %llu CUDA calls, "
		"%llu GPU records (per segment: %u, %u, %u); %llu kernel names (per process: %u); "
		"%llu events of threads past %u; %llu Python stacks and code objects (%u, %u, "
		"or --max-memory's share for tables)\n",
		(unsigned long long)o.slices, (unsigned long long)o.calls,
		(unsigned long long)o.gpu, SEG_MAX_SLICES, SEG_MAX_CALLS, SEG_MAX_GPU,
		(unsigned long long)o.kernel_names, GPU_JOIN_MAX_NAMES,
		(unsigned long long)(o.region_threads + o.cuda_threads), SEG_MAX_THREADS,
		(unsigned long long)o.python_stacks, PYSTACK_MAX_STACKS, PYSTACK_MAX_CODES);
}

void over_limits_session_print(FILE *f, const struct session *s)
{
	struct bounds b;

	if (!bounds_collect(s, &b))
		return;
	fprintf(f, "  over limits (session): %llu symbol files evicted, %llu symbol tables capped, "
		"%llu maps reads cut, %llu names cut by the demangler, %llu names (kernels, scopes, "
		"shapes, Python) not kept (%u names or --max-memory's share for tables), %llu "
		"addresses not cached\n", (unsigned long long)b.symbol_files_evicted,
		(unsigned long long)b.symbol_tables_capped, (unsigned long long)b.maps_capped,
		(unsigned long long)b.names_demangle_capped,
		(unsigned long long)b.names_capped, NAME_TABLE_MAX_NAMES,
		(unsigned long long)b.addresses_not_cached);
}

json_object *over_limits_json(const struct session_target *t)
{
	struct over_limits o;

	over_limits_of(t, &o);
	return rows_json(&o, process_rows, NROWS(process_rows));
}

json_object *over_limits_session_json(const struct session *s)
{
	struct bounds b;

	bounds_collect(s, &b);
	return rows_json(&b, session_rows, NROWS(session_rows));
}

json_object *over_limits_bounds_json(void)
{
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < NROWS(bound_rows); i++)
		json_object_object_add(o, bound_rows[i].key,
				       json_object_new_uint64(bound_rows[i].value));
	return o;
}
