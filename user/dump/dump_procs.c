// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump/dump_procs.h"
#include "proc/proc_read.h"
#include "proc/proc_scan.h"

static bool has(const pid_t *v, unsigned int n, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

/* Descendants of @v's members not in it yet, until a pass adds none (a
 * child forked during a pass shows in the next). */
static int add_descendants(pid_t *v, unsigned int *n, bool *cut)
{
	struct proc_entry *all;
	unsigned int pass;
	int k, i, added;

	for (pass = 0; pass < 64; pass++) {
		k = proc_scan_all(&all);
		if (k < 0)
			return k;
		added = 0;
		for (i = 0; i < k; i++) {
			if (has(v, *n, all[i].pid) || !has(v, *n, all[i].ppid))
				continue;
			if (*n == DUMP_PROCS_MAX) {
				*cut = true;
				break;
			}
			v[(*n)++] = all[i].pid;
			added++;
		}
		free(all);
		if (!added)
			break;
	}
	return 0;
}

int dump_procs_expand(const pid_t *pids, unsigned int npids, pid_t **out, unsigned int *n,
		      bool *cut)
{
	pid_t *v = calloc(DUMP_PROCS_MAX, sizeof(*v));
	unsigned int i;
	int err;

	*out = NULL;
	*n = 0;
	*cut = false;
	if (!v)
		return -ENOMEM;
	for (i = 0; i < npids; i++) {
		if (has(v, *n, pids[i]))
			continue;
		if (*n == DUMP_PROCS_MAX) {
			*cut = true;
			break;
		}
		v[(*n)++] = pids[i];
	}
	err = add_descendants(v, n, cut);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	return 0;
}

/* fvbpf, sudo and the shell that ran them hold the pattern in their own
 * command lines. */
static bool ancestor_of_self(pid_t pid)
{
	pid_t p = getpid();
	int depth;

	for (depth = 0; depth < 64 && p > 0; depth++, p = proc_read_ppid(p))
		if (p == pid)
			return true;
	return false;
}

static bool matches(const regex_t *re, pid_t pid)
{
	char cmd[4096];

	return !ancestor_of_self(pid) && !proc_read_cmdline(pid, cmd, sizeof(cmd)) &&
	       !regexec(re, cmd, 0, NULL, 0);
}

int dump_procs_match(const char *pattern, pid_t **out, unsigned int *n, char *err, size_t errlen)
{
	struct proc_entry *all;
	regex_t re;
	pid_t *v;
	int k, i, ret;

	*out = NULL;
	*n = 0;
	ret = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
	if (ret) {
		regerror(ret, &re, err, errlen);
		return -EINVAL;
	}
	k = proc_scan_all(&all);
	if (k < 0) {
		regfree(&re);
		return k;
	}
	v = calloc(DUMP_PROCS_MAX, sizeof(*v));
	for (i = 0; v && i < k && *n < DUMP_PROCS_MAX; i++)
		if (matches(&re, all[i].pid) && !matches(&re, all[i].ppid))
			v[(*n)++] = all[i].pid;
	free(all);
	regfree(&re);
	if (!v)
		return -ENOMEM;
	if (!*n) {
		free(v);
		return -ENOENT;
	}
	*out = v;
	return 0;
}

static int find(const struct dump *d, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < d->nprocs; i++)
		if (d->procs[i].pid == pid)
			return (int)i;
	return -1;
}

/* A fork without exec of another dumped process (a DataLoader worker), or
 * a child that inherited its parent's rank (a compile worker spawned with
 * exec): it carries that one's environment but is not that rank. */
static void find_workers(struct dump *d)
{
	unsigned int i;

	for (i = 0; i < d->nprocs; i++) {
		struct dump_proc *p = &d->procs[i];
		int parent = find(d, p->ppid);
		const struct dump_proc *pp = parent >= 0 ? &d->procs[parent] : NULL;

		if (!pp || p->exited)
			continue;
		if ((p->rank_from_env && pp->rank_from_env && pp->rank == p->rank) ||
		    proc_same_image(p->ppid, p->pid) == 1) {
			p->worker = true;
			p->worker_of = p->ppid;
		}
	}
}

void dump_procs_name(struct dump *d)
{
	unsigned int i, j, ranked = 0, unranked = 0;

	find_workers(d);
	for (i = 0; i < d->nprocs; i++) {
		if (d->procs[i].worker)
			continue;
		ranked += d->procs[i].rank_from_env;
		unranked += !d->procs[i].rank_from_env;
	}
	for (i = 0; i < d->nprocs; i++) {
		struct dump_proc *p = &d->procs[i];
		bool twice = false;

		if (p->worker)
			continue;
		if (!p->rank_from_env) {
			/* alone, a process is rank 0 by default, as attach names it */
			if (!ranked && unranked == 1) {
				p->rank = 0;
				snprintf(p->name, sizeof(p->name), "rank 0");
			} else {
				p->rank = -1;
				snprintf(p->name, sizeof(p->name), "pid %d", p->pid);
			}
			continue;
		}
		for (j = 0; j < d->nprocs; j++)
			twice |= j != i && !d->procs[j].worker && d->procs[j].rank_from_env &&
				 d->procs[j].rank == p->rank;
		if (twice)
			snprintf(p->name, sizeof(p->name), "rank %d (pid %d)", p->rank, p->pid);
		else
			snprintf(p->name, sizeof(p->name), "rank %d", p->rank);
	}
	for (i = 0; i < d->nprocs; i++) {
		struct dump_proc *p = &d->procs[i];
		int parent;

		if (!p->worker)
			continue;
		parent = find(d, p->worker_of);
		snprintf(p->name, sizeof(p->name), "%.40s worker %d",
			 parent >= 0 ? d->procs[parent].name : "?", p->pid);
		p->rank = -1; /* its parent's rank, not its own */
	}
}

static int order(const void *a, const void *b)
{
	const struct dump_proc *x = a, *y = b;
	int kx = x->worker ? 2 : x->rank >= 0 ? 0 : 1, ky = y->worker ? 2 : y->rank >= 0 ? 0 : 1;

	if (kx != ky)
		return kx - ky;
	if (!kx && x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void dump_procs_sort(struct dump *d)
{
	qsort(d->procs, d->nprocs, sizeof(*d->procs), order);
}
