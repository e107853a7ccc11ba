// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The bookkeeping of followed process trees (user/proc/proc_tree.c): forks,
 * execs and exits in every order the ring and the /proc walks give them. */
#include <string.h>

#include "proc/proc_tree.h"
#include "unit.h"

#define S 1000000000ull

static void test_fork_of_traced_is_copy(void)
{
	struct proc_tree t;
	struct tree_proc *root, *c, *gc;

	proc_tree_init(&t);
	root = proc_tree_add(&t, 100, 1, 50, TREE_GIVEN, false, 0);
	CHECK(root && root->state == TREE_CANDIDATE && root->slot == -1);
	root->state = TREE_TRACED;
	root->slot = 0;
	c = proc_tree_fork(&t, 101, 100, 60, S);
	CHECK(c && c->state == TREE_FORK_COPY && c->origin == TREE_FORKED);
	/* a copy of a copy still runs the traced program */
	gc = proc_tree_fork(&t, 102, 101, 61, S);
	CHECK(gc && gc->state == TREE_FORK_COPY);
	/* a fork whose parent is not in the tree is not followed */
	CHECK(proc_tree_fork(&t, 103, 999, 62, S) == NULL);
	CHECK_EQ(t.forks, 3u); /* three fork records */
	CHECK_EQ(t.live, 3u);
	proc_tree_free(&t);
}

static void test_exec_replaces(void)
{
	struct proc_tree t;
	struct tree_proc *p, *n, *old;

	proc_tree_init(&t);
	p = proc_tree_add(&t, 100, 1, 50, TREE_GIVEN, false, 0);
	p->state = TREE_TRACED;
	p->slot = 0;
	proc_tree_fork(&t, 101, 100, 60, S);
	/* the forked copy execs: a new candidate in the same PID */
	n = proc_tree_exec(&t, 101, 2 * S, 2 * S, &old);
	CHECK(n && old && old->replaced && n->origin == TREE_EXECD && n->state == TREE_CANDIDATE);
	CHECK_EQ(n->start, 60u); /* exec keeps the process and its start */
	CHECK(proc_tree_find(&t, 101) == n);
	CHECK_EQ(t.live, 2u);
	/* an exec of a PID fvbpf does not follow */
	CHECK(proc_tree_exec(&t, 555, 3 * S, 3 * S, &old) == NULL && old == NULL);
	proc_tree_free(&t);
}

static void test_exec_before_look_is_ignored(void)
{
	struct proc_tree t;
	struct tree_proc *p, *n, *old;

	proc_tree_init(&t);
	p = proc_tree_add(&t, 200, 1, 70, TREE_AT_ATTACH, false, 0);
	p->checked_ns = 5 * S; /* its mappings were read at 5 s, then traced */
	p->state = TREE_TRACED;
	p->slot = 3;
	/* the record of an exec at 4 s comes out of the ring afterwards */
	n = proc_tree_exec(&t, 200, 4 * S, 6 * S, &old);
	CHECK(n == p && old == NULL && p->state == TREE_TRACED && !p->replaced);
	/* one at 7 s is a new program */
	n = proc_tree_exec(&t, 200, 7 * S, 7 * S, &old);
	CHECK(n && n != p && old && old->slot == 3 && old->replaced);
	proc_tree_free(&t);
}

static void test_scan_and_record_agree(void)
{
	struct proc_tree t;
	struct tree_proc *a, *b;

	proc_tree_init(&t);
	proc_tree_add(&t, 100, 1, 50, TREE_GIVEN, false, 0);
	/* the walk finds the child, then its fork record comes */
	a = proc_tree_add(&t, 101, 100, 60, TREE_AT_ATTACH, false, S);
	b = proc_tree_fork(&t, 101, 100, 60, 2 * S);
	CHECK(a == b && t.n == 2);
	CHECK(proc_tree_known(&t, 101, 60));
	CHECK(!proc_tree_known(&t, 101, 61));
	/* the child exits: a zombie the next walk finds is not new */
	proc_tree_exit(&t, 101);
	CHECK(proc_tree_find(&t, 101) == NULL);
	CHECK(proc_tree_known(&t, 101, 60));
	CHECK_EQ(t.live, 1u);
	proc_tree_free(&t);
}

static void test_pid_reuse(void)
{
	struct proc_tree t;
	struct tree_proc *a, *b;

	proc_tree_init(&t);
	proc_tree_add(&t, 100, 1, 50, TREE_GIVEN, false, 0);
	a = proc_tree_fork(&t, 101, 100, 60, S);
	/* its exit was missed (ring full); the PID comes back with another start */
	b = proc_tree_fork(&t, 101, 100, 90, 2 * S);
	CHECK(b && b != &t.procs[1] && t.procs[1].exited && b->start == 90);
	CHECK(proc_tree_find(&t, 101) == b);
	CHECK_EQ(t.live, 2u);
	(void)a;
	/* an exit for a PID never seen counts, changes nothing */
	CHECK(proc_tree_exit(&t, 4242) == NULL);
	CHECK_EQ(t.exits, 1u);
	proc_tree_free(&t);
}

static void test_due_backs_off(void)
{
	struct proc_tree t;
	struct tree_proc *p;

	proc_tree_init(&t);
	p = proc_tree_add(&t, 100, 1, 50, TREE_GIVEN, false, 10 * S);
	CHECK(proc_tree_due(p, 10 * S));
	CHECK(proc_tree_due(p, 10 * S + 20000000)); /* every loop at first */
	CHECK(proc_tree_due(p, 20 * S));             /* then each 100 ms */
	CHECK(!proc_tree_due(p, 20 * S + 50000000));
	CHECK(proc_tree_due(p, 20 * S + 100000000));
	CHECK(proc_tree_due(p, 60 * S));             /* then each second */
	CHECK(!proc_tree_due(p, 60 * S + 500000000));
	CHECK(proc_tree_due(p, 61 * S));
	p->state = TREE_TRACED;
	CHECK(!proc_tree_due(p, 100 * S));
	proc_tree_free(&t);
}

static void test_full(void)
{
	struct proc_tree t;
	unsigned int i;

	proc_tree_init(&t);
	for (i = 0; i < PROC_TREE_MAX; i++)
		CHECK(proc_tree_add(&t, (pid_t)(i + 2), 1, i + 1, TREE_AT_ATTACH, false, 0) != NULL);
	CHECK(proc_tree_add(&t, 1, 0, 1, TREE_AT_ATTACH, false, 0) == NULL);
	CHECK_EQ(t.not_kept, 1u);
	CHECK_EQ(t.n, (size_t)PROC_TREE_MAX);
	proc_tree_free(&t);
}

static void test_names(void)
{
	CHECK_STR(proc_tree_origin_name(TREE_EXECD), "exec'd");
	CHECK(strstr(proc_tree_state_name(TREE_FORK_COPY), "not traced") != NULL);
	CHECK(strstr(proc_tree_state_name(TREE_OVER_LIMIT), "limit") != NULL);
}

int main(void)
{
	RUN(test_fork_of_traced_is_copy);
	RUN(test_exec_replaces);
	RUN(test_exec_before_look_is_ignored);
	RUN(test_scan_and_record_agree);
	RUN(test_pid_reuse);
	RUN(test_due_backs_off);
	RUN(test_full);
	RUN(test_names);
	UNIT_DONE();
}
