// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "output/seg_output.h"

void seg_output_who(const struct proc_target *p, char *buf, size_t len)
{
	if (p->name_by_pid)
		snprintf(buf, len, "pid%d", p->pid);
	else if (p->restart)
		snprintf(buf, len, "rank%d_restart%u", p->rank, p->restart);
	else
		snprintf(buf, len, "rank%d", p->rank);
}

void seg_output_rank_text(const struct proc_target *p, char *buf, size_t len)
{
	if (p->rank == PROC_NO_RANK)
		snprintf(buf, len, "no rank: named by PID");
	else
		snprintf(buf, len, "rank %d%s", p->rank, p->rank_from_env ? "" : " by default");
}

void seg_output_proc_label(const struct proc_target *p, int pid, char *buf, size_t len)
{
	if (p->rank == PROC_NO_RANK)
		snprintf(buf, len, "no rank: %s (pid %d)", p->comm, pid);
	else if (p->restart)
		snprintf(buf, len, "rank %d restart %u: %s (pid %d)", p->rank, p->restart, p->comm, pid);
	else
		snprintf(buf, len, "rank %d: %s (pid %d)", p->rank, p->comm, pid);
}

int seg_output_file_name(char *buf, size_t len, const char *kind, const struct proc_target *p,
			 uint32_t seq, const char *region, const char *ext)
{
	char who[32];
	int n;

	seg_output_who(p, who, sizeof(who));
	n = snprintf(buf, len, "%s_%s_segment%04" PRIu32 "_%s.%s", kind, who, seq, region, ext);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

uint64_t seg_output_realtime_ns(const struct session_meta *m, uint64_t mono_ns)
{
	if (!m || !m->real_at_start_ns)
		return 0;
	/* modulo 2^64: right for a time before the pair was read too */
	return m->real_at_start_ns + (mono_ns - m->mono_at_start_ns);
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

const char *trace_format_name(enum trace_format f)
{
	switch (f) {
	case TRACE_JSON_GZ: return "json.gz";
	case TRACE_PFTRACE: return "pftrace";
	default: return "json";
	}
}

int trace_format_parse(const char *s, enum trace_format *out)
{
	enum trace_format f;

	for (f = TRACE_JSON; f <= TRACE_PFTRACE; f++)
		if (!strcmp(s, trace_format_name(f))) {
			*out = f;
			return 0;
		}
	return -EINVAL;
}
