// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "proc/proc_children.h"
#include "proc/proc_mp.h"
#include "proc/proc_read.h"
#include "proc/proc_scan.h"

#define CHILDREN_MAX 4096   /* children looked at */
#define CHILDREN_TEXT 65536 /* bytes of one thread's children file read */

struct child {
	pid_t pid;
	unsigned long long start;
};

/* The children listed by thread @tid of @parent, added to @v. */
static void add_children(pid_t parent, const char *tid, struct child *v, size_t *n)
{
	char path[PATH_MAX], *text, *p, *end;
	ssize_t len;
	long pid;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/children", parent, tid);
	text = malloc(CHILDREN_TEXT);
	if (!text)
		return;
	len = proc_read_file(path, text, CHILDREN_TEXT);
	for (p = text; len > 0 && *n < CHILDREN_MAX; p = end) {
		pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0 && pid <= 0x7fffffff)
			v[(*n)++].pid = (pid_t)pid;
	}
	free(text);
}

static bool earlier(const struct child *a, const struct child *b)
{
	return a->start < b->start || (a->start == b->start && a->pid < b->pid);
}

/* @parent's children listed by its threads into @v (CHILDREN_MAX). */
static size_t list_children(pid_t parent, struct child *v)
{
	char path[48];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", parent);
	d = opendir(path);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			add_children(parent, de->d_name, v, &n);
	if (d)
		closedir(d);
	return n;
}

/* @pid runs @parent's image without an exec: a fork of it. */
static bool forked(pid_t parent, pid_t pid)
{
	return proc_same_image(parent, pid) == 1;
}

int proc_forked_children(pid_t parent)
{
	struct child *v = calloc(CHILDREN_MAX, sizeof(*v));
	size_t n, i;
	int k = 0;

	if (!v)
		return 0;
	n = list_children(parent, v);
	for (i = 0; i < n; i++)
		k += forked(parent, v[i].pid);
	free(v);
	return k;
}

/* Which of @parent's children are counted: forks of it (forked()), or
 * processes the spawn method started. */
typedef bool (*child_kind_fn)(pid_t parent, pid_t pid);

static bool spawned(pid_t parent, pid_t pid)
{
	(void)parent;
	return proc_mp_kind(pid) == PROC_MP_SPAWNED;
}

/* @child's place among @parent's live children of @kind, by start time
 * then PID (@child is one: the caller checked), or -1. */
static int rank_among(pid_t parent, pid_t child, unsigned long long start, child_kind_fn kind)
{
	struct child *v, me = { .pid = child, .start = start };
	size_t n, i;
	pid_t ppid;
	int rank = 0;
	bool found = false;

	v = calloc(CHILDREN_MAX, sizeof(*v));
	if (!v)
		return -1;
	n = list_children(parent, v);
	for (i = 0; i < n; i++) {
		if (v[i].pid == child) {
			found = true;
			continue;
		}
		if (proc_read_stat_ppid(v[i].pid, &ppid, &v[i].start) || ppid != parent)
			continue;
		if (earlier(&v[i], &me) && kind(parent, v[i].pid))
			rank++;
	}
	free(v);
	return found ? rank : -1;
}

int proc_worker_rank(pid_t trainer, pid_t worker)
{
	unsigned long long start;
	pid_t ppid;

	if (proc_read_stat_ppid(worker, &ppid, &start))
		return -1;
	if (ppid == trainer && forked(trainer, worker))
		return rank_among(trainer, worker, start, forked);
	if (ppid == trainer && spawned(trainer, worker))
		return rank_among(trainer, worker, start, spawned);
	/* forkserver: the trainer's forkserver forked it */
	if (ppid > 0 && proc_read_ppid(ppid) == trainer && proc_mp_kind(ppid) == PROC_MP_FORKSERVER &&
	    forked(ppid, worker))
		return rank_among(ppid, worker, start, forked);
	return -1;
}
