/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_PARSE_COUNT_H
#define FVBPF_PARSE_COUNT_H

/*
 * A count from the command line: decimal digits only (strtoull() alone
 * would take spaces and a sign, and wrap "-1"), from @min to @max, so that
 * it is never truncated into a smaller type.  0, -EINVAL when @arg is not
 * digits, -ERANGE out of range.
 */
int parse_count(const char *arg, unsigned long long min, unsigned long long max,
		unsigned long long *out);

#endif /* FVBPF_PARSE_COUNT_H */
