// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "util/log.h"
#include "util/parse_count.h"
#include "cli/pid_list.h"

int pid_list_parse(char *arg, unsigned long long min, unsigned long long max, pid_t *pids,
		   unsigned int *n, unsigned int most, const char *per)
{
	char *tok, *save = NULL;
	unsigned long long v;

	/* commas, or the whitespace of -p "$(pgrep ...)"; an empty $(pgrep ...)
	 * unquoted leaves the next option as the argument */
	if (!arg[strspn(arg, ", \t\n")] || (*arg == '-' && !isdigit((unsigned char)arg[1]))) {
		log_error("-p got no PID%s%s%s: did the pgrep that gave it find nothing? check its "
			  "pattern against `ps -eo pid,args`", *arg ? " but '" : "", arg, *arg ? "'" : "");
		return EINVAL;
	}
	for (tok = strtok_r(arg, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save)) {
		if (parse_count(tok, min, max, &v)) {
			log_error("invalid PID '%s' for -p: give a process id from %llu to %llu, e.g. -p 1234",
				  tok, min, max);
			return EINVAL;
		}
		if (*n >= most) {
			log_error("too many PIDs for -p: at most %u %s", most, per);
			return EINVAL; /* not E2BIG: that is ARGP_ERR_UNKNOWN */
		}
		pids[(*n)++] = (pid_t)v;
	}
	return 0;
}
