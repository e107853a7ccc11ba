// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump/py_guess.h"
#include "proc/proc_maps.h"

unsigned long py_guess_from_name(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	char *end;
	unsigned long minor;

	base = base ? base + 1 : path;
	if (!strncmp(base, "libpython3.", 11))
		p = base + 11;
	else if (!strncmp(base, "python3.", 8))
		p = base + 8;
	else
		return 0;
	if (*p < '0' || *p > '9')
		return 0;
	minor = strtoul(p, &end, 10);
	/* "python3.9", "libpython3.9.so...", "libpython3.9d.so" */
	if (minor > 99 || (*end && *end != '.' && *end != 'd' && *end != 'm'))
		return 0;
	return 0x03000000ul | (minor << 16);
}

struct guess {
	unsigned long version;
	char *path;
	size_t len;
};

static int map_cb(const struct proc_map *m, void *arg)
{
	struct guess *g = arg;

	if (!m->ino || !m->path || !strchr(m->perms, 'x'))
		return 0;
	g->version = py_guess_from_name(m->path);
	if (!g->version)
		return 0;
	snprintf(g->path, g->len, "%s", m->path);
	return 1;
}

unsigned long py_guess_version(pid_t pid, char *path, size_t len)
{
	struct guess g = { 0, path, len };

	if (len)
		path[0] = '\0';
	proc_maps_foreach(pid, map_cb, &g);
	return g.version;
}
