// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse_count.h"

int parse_count(const char *arg, unsigned long long min, unsigned long long max,
		unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!*arg || strspn(arg, "0123456789") != strlen(arg))
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}
