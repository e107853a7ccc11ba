// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump/verdict.h"

#define ABSENT_IN_LINE 4 /* absent ranks described in the one line */

/* Appends to a fixed buffer, cutting at its end. */
struct line {
	char *buf;
	size_t len, at;
};

static void put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->at + 1 >= l->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->at, l->len - l->at, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->at = l->at + (size_t)n < l->len ? l->at + (size_t)n : l->len - 1;
}

const struct dump_thread *verdict_thread(const struct dump_proc *p)
{
	unsigned int i;

	if (!p->nthreads)
		return NULL;
	if (p->threads[0].coll_frame >= 0)
		return &p->threads[0];
	for (i = 1; i < p->nthreads; i++)
		if (p->threads[i].coll_frame >= 0)
			return &p->threads[i];
	return &p->threads[0];
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

void verdict_doing(const struct dump_proc *p, char *buf, size_t len)
{
	const struct dump_thread *t = verdict_thread(p);
	struct line l = { buf, len, 0 };
	char call[32], dur[32];

	buf[0] = '\0';
	if (p->exited) {
		put(&l, "exited");
		return;
	}
	if (!t) {
		put(&l, "no thread could be read");
		return;
	}
	if (t->coll_frame >= 0) {
		const struct dump_frame *f = &t->frames[t->coll_frame];

		put(&l, "in %s", t->collective);
		if (t->group[0])
			put(&l, " (group %s)", t->group);
		put(&l, " at %s:%d", base_name(f->file), f->line);
	} else if (t->nframes) {
		const struct dump_frame *f = &t->frames[0];

		put(&l, "in %s at %s:%d", f->function, base_name(f->file), f->line);
	} else {
		put(&l, "%s", t->python ? "in no Python frame" : "without Python");
	}
	if (t->nregions) /* the innermost region it is in */
		put(&l, " (region %s)", t->regions[t->nregions - 1]);
	if (t->tid != p->pid)
		put(&l, " (thread %d)", t->tid);
	if (t->nat.call == NATIVE_RUNNING || t->nat.state == 'R') {
		put(&l, ", running");
		return;
	}
	if (t->nat.call == NATIVE_SYSCALL)
		put(&l, ", blocked in %s", native_call_name(&t->nat, call, sizeof(call)));
	else
		put(&l, ", %s", native_state_name(t->nat.state));
	if (t->nat.off_cpu_ns >= 0) {
		dump_fmt_duration(dur, sizeof(dur), t->nat.off_cpu_ns);
		put(&l, " for %s", dur);
	}
}

static bool participant(const struct dump *d, const struct dump_proc *p)
{
	unsigned int i;
	bool any_rank = false;

	if (p->worker)
		return false;
	for (i = 0; i < d->nprocs; i++)
		any_rank |= !d->procs[i].worker && d->procs[i].rank_from_env;
	return any_rank ? p->rank_from_env : true;
}

/* The collective @p waits in, or NULL. */
static const char *coll_of(const struct dump_proc *p)
{
	const struct dump_thread *t = verdict_thread(p);

	return !p->exited && t && t->coll_frame >= 0 ? t->collective : NULL;
}

/* The collective the most participants wait in (the first seen on a tie). */
static const char *majority(const struct dump *d)
{
	const char *best = NULL, *c;
	unsigned int i, j, n, most = 0;

	for (i = 0; i < d->nprocs; i++) {
		if (!participant(d, &d->procs[i]) || !(c = coll_of(&d->procs[i])))
			continue;
		for (n = 0, j = 0; j < d->nprocs; j++)
			n += participant(d, &d->procs[j]) && coll_of(&d->procs[j]) &&
			     !strcmp(coll_of(&d->procs[j]), c);
		if (n > most) {
			most = n;
			best = c;
		}
	}
	return best;
}

static bool rank_dumped(const struct dump *d, int rank)
{
	unsigned int i;

	for (i = 0; i < d->nprocs; i++)
		if (participant(d, &d->procs[i]) && d->procs[i].rank_from_env &&
		    d->procs[i].rank == rank)
			return true;
	return false;
}

/* The group every waiting rank names, else "" (unknown or not the same). */
static void common_group(struct dump *d)
{
	unsigned int i;

	for (i = 0; i < d->v.nwait; i++) {
		const char *g = verdict_thread(&d->procs[d->v.wait[i]])->group;

		if (!i)
			snprintf(d->v.group, sizeof(d->v.group), "%s", g);
		else if (strcmp(d->v.group, g))
			d->v.group[0] = '\0';
	}
}

static int world_of(const struct dump *d)
{
	unsigned int i;
	int w = -1;

	for (i = 0; i < d->nprocs; i++)
		if (participant(d, &d->procs[i]) && d->procs[i].rank_from_env &&
		    d->procs[i].world_size > w)
			w = d->procs[i].world_size;
	return w;
}

static int add_absent(struct dump_verdict *v, int proc, int rank, size_t cap)
{
	if (v->nabsent == cap)
		return -ENOMEM;
	v->absent[v->nabsent].proc = proc;
	v->absent[v->nabsent].rank = rank;
	v->nabsent++;
	return 0;
}

/* "ranks 0, 2-5" or "pids 11, 12" of the listed processes. */
static void put_names(struct line *l, const struct dump *d, const int *procs, unsigned int n,
		      bool ranks)
{
	unsigned int i, j;

	if (!ranks) {
		for (i = 0; i < n; i++)
			put(l, "%s%s", i ? ", " : "", d->procs[procs[i]].name);
		return;
	}
	put(l, "%s ", n == 1 ? "rank" : "ranks");
	for (i = 0; i < n; i = j + 1) {
		int first = d->procs[procs[i]].rank;

		for (j = i; j + 1 < n && d->procs[procs[j + 1]].rank == d->procs[procs[j]].rank + 1; j++)
			;
		if (j >= i + 2)
			put(l, "%s%d-%d", i ? ", " : "", first, d->procs[procs[j]].rank);
		else if (j == i + 1)
			put(l, "%s%d, %d", i ? ", " : "", first, d->procs[procs[j]].rank);
		else
			put(l, "%s%d", i ? ", " : "", first);
	}
}

static void put_absent(struct line *l, const struct dump *d, bool ranks)
{
	const struct dump_verdict *v = &d->v;
	char doing[512];
	unsigned int i;

	if (v->nabsent == 1) {
		const struct dump_absent *a = &v->absent[0];

		if (a->proc < 0) {
			put(l, "; rank %d is absent: not dumped", a->rank);
			return;
		}
		verdict_doing(&d->procs[a->proc], doing, sizeof(doing));
		put(l, "; %s is absent: %s", d->procs[a->proc].name, doing);
		return;
	}
	put(l, "; %u %s absent:", v->nabsent, ranks ? "ranks are" : "processes are");
	for (i = 0; i < v->nabsent && i < ABSENT_IN_LINE; i++) {
		const struct dump_absent *a = &v->absent[i];

		if (a->proc < 0) {
			put(l, "%s rank %d not dumped", i ? ";" : "", a->rank);
			continue;
		}
		verdict_doing(&d->procs[a->proc], doing, sizeof(doing));
		put(l, "%s %s %s", i ? ";" : "", d->procs[a->proc].name, doing);
	}
	if (v->nabsent > ABSENT_IN_LINE)
		put(l, "; %u more (below)", v->nabsent - ABSENT_IN_LINE);
}

static void write_line(struct dump *d, bool ranks)
{
	struct dump_verdict *v = &d->v;
	struct line l = { v->line, sizeof(v->line), 0 };
	const char *who = ranks ? "rank" : "process";

	if (!v->participants) {
		put(&l, "no process could be read");
		return;
	}
	if (!v->waiting) {
		put(&l, "no %s waits in a collective", who);
		return;
	}
	put_names(&l, d, v->wait, v->nwait, ranks);
	put(&l, " %s in %s", v->nabsent || v->nwait == 1 ? (v->nwait == 1 ? "waits" : "wait")
						       : "all wait", v->collective);
	if (v->group[0])
		put(&l, " (group %s)", v->group);
	if (!v->nabsent)
		put(&l, ": none is absent");
	else
		put_absent(&l, d, ranks);
}

int verdict_make(struct dump *d)
{
	struct dump_verdict *v = &d->v;
	const char *c = majority(d), *pc;
	unsigned int i;
	size_t cap;
	int world = world_of(d), r;
	bool ranks = false;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < d->nprocs; i++) {
		v->participants += participant(d, &d->procs[i]);
		ranks |= participant(d, &d->procs[i]) && d->procs[i].rank_from_env;
	}
	if (world > VERDICT_NOT_DUMPED_MAX)
		world = VERDICT_NOT_DUMPED_MAX;
	cap = d->nprocs + (world > 0 ? (size_t)world : 0);
	v->wait = calloc(d->nprocs ? d->nprocs : 1, sizeof(*v->wait));
	v->absent = calloc(cap ? cap : 1, sizeof(*v->absent));
	if (!v->wait || !v->absent)
		return -ENOMEM;
	if (c) {
		v->waiting = true;
		snprintf(v->collective, sizeof(v->collective), "%s", c);
		for (i = 0; i < d->nprocs; i++) {
			if (!participant(d, &d->procs[i]))
				continue;
			pc = coll_of(&d->procs[i]);
			if (pc && !strcmp(pc, v->collective))
				v->wait[v->nwait++] = (int)i;
			else if (add_absent(v, (int)i, d->procs[i].rank, cap))
				return -ENOMEM;
		}
		common_group(d);
		/* ranks of the world that were not dumped: absent from here */
		for (r = 0; ranks && r < world; r++)
			if (!rank_dumped(d, r) && add_absent(v, -1, r, cap))
				return -ENOMEM;
	}
	write_line(d, ranks);
	return 0;
}

void verdict_free(struct dump_verdict *v)
{
	free(v->wait);
	free(v->absent);
	v->wait = NULL;
	v->absent = NULL;
}
