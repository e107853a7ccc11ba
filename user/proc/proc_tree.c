// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdlib.h>
#include <string.h>

#include "proc/proc_tree.h"

/* Looked at on every loop (20 ms) this long after it appeared or exec'd,
 * when a launcher's child maps its libraries ... */
#define EAGER_NS   (3ull * 1000000000ull)
/* ... then every 100 ms until ... */
#define WARM_NS    (30ull * 1000000000ull)
#define WARM_GAP   (100000000ull)
/* ... then once a second. */
#define LAZY_GAP   (1000000000ull)

void proc_tree_init(struct proc_tree *t)
{
	memset(t, 0, sizeof(*t));
}

void proc_tree_free(struct proc_tree *t)
{
	free(t->procs);
	memset(t, 0, sizeof(*t));
}

struct tree_proc *proc_tree_find(struct proc_tree *t, pid_t pid)
{
	size_t i;

	for (i = t->n; i-- > 0;)
		if (t->procs[i].pid == pid && !t->procs[i].exited && !t->procs[i].replaced)
			return &t->procs[i];
	return NULL;
}

bool proc_tree_known(const struct proc_tree *t, pid_t pid, unsigned long long start)
{
	size_t i;

	for (i = t->n; i-- > 0;)
		if (t->procs[i].pid == pid && (!start || !t->procs[i].start || t->procs[i].start == start))
			return true;
	return false;
}

void proc_tree_mark_exited(struct proc_tree *t, struct tree_proc *p)
{
	if (p->exited)
		return;
	if (!p->replaced)
		t->live--;
	p->exited = true;
}

static struct tree_proc *append(struct proc_tree *t)
{
	struct tree_proc *grown;
	size_t cap;

	if (t->n == PROC_TREE_MAX) {
		t->not_kept++;
		return NULL;
	}
	if (t->n == t->cap) {
		cap = t->cap ? t->cap * 2 : 64;
		if (cap > PROC_TREE_MAX)
			cap = PROC_TREE_MAX;
		grown = realloc(t->procs, cap * sizeof(*grown));
		if (!grown) {
			t->not_kept++;
			return NULL;
		}
		t->procs = grown;
		t->cap = cap;
	}
	memset(&t->procs[t->n], 0, sizeof(t->procs[0]));
	t->live++;
	return &t->procs[t->n++];
}

struct tree_proc *proc_tree_add(struct proc_tree *t, pid_t pid, pid_t ppid,
				unsigned long long start, enum tree_origin origin,
				bool parent_traced, uint64_t now_ns)
{
	struct tree_proc *p = proc_tree_find(t, pid);

	if (p) {
		if (!start || !p->start || p->start == start) {
			if (!p->start)
				p->start = start;
			return p;
		}
		proc_tree_mark_exited(t, p); /* its PID was reused */
	}
	p = append(t);
	if (!p)
		return NULL;
	p->pid = pid;
	p->ppid = ppid;
	p->start = start;
	p->seen_ns = now_ns;
	p->next_check_ns = now_ns;
	p->origin = origin;
	p->state = parent_traced ? TREE_FORK_COPY : TREE_CANDIDATE;
	p->slot = -1;
	p->rank_env = -1;
	return p;
}

struct tree_proc *proc_tree_fork(struct proc_tree *t, pid_t pid, pid_t ppid,
				 unsigned long long start, uint64_t now_ns)
{
	struct tree_proc *parent = proc_tree_find(t, ppid);

	t->forks++;
	if (!parent)
		return NULL;
	/* A copy of a copy still runs the traced program. */
	return proc_tree_add(t, pid, ppid, start, TREE_FORKED,
			     parent->state == TREE_TRACED || parent->state == TREE_FORK_COPY, now_ns);
}

struct tree_proc *proc_tree_exec(struct proc_tree *t, pid_t pid, uint64_t exec_ns,
				 uint64_t now_ns, struct tree_proc **old)
{
	struct tree_proc *p = proc_tree_find(t, pid), *n;
	size_t idx;
	pid_t ppid;
	unsigned long long start;

	t->execs++;
	*old = NULL;
	if (!p)
		return NULL;
	if (p->checked_ns && exec_ns < p->checked_ns)
		return p;
	idx = (size_t)(p - t->procs);
	ppid = p->ppid;
	start = p->start;
	n = append(t);  /* may move the array */
	if (!n)
		return NULL;
	p = &t->procs[idx];
	p->replaced = true;
	t->live--;
	n->pid = pid;
	n->ppid = ppid;
	n->start = start;   /* exec keeps the process, its start too */
	n->seen_ns = now_ns;
	n->next_check_ns = now_ns;
	n->origin = TREE_EXECD;
	n->state = TREE_CANDIDATE;
	n->slot = -1;
	n->rank_env = -1;
	*old = p;
	return n;
}

struct tree_proc *proc_tree_exit(struct proc_tree *t, pid_t pid)
{
	struct tree_proc *p = proc_tree_find(t, pid);

	t->exits++;
	if (p)
		proc_tree_mark_exited(t, p);
	return p;
}

bool proc_tree_due(struct tree_proc *p, uint64_t now_ns)
{
	uint64_t age;

	if (p->state != TREE_CANDIDATE || p->exited || p->replaced || now_ns < p->next_check_ns)
		return false;
	age = now_ns - p->seen_ns;
	p->next_check_ns = now_ns + (age < EAGER_NS ? 0 : age < WARM_NS ? WARM_GAP : LAZY_GAP);
	return true;
}

const char *proc_tree_origin_name(enum tree_origin o)
{
	switch (o) {
	case TREE_GIVEN: return "given";
	case TREE_MATCHED: return "matched";
	case TREE_AT_ATTACH: return "child at attach";
	case TREE_FORKED: return "forked";
	case TREE_EXECD: return "exec'd";
	}
	return "?";
}

const char *proc_tree_state_name(enum tree_state s)
{
	switch (s) {
	case TREE_CANDIDATE: return "no fvbpf markers or libtorch_cpu mapped";
	case TREE_TRACED: return "traced";
	case TREE_FORK_COPY: return "forked from a traced process without exec "
				    "(a DataLoader worker or the like): not traced";
	case TREE_OVER_LIMIT: return "not traced: the limit of traced processes was reached";
	case TREE_ATTACH_FAILED: return "attach failed (exited while fvbpf attached?)";
	}
	return "?";
}
