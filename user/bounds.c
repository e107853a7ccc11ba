// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <string.h>

#include "bounds.h"
#include "demangle.h"
#include "symbolizer.h"

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
