// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdlib.h>

#include "pipeline/memory/seg_memory.h"

void seg_memory_free(struct seg_memory *m)
{
	if (!m)
		return;
	free(m->recs);
	free(m);
}
