// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The /proc/PID/maps parser (user/proc/proc_maps.c) on any text: every line it
 * accepts must be a mapping with start < end and a NUL-terminated path.
 */
#include "fuzz.h" /* first: it asks for _GNU_SOURCE */

#include <string.h>

#include "proc/proc_maps.h"

static int on_map(const struct proc_map *m, void *ctx)
{
	(void)ctx;
	if (m->start >= m->end || strlen(m->perms) != 4 || strlen(m->path) > PROC_MAPS_LINE_MAX)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_map m;
	size_t skipped;
	char *line;

	proc_maps_read_fd(fuzz_memfd(data, size), on_map, NULL, &skipped);
	/* One line on its own, exactly as long as the input. */
	line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	if (!proc_maps_parse_line(line, size, &m))
		on_map(&m, NULL);
	free(line);
	return 0;
}
