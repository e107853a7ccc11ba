// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Python multiprocessing's processes by their command line (proc_mp.h). */
#include <string.h>

#include "proc/proc_mp.h"
#include "proc/proc_read.h"

/* Enough for the interpreter's path, -c and multiprocessing's one-liner
 * with its descriptors; a longer command line is no such process. */
#define MP_CMDLINE_MAX 4096

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

enum proc_mp_kind proc_mp_kind_of(const char *cmdline)
{
	if (strstr(cmdline, " -c ") && strstr(cmdline, "multiprocessing.spawn import spawn_main") &&
	    ends_with(cmdline, " --multiprocessing-fork"))
		return PROC_MP_SPAWNED;
	if (strstr(cmdline, " -c ") && strstr(cmdline, "multiprocessing.forkserver import main"))
		return PROC_MP_FORKSERVER;
	return PROC_MP_NONE;
}

enum proc_mp_kind proc_mp_kind(pid_t pid)
{
	char buf[MP_CMDLINE_MAX];

	if (proc_read_cmdline(pid, buf, sizeof(buf)))
		return PROC_MP_NONE;
	return proc_mp_kind_of(buf);
}
