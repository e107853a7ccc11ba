// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include "output/json/trace_where.h"

void trace_where_when(struct obuf *f, int64_t pid, uint64_t tid, uint64_t ts)
{
	ob_lit(f, ",\"pid\":");
	ob_i64(f, pid);
	ob_lit(f, ",\"tid\":");
	ob_u64(f, tid);
	ob_lit(f, ",\"ts\":");
	ob_us(f, ts);
}
