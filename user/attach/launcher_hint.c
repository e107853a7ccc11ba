// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A -p process that fvbpf cannot trace (a torchrun launcher, the shell
 * that started it) whose descendants can: the error names them and
 * --children.  One walk of /proc, the tree built from its ppids.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "attach/launcher_hint.h"
#include "probes/torch_probes.h"
#include "proc/proc_info.h"
#include "proc/proc_scan.h"

#define HINT_LOOK_MAX 256   /* descendants whose mappings are read */
#define HINT_NAMED_MAX 8    /* PIDs named in the line */
#define HINT_DEPTH_MAX 64   /* generations below the process */

static int cmp_pid(const void *a, const void *b)
{
	const struct proc_entry *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The index of @pid in @all (sorted by pid), or -1. */
static ssize_t find_index(const struct proc_entry *all, size_t n, pid_t pid)
{
	struct proc_entry key = { .pid = pid };
	const struct proc_entry *e = bsearch(&key, all, n, sizeof(*all), cmp_pid);

	return e ? e - all : -1;
}

/* Mark in @in the processes of @all (sorted by pid) below @pid: 1 a
 * child, 2 deeper.  A generation per pass, at most HINT_DEPTH_MAX. */
static void mark_descendants(const struct proc_entry *all, size_t n, pid_t pid, unsigned char *in)
{
	bool grew = true;
	ssize_t parent;
	int depth;
	size_t i;

	for (i = 0; i < n; i++)
		in[i] = all[i].ppid == pid && all[i].pid != pid;
	for (depth = 1; grew && depth < HINT_DEPTH_MAX; depth++) {
		grew = false;
		for (i = 0; i < n; i++) {
			if (in[i] || all[i].pid == pid)
				continue;
			parent = find_index(all, n, all[i].ppid);
			if (parent >= 0 && in[parent]) {
				in[i] = 2;
				grew = true;
			}
		}
	}
}

/* What @pid maps that fvbpf traces: 2 markers, 1 libtorch_cpu, 0 neither. */
static int traceable_kind(pid_t pid, bool torch_ops)
{
	struct marker_lib *m = malloc(sizeof(*m));
	char path[256];
	int err;

	if (!m)
		return 0;
	err = proc_find_marker_lib(pid, m);
	free(m);
	if (!err)
		return 2;
	return torch_ops && torch_probes_mapped(pid, path, sizeof(path)) ? 1 : 0;
}

static void say(char *buf, size_t len, const pid_t *named, unsigned int found, bool deeper,
		bool markers, bool torch)
{
	char list[HINT_NAMED_MAX * 12 + 16] = "", plist[HINT_NAMED_MAX * 12] = "";
	size_t k = 0, pk = 0;
	unsigned int i, n = found < HINT_NAMED_MAX ? found : HINT_NAMED_MAX;

	for (i = 0; i < n; i++) {
		k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%d", i ? ", " : "", named[i]);
		pk += (size_t)snprintf(plist + pk, sizeof(plist) - pk, "%s%d", i ? "," : "", named[i]);
	}
	if (found > n)
		snprintf(list + k, sizeof(list) - k, " and %u more", found - n);
	snprintf(buf, len, "; its %s%s %s map%s %s: attach with --children%s%s%s",
		 deeper ? "descendant" : found == 1 ? "child" : "children",
		 deeper && found > 1 ? "s" : "", list, found == 1 ? "s" : "",
		 markers && torch ? "the fvbpf markers or libtorch_cpu" :
		 markers ? "the fvbpf markers" : "libtorch_cpu",
		 found > n ? "" : " (or -p ", found > n ? "" : plist, found > n ? "" : ")");
}

int launcher_hint(pid_t pid, bool torch_ops, char *buf, size_t len)
{
	struct proc_entry *all = NULL;
	pid_t named[HINT_NAMED_MAX];
	unsigned char *in = NULL, *kind;
	unsigned int found = 0, looked = 0;
	bool deeper = false, markers = false, torch = false;
	ssize_t parent;
	size_t i;
	int n;

	buf[0] = '\0';
	n = proc_scan_all(&all);
	if (n <= 0)
		return n < 0 ? n : 0;
	in = calloc((size_t)n, 2);
	if (!in) {
		free(all);
		return -ENOMEM;
	}
	qsort(all, (size_t)n, sizeof(*all), cmp_pid);
	kind = in + n;
	mark_descendants(all, (size_t)n, pid, in);
	for (i = 0; i < (size_t)n && looked < HINT_LOOK_MAX; i++)
		if (in[i]) {
			looked++;
			kind[i] = (unsigned char)traceable_kind(all[i].pid, torch_ops);
		}
	for (i = 0; i < (size_t)n; i++) {
		if (!kind[i])
			continue;
		/* a fork of a traceable process (a DataLoader worker) is a
		 * copy that --children lists, not one to name; the given
		 * process's own are traced with it (docs/dataloader.md) */
		parent = find_index(all, (size_t)n, all[i].ppid);
		if (parent >= 0 && (kind[parent] || all[parent].pid == pid) &&
		    proc_same_image(all[parent].pid, all[i].pid) == 1)
			continue;
		if (found < HINT_NAMED_MAX)
			named[found] = all[i].pid;
		found++;
		deeper |= in[i] == 2;
		markers |= kind[i] == 2;
		torch |= kind[i] == 1;
	}
	if (found)
		say(buf, len, named, found, deeper, markers, torch);
	free(in);
	free(all);
	return (int)found;
}
