// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <string.h>

#include "pipeline/bounds.h"
#include "target/demangle.h"
#include "target/elf_file.h"
#include "util/name_table.h"
#include "target/sym_table.h"
#include "target/symbolizer.h"

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
