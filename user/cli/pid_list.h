/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_CLI_PID_LIST_H
#define FVBPF_CLI_PID_LIST_H

#include <sys/types.h>

/* -p's argument, for attach and dump: PIDs from @min to @max separated by
 * commas or whitespace, appended to @pids (*@n of @most taken).  0, or
 * EINVAL (argp's convention) with the reason said in one line; @per ends
 * the too-many message ("per attach"). */
int pid_list_parse(char *arg, unsigned long long min, unsigned long long max, pid_t *pids,
		   unsigned int *n, unsigned int most, const char *per);

#endif
