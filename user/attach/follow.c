// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "attach/follow.h"
#include "attach/follow_internal.h"
#include "probes/bpf_setup.h"
#include "util/grow.h"
#include "util/json_writer.h"
#include "util/log.h"
#include "util/serial_arm.h"
#include "proc/proc_rank.h"
#include "proc/proc_read.h"
#include "proc/proc_scan.h"
#include "proc/proc_tree.h"
#include "attach/target.h"
#include "proc/proc_info.h"

#define RESCAN_NS 1000000000ull
#define WAIT_POLL_US 50000

static uint64_t mono_now(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static bool excluded(const struct follow *f, pid_t pid)
{
	size_t i;

	for (i = 0; i < f->nexcluded; i++)
		if (f->excluded[i] == pid)
			return true;
	return false;
}

/* fvbpf, sudo and the shell that ran them have the pattern in their own
 * command lines. */
static int exclude_ancestors(struct follow *f)
{
	pid_t pid = getpid();
	int depth;

	f->excluded = calloc(64, sizeof(*f->excluded));
	if (!f->excluded)
		return -ENOMEM;
	for (depth = 0; depth < 64 && pid > 0; depth++) {
		f->excluded[f->nexcluded++] = pid;
		pid = proc_read_ppid(pid);
	}
	return 0;
}

/*
 * Slurm's programs hold the job's command line in their own (srun, the
 * srun it forks, sbatch, salloc; slurmstepd names the step) but never run
 * a training step: a job's tasks are slurmstepd's children, which match on
 * their own.  An srun inside a batch script has the script's SLURM_PROCID,
 * so matched it was a rank that never began and -n never ended.
 */
static const char *const scheduler_comms[] = {
	"srun", "sbatch", "salloc", "sattach", "slurmstepd",
};

static bool scheduler_program(pid_t pid)
{
	char comm[32];
	size_t i;

	if (proc_read_comm(pid, pid, comm, sizeof(comm)))
		return false;
	for (i = 0; i < sizeof(scheduler_comms) / sizeof(scheduler_comms[0]); i++)
		if (!strcmp(comm, scheduler_comms[i]))
			return true;
	return false;
}

static bool matches(const struct follow *f, pid_t pid)
{
	char cmd[4096];

	if (!f->has_re || excluded(f, pid) || proc_read_cmdline(pid, cmd, sizeof(cmd)) ||
	    regexec(&f->re, cmd, 0, NULL, 0))
		return false;
	return !scheduler_program(pid);
}

static void map_insert(struct session *s, pid_t pid)
{
	uint32_t key = (uint32_t)pid, one = 1;

	if (!s->skel)
		return;
	if (bpf_map_update_elem(bpf_setup_map_fd(s->skel, FVBPF_MAP_TREE), &key, &one, BPF_ANY))
		s->follow->map_full++;
}

static struct tree_proc *add(struct session *s, pid_t pid, pid_t ppid, unsigned long long start,
			     enum tree_origin origin)
{
	struct tree_proc *p;

	p = proc_tree_add(&s->follow->tree, pid, ppid, start, origin, false, mono_now());
	if (!p)
		return NULL;
	if (!p->comm[0] && proc_read_comm(pid, pid, p->comm, sizeof(p->comm)))
		snprintf(p->comm, sizeof(p->comm), "?");
	map_insert(s, pid);
	return p;
}

/* Descendants of the tree's live members not known yet, until a pass
 * finds none: a child forked during the walk shows in the next one. */
static int scan_descendants(struct session *s)
{
	struct follow *f = s->follow;
	struct proc_entry *all;
	struct tree_proc *parent;
	int n, i, added, pass;

	for (pass = 0; pass < 64; pass++) {
		n = proc_scan_all(&all);
		if (n < 0)
			return n;
		added = 0;
		for (i = 0; i < n; i++) {
			if (proc_tree_known(&f->tree, all[i].pid, all[i].start))
				continue;
			parent = proc_tree_find(&f->tree, all[i].ppid);
			if (!parent || (parent->start && all[i].start < parent->start))
				continue;
			if (add(s, all[i].pid, all[i].ppid, all[i].start, TREE_AT_ATTACH))
				added++;
		}
		free(all);
		if (!added)
			break;
	}
	return 0;
}

/* --match: processes whose command line matches and whose parent does
 * not (a matched worker's forked children come as its descendants). */
static int scan_matches(struct session *s, unsigned int *found)
{
	struct follow *f = s->follow;
	struct proc_entry *all;
	int n, i;

	*found = 0;
	n = proc_scan_all(&all);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (proc_tree_known(&f->tree, all[i].pid, all[i].start) || !matches(f, all[i].pid))
			continue;
		if (matches(f, all[i].ppid))
			continue;
		if (add(s, all[i].pid, all[i].ppid, all[i].start, TREE_MATCHED))
			(*found)++;
	}
	free(all);
	return 0;
}

int follow_prepare(struct session *s, const struct attach_opts *o)
{
	struct follow *f = calloc(1, sizeof(*f));
	unsigned long long start;
	uint64_t deadline;
	unsigned int found = 0;
	char err[256];
	pid_t ppid;
	int i, ret;

	if (!f)
		return -ENOMEM;
	s->follow = f;
	/* What events.c and manifest.c call up to, without including us. */
	s->hooks.proc_record = follow_record;
	s->hooks.followed_json = follow_json;
	proc_tree_init(&f->tree);
	f->children = o->children;
	f->max_segments = o->max_segments;
	if (!proc_self_in_init_pidns()) {
		log_error("fvbpf runs inside a PID namespace, where the PIDs of process trees differ "
			  "from the kernel's: run it in the host's (docker run --pid=host, or nsenter -t 1 -p)");
		return -EINVAL;
	}
	if (exclude_ancestors(f))
		return -ENOMEM;
	for (i = 0; i < o->npids; i++) {
		if (proc_read_stat_ppid(o->pids[i], &ppid, &start)) {
			log_error("no process with PID %d: check the PID (ps -p %d)", o->pids[i],
				  o->pids[i]);
			return -ESRCH;
		}
		if (!add(s, o->pids[i], ppid, start, TREE_GIVEN))
			return -ENOMEM;
	}
	if (!o->match)
		return 0;
	f->pattern = o->match;
	ret = regcomp(&f->re, o->match, REG_EXTENDED | REG_NOSUB);
	if (ret) {
		regerror(ret, &f->re, err, sizeof(err));
		log_error("invalid --match '%s': %s (a POSIX extended regular expression)", o->match, err);
		return -EINVAL;
	}
	f->has_re = true;
	deadline = mono_now() + (uint64_t)(o->wait_s * 1e9);
	for (;;) {
		ret = scan_matches(s, &found);
		if (ret)
			return ret;
		if (found || o->npids || mono_now() >= deadline)
			break;
		usleep(WAIT_POLL_US);
	}
	if (!found && !o->npids) {
		if (o->wait_s > 0)
			log_error("no process matched --match '%s' within --wait %.0f s: check the pattern "
				  "against `ps -eo args`, or wait longer", o->match, o->wait_s);
		else
			log_error("no process matches --match '%s': check the pattern against `ps -eo args`, "
				  "or give --wait SECONDS for a job that has not started yet", o->match);
		return -ESRCH;
	}
	log_info("--match '%s': %u process%s", o->match, found, found == 1 ? "" : "es");
	return 0;
}

/* A live process of the tree started by @p: @p is a launcher or a wrapper
 * (`srun bash -c 'python train.py'`, mpirun in a batch script), whose
 * rank variable (SLURM_PROCID) what it started inherited. */
static bool has_live_child(const struct proc_tree *t, const struct tree_proc *p)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->procs[i].ppid == p->pid && !t->procs[i].exited && !t->procs[i].replaced)
			return true;
	return false;
}

/* Rank naming: a process without a rank from its environment is named by
 * its PID (a launcher beside rank 0); a later process with a rank already
 * seen in this attach gets the next restart index. */
/* A live process of the tree (any, or @candidates only: those still
 * starting, launchers and wrappers left out) has a rank in its
 * environment; each one's environment is read once. */
static bool tree_has_ranks(struct session *s, bool candidates)
{
	struct follow *f = s->follow;
	struct rank_info ri;
	size_t i;

	for (i = 0; f && i < f->tree.n; i++) {
		struct tree_proc *p = &f->tree.procs[i];

		if (p->exited || p->replaced || (candidates && p->state != TREE_CANDIDATE))
			continue;
		if (p->rank_env < 0)
			p->rank_env = !proc_read_rank_info(p->pid, &ri) && ri.source != RANK_DEFAULT;
		if (p->rank_env > 0 && !(candidates && has_live_child(&f->tree, p)))
			return true;
	}
	return false;
}

/* Rank variables a scheduler or MPI gives a task, which everything the
 * task starts inherits. */
static bool task_wide_source(enum rank_source src)
{
	return src == RANK_FROM_SLURM || src == RANK_FROM_OMPI || src == RANK_FROM_PMI ||
	       src == RANK_FROM_PMIX;
}

/* @anc started @pid, directly or further up (64 levels at most). */
static bool tree_ancestor(struct proc_tree *tree, pid_t anc, pid_t pid)
{
	struct tree_proc *p = proc_tree_find(tree, pid);
	int depth;

	for (depth = 0; p && depth < 64; depth++) {
		if (p->ppid == anc)
			return true;
		p = proc_tree_find(tree, p->ppid);
	}
	return false;
}

/*
 * @l launches @w: torchrun under srun has the task's SLURM_PROCID, its
 * workers have that and a RANK of their own.  Its rank is not one (it runs
 * no steps: -n would wait for it, and it would take rank 0's name) while it
 * has written nothing.
 */
static bool launches(struct session *s, const struct session_target *l,
		     const struct session_target *w)
{
	return l->proc->rank_from_env && task_wide_source(l->proc->ri.source) && !l->segments &&
	       w->proc->rank_from_env && !task_wide_source(w->proc->ri.source) &&
	       tree_ancestor(&s->follow->tree, l->proc->pid, w->proc->pid);
}

/* @t launches @w (launches()): a launcher, named by PID. */
static void unrank(struct session_target *t, const struct session_target *w)
{
	log_info("PID %d (%s) launches PID %d, whose rank comes from %s: its %s is its "
		 "task's, not a rank; named by PID", t->proc->pid, t->proc->comm, w->proc->pid,
		 rank_source_name(w->proc->ri.source), rank_source_name(t->proc->ri.source));
	t->proc->rank = PROC_NO_RANK;
	t->proc->rank_from_env = false;
	t->proc->name_by_pid = true;
}

/*
 * The rule -p follows too: a process without a rank in its environment is
 * rank 0 by default when it is the only one traced, and is named by its
 * PID beside processes that have ranks (a launcher) or beside another
 * without one.  A rank that joins a process named rank 0 by default takes
 * that name from it (it has written nothing: it runs no steps).  A launcher
 * whose rank came from the scheduler's task (launches()) is named by PID.
 */
static void name_target(struct session *s, struct session_target *t)
{
	int i, others = 0;

	t->proc->restart = 0;
	for (i = 0; i < s->ntargets; i++) {
		others += &s->targets[i] != t && !s->targets[i].finished;
		if (&s->targets[i] != t && !s->targets[i].finished && launches(s, t, &s->targets[i]))
			unrank(t, &s->targets[i]);
	}
	if (!t->proc->rank_from_env) {
		if (others || tree_has_ranks(s, false)) {
			t->proc->rank = PROC_NO_RANK;
			t->proc->name_by_pid = true;
		}
		return;
	}
	for (i = 0; i < s->ntargets; i++) {
		struct proc_target *o = s->targets[i].proc;

		if (&s->targets[i] == t)
			continue;
		if (!s->targets[i].finished && launches(s, &s->targets[i], t))
			unrank(&s->targets[i], t);
		if (o->rank_from_env && o->rank == t->proc->rank)
			t->proc->restart++;
		else if (!o->rank_from_env && !o->name_by_pid && !s->targets[i].segments) {
			o->rank = PROC_NO_RANK;
			o->name_by_pid = true;
		}
	}
}

static void note_latency(struct follow *f, const struct tree_proc *p)
{
	uint64_t d;

	if (p->origin != TREE_FORKED && p->origin != TREE_EXECD)
		return;
	d = mono_now() - p->seen_ns;
	f->attach_latency_sum_ns += d;
	f->attach_latency_n++;
	if (d > f->attach_latency_max_ns)
		f->attach_latency_max_ns = d;
}

static void finish_trace(struct session *s, struct tree_proc *p, int err);

static void trace(struct session *s, struct tree_proc *p)
{
	struct follow *f = s->follow;
	struct session_target *t;
	int slot, err;

	if (s->ntargets == s->cap_targets) {
		p->state = TREE_OVER_LIMIT;
		if (!f->warned_limit)
			log_warn("PID %d (%s) and later processes are not traced: at most %d processes "
				 "per attach; attach a second fvbpf to a subtree (-p PID --children)",
				 p->pid, p->comm, s->cap_targets);
		f->warned_limit = true;
		return;
	}
	slot = s->ntargets;
	t = &s->targets[slot];
	log_errors_demoted = true; /* one process of many: said below */
	err = target_open(s, t, p->pid);
	if (t->opened)
		s->ntargets++;
	if (!err) {
		name_target(s, t);
		target_init(t, f->max_segments);
		err = target_attach_begin(s, t);
	}
	log_errors_demoted = false;
	p->slot = slot;
	if (!err && f->batch && !grow_one(&f->pending, f->npending, &f->pending_cap,
					  sizeof(*f->pending), 16)) {
		f->pending[f->npending++] = (size_t)(p - f->tree.procs);
		return;
	}
	finish_trace(s, p, err);
}

/* The process's attach is over (@err: how): traced, or said why not. */
static void finish_trace(struct session *s, struct tree_proc *p, int err)
{
	struct follow *f = s->follow;
	struct session_target *t = &s->targets[p->slot];
	struct epoll_event ev = { .events = EPOLLIN };

	if (!err) {
		log_errors_demoted = true;
		err = target_attach_end(s, t);
		log_errors_demoted = false;
	}
	if (err) {
		p->state = TREE_ATTACH_FAILED;
		p->slot = -1;
		if (t->opened) {
			t->finished = true;
			t->exited = !proc_alive(p->pid);
		}
		log_warn("PID %d (%s) is not traced: %s", p->pid, p->comm,
			 err == -ESRCH || !proc_alive(p->pid) ? "it exited while fvbpf attached" :
			 err == -EBUSY ? "another fvbpf traces it" : strerror(-err));
		return;
	}
	p->state = TREE_TRACED;

	f->traced++;
	note_latency(f, p);
	if (t->pidfd >= 0 && s->epfd >= 0) {
		ev.data.u32 = (uint32_t)p->slot;
		epoll_ctl(s->epfd, EPOLL_CTL_ADD, t->pidfd, &ev);
	}
}

/* A candidate: gone, a forked copy, traceable now, or not yet. */
static void look_at(struct session *s, struct tree_proc *p)
{
	struct follow *f = s->follow;
	struct tree_proc *parent;
	struct marker_lib *m;
	unsigned long long start;
	bool has_markers;
	uint64_t sig;
	pid_t ppid;
	int err;

	if (proc_read_stat_ppid(p->pid, &ppid, &start) || (p->start && start != p->start) ||
	    !proc_alive(p->pid)) {
		proc_tree_mark_exited(&f->tree, p);
		return;
	}
	sig = proc_maps_signature(p->pid);
	if (sig && sig == p->maps_sig)
		return;
	p->maps_sig = sig;
	m = malloc(sizeof(*m));
	if (!m)
		return;
	err = target_traceable(s, p->pid, m, &has_markers);
	/* Mapped, but its constructor has not run yet (the loader maps every
	 * library first): no control page to attach by.  Look again. */
	if (!err && has_markers && !proc_control_ready(p->pid, m))
		err = -EAGAIN;
	free(m);
	if (err == -EAGAIN)
		p->maps_sig = 0;
	if (err)
		return;
	/* What was read shows the program an exec before now loaded (an exec
	 * during the read included: it found that program's libraries). */
	p->checked_ns = mono_now();
	/* Found alive at attach under a traced parent, with the parent's
	 * program image: a fork, e.g. a DataLoader worker (traced with its
	 * parent, docs/dataloader.md).  A parent still being attached (its
	 * slot taken, the batch's attach not finished) counts as traced. */
	parent = proc_tree_find(&f->tree, p->ppid);
	if (p->origin != TREE_FORKED && p->origin != TREE_EXECD && parent &&
	    (parent->state == TREE_TRACED || parent->state == TREE_FORK_COPY ||
	     (parent->state == TREE_CANDIDATE && parent->slot >= 0)) &&
	    proc_same_image(p->ppid, p->pid) == 1) {
		p->state = TREE_FORK_COPY;
		f->copies++;
		return;
	}
	trace(s, p);
}

static void poll_candidates(struct session *s)
{
	struct proc_tree *tree = &s->follow->tree;
	uint64_t now = mono_now();
	size_t i;

	/* Index order: parents come before their children. */
	for (i = 0; i < tree->n; i++)
		if (proc_tree_due(&tree->procs[i], now))
			look_at(s, &tree->procs[i]);
}

int follow_start(struct session *s)
{
	struct follow *f = s->follow;
	size_t i;
	int err;

	for (i = 0; i < f->tree.n; i++)
		map_insert(s, f->tree.procs[i].pid);
	if (f->children || f->has_re) {
		err = scan_descendants(s);
		if (err) {
			log_error("cannot walk /proc: %s", strerror(-err));
			return err;
		}
	}
	f->last_scan_ns = mono_now();
	f->batch = !serial_arm();
	poll_candidates(s);
	f->batch = false;
	for (i = 0; i < f->npending; i++)
		finish_trace(s, &f->tree.procs[f->pending[i]], 0);
	free(f->pending);
	f->pending = NULL;
	f->npending = f->pending_cap = 0;
	if (!f->traced)
		log_info("no process of the tree maps fvbpf markers or libtorch_cpu yet: %zu "
			 "watched, traced as they map them", f->tree.live);
	return 0;
}

void follow_tick(struct session *s)
{
	struct follow *f = s->follow;
	unsigned int found;

	if (!f)
		return;
	/* A record lost to a full ring: the walk finds the process. */
	if (mono_now() - f->last_scan_ns >= RESCAN_NS) {
		f->last_scan_ns = mono_now();
		scan_descendants(s);
		if (f->has_re)
			scan_matches(s, &found);
	}
	poll_candidates(s);
}

static struct session_target *target_of(struct session *s, const struct tree_proc *p)
{
	return p && p->state == TREE_TRACED && p->slot >= 0 ? &s->targets[p->slot] : NULL;
}

void follow_record(struct session *s, const struct fvbpf_proc_event *ev)
{
	struct follow *f = s->follow;
	struct tree_proc *p, *old;
	struct session_target *t;
	unsigned long long start;
	pid_t ppid;

	if (!f)
		return;
	switch (ev->kind) {
	case FVBPF_PROC_FORK:
		p = proc_tree_fork(&f->tree, (pid_t)ev->pid, (pid_t)ev->ppid,
				   proc_ticks_from_boot_ns(ev->start_boot_ns), mono_now());
		if (p && !p->comm[0] && proc_read_comm(p->pid, p->pid, p->comm, sizeof(p->comm)))
			snprintf(p->comm, sizeof(p->comm), "?");
		if (p && p->state == TREE_FORK_COPY)
			f->copies++;
		break;
	case FVBPF_PROC_EXEC:
		p = proc_tree_exec(&f->tree, (pid_t)ev->pid, ev->hdr.ts_ns, mono_now(), &old);
		if (!p && !old && matches(f, (pid_t)ev->pid) &&
		    !proc_read_stat_ppid((pid_t)ev->pid, &ppid, &start) && !matches(f, ppid))
			p = add(s, (pid_t)ev->pid, ppid, start, TREE_MATCHED);
		if (p)
			proc_read_comm(p->pid, p->pid, p->comm, sizeof(p->comm));
		t = target_of(s, old);
		if (t && !t->finished) {
			/* The program it ran is gone; the PID may become a new target. */
			target_finish(s, t, "exec'd a new program");
			target_detach(t);
			t->superseded = true;
		}
		break;
	case FVBPF_PROC_EXIT:
		proc_tree_exit(&f->tree, (pid_t)ev->pid);
		break;
	}
}

void follow_target_exited(struct session *s, struct session_target *t)
{
	struct follow *f = s->follow;
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->tree.n; i++)
		if (f->tree.procs[i].slot == (int)(t - s->targets))
			proc_tree_mark_exited(&f->tree, &f->tree.procs[i]);
}

bool follow_tree_gone(const struct session *s)
{
	return s->follow && s->follow->tree.live == 0;
}

bool follow_ranks_pending(struct session *s)
{
	return tree_has_ranks(s, true);
}

void follow_free(struct session *s)
{
	struct follow *f = s->follow;

	if (!f)
		return;
	if (f->has_re)
		regfree(&f->re);
	proc_tree_free(&f->tree);
	free(f->excluded);
	free(f);
	s->follow = NULL;
	s->hooks = (struct session_hooks){ 0 };
}
