// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Shared by the offline commands' command lines (cli_offline.h). */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/cli_offline.h"
#include "util/log.h"
#include "util/budget.h"

int offline_budget(uint64_t max_memory, const char *cmd, struct mf_budget *b)
{
	uint64_t rss = budget_rss_now(), need = rss + OFFLINE_RESERVE + OFFLINE_TABLES_MIN;

	memset(b, 0, sizeof(*b));
	b->max_memory = max_memory;
	if (max_memory >= need) {
		b->limit = max_memory - rss - OFFLINE_RESERVE;
		return 0;
	}
	log_error("--max-memory %llu MiB is too small for fvbpf %s: it holds %llu MiB (RSS) "
		  "before reading and needs %llu MiB more to read one file: give --max-memory %lluM "
		  "or more", (unsigned long long)(max_memory >> 20), cmd,
		  (unsigned long long)(rss >> 20),
		  (unsigned long long)((OFFLINE_RESERVE + OFFLINE_TABLES_MIN) >> 20),
		  (unsigned long long)((need >> 20) + 1));
	return -ENOSPC;
}

void offline_raise_nofile(size_t ndirs)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= ndirs + 64)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > ndirs + 64 ? ndirs + 64 :
										   rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

void offline_warn(const struct manifest *m)
{
	uint64_t refused = 0;
	size_t i;

	if (m->duplicates)
		log_warn("%s/manifest.json: %llu files[] entr%s repeat%s an earlier entry's file: "
			 "read once", m->dir, (unsigned long long)m->duplicates,
			 m->duplicates == 1 ? "y" : "ies", m->duplicates == 1 ? "s" : "");
	if (m->clock_invalid)
		log_warn("%s/manifest.json: \"clock\" holds values out of range: ignored, the "
			 "summaries' start_wallclock is used", m->dir);
	for (i = 0; i < m->nfiles; i++)
		refused += m->files[i].step_key_refused;
	if (refused)
		log_warn("%s: %llu segment%s a step_key that is not one (longer than %d bytes, or not "
			 "text): paired by time instead", m->dir, (unsigned long long)refused,
			 refused == 1 ? " has" : "s have", MF_STEP_KEY_MAX);
}

int offline_max_memory(const char *arg, uint64_t *out)
{
	if (!budget_parse_size(arg, out))
		return 0;
	log_error("invalid --max-memory '%s': give a size from 1 byte to %lluG with an optional K, "
		  "M or G suffix, e.g. --max-memory 512M", arg, BUDGET_MAX_MEMORY >> 30);
	return EINVAL;
}
