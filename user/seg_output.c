// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdio.h>
#include <time.h>

#include "seg_output.h"

void seg_output_who(const struct proc_target *p, char *buf, size_t len)
{
	if (p->name_by_pid)
		snprintf(buf, len, "pid%d", p->pid);
	else
		snprintf(buf, len, "rank%d", p->rank);
}

void seg_output_wallclock(const struct session_meta *m, uint64_t mono_ns, char *buf, size_t len)
{
	uint64_t real = m->real_at_start_ns + (mono_ns - m->mono_at_start_ns);
	time_t sec = (time_t)(real / 1000000000ULL);
	struct tm tm;
	char date[32];

	gmtime_r(&sec, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06uZ", date, (unsigned)(real % 1000000000ULL / 1000));
}
