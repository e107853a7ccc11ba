// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dump/dump.h"
#include "dump/dump_procs.h"
#include "dump/frames_say.h"
#include "dump/py_frames.h"
#include "dump/py_guess.h"
#include "dump/py_nscheck.h"
#include "dump/verdict.h"
#include "proc/proc_rank.h"
#include "proc/proc_read.h"
#include "proc/proc_scan.h"
#include "proc/python/py_runtime.h"
#include "util/clock.h"
#include "util/log.h"

static int tid_order(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* The process's threads now, the main thread first: the count, or -errno. */
static int list_tids(pid_t pid, pid_t *tids, unsigned int *cut)
{
	char path[64];
	struct dirent *de;
	unsigned int n = 0, i;
	DIR *dir;
	long v;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -ESRCH;
	while ((de = readdir(dir))) {
		char *end;

		v = strtol(de->d_name, &end, 10);
		if (*end || v <= 0 || v >= (1L << 30))
			continue;
		if (n == DUMP_THREADS_MAX) {
			(*cut)++;
			continue;
		}
		tids[n++] = (pid_t)v;
	}
	closedir(dir);
	qsort(tids, n, sizeof(*tids), tid_order);
	for (i = 0; i < n; i++)
		if (tids[i] == pid && i) {
			memmove(tids + 1, tids, i * sizeof(*tids));
			tids[0] = pid;
			break;
		}
	return (int)n;
}

static enum dump_py py_status(int err)
{
	switch (err) {
	case 0: return DUMP_PY_OK;
	case -ENOTSUP: return DUMP_PY_UNSUPPORTED;
	case -EPROTO: return DUMP_PY_MISMATCH;
	default: return DUMP_PY_NONE;
	}
}

#ifdef FVBPF_TEST_HOOKS
/* tests: a pause inside each process's dump, for a process to exit in it */
static void test_pause(pid_t pid)
{
	const char *v = getenv("FVBPF_TEST_DUMP_PAUSE_MS");
	struct timespec ts;
	long ms = v ? strtol(v, NULL, 10) : 0;

	if (ms <= 0 || ms > 60000)
		return;
	log_info("test: pausing %ld ms in the dump of PID %d", ms, pid);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}
#else
static void test_pause(pid_t pid)
{
	(void)pid;
}
#endif

/* A thread state names its thread as the process's own PID namespace
 * numbers it (a container's): NSpid's last field. */
static pid_t ns_tid(pid_t pid, pid_t tid)
{
	char path[64], buf[4096], *p, *end;
	long v = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (proc_read_file(path, buf, sizeof(buf)) < 0 || !(p = strstr(buf, "\nNSpid:")))
		return tid;
	for (p += 7; *p && *p != '\n';) {
		long x = strtol(p, &end, 10);

		if (end == p)
			break;
		v = x;
		p = end;
	}
	return v > 0 && v < (1L << 30) ? (pid_t)v : tid;
}

static struct dump_thread *thread_of(struct dump_proc *p, pid_t tid)
{
	unsigned int i;

	for (i = 0; tid && i < p->nthreads; i++)
		if (p->threads[i].ns_tid == tid)
			return &p->threads[i];
	return NULL;
}

/* Every thread state's frames onto its thread. */
static int python_threads(struct dump_proc *p, const struct py_runtime *rt)
{
	struct pyf_cache *cache;
	struct pyw_stack *st;
	int n, i, err = 0;

	n = pyw_threads(rt, &st, &p->pylist);
	if (n < 0) {
		p->py = DUMP_PY_UNREADABLE;
		return n == -ENOMEM ? n : 0;
	}
	cache = pyf_cache_new(rt);
	for (i = 0; cache && i < n && !err; i++) {
		struct dump_thread *t = thread_of(p, st[i].tid);

		if (!t || t->python) {
			p->py_states_unmatched++; /* its thread ended, or a state not yet cleared */
			continue;
		}
		t->python = true;
		t->py_flags = st[i].flags;
		err = pyf_resolve(cache, &st[i], t);
		if (!err)
			frames_say(rt, &st[i], t);
	}
	if (!cache)
		err = -ENOMEM;
	pyf_cache_free(cache);
	free(st);
	return err;
}

static bool still_there(const struct dump_proc *p)
{
	unsigned long long start;
	char state;

	return !proc_read_stat(p->pid, &state, &start) && start == p->start && state != 'Z' &&
	       state != 'X';
}

static int read_proc(struct dump_proc *p, struct sched_now *now)
{
	struct py_runtime *rt = NULL;
	struct rank_info ri;
	pid_t *tids = NULL;
	int n, i, err = 0;
	bool own_ns;

	p->rank = -1;
	p->world_size = -1;
	p->py = DUMP_PY_NONE;
	if (proc_read_stat_ppid(p->pid, &p->ppid, &p->start) || !proc_alive(p->pid)) {
		p->exited = true;
		return 0;
	}
	if (proc_read_comm(p->pid, p->pid, p->comm, sizeof(p->comm)))
		snprintf(p->comm, sizeof(p->comm), "?");
	proc_read_cmdline(p->pid, p->cmdline, sizeof(p->cmdline));
	if (!proc_read_rank_info(p->pid, &ri) && ri.source != RANK_DEFAULT) {
		p->rank = ri.rank;
		p->rank_from_env = true;
	}
	p->world_size = ri.world_size;
	own_ns = proc_ns_pid(p->pid) != p->pid;
	tids = malloc(DUMP_THREADS_MAX * sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	n = list_tids(p->pid, tids, &p->threads_cut);
	if (n < 0)
		n = 0;
	p->threads = calloc(n ? (size_t)n : 1, sizeof(*p->threads));
	if (!p->threads) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		struct dump_thread *t = &p->threads[p->nthreads];

		t->tid = tids[i];
		t->ns_tid = own_ns ? ns_tid(p->pid, tids[i]) : tids[i];
		t->coll_frame = -1;
		if (native_read(p->pid, tids[i], now, &t->nat))
			continue; /* ended since the list */
		if (proc_read_comm(p->pid, tids[i], t->name, sizeof(t->name)))
			snprintf(t->name, sizeof(t->name), "?");
		p->nthreads++;
	}
	rt = calloc(1, sizeof(*rt));
	if (!rt) {
		err = -ENOMEM;
		goto cleanup;
	}
	p->py = py_status(py_runtime_find(p->pid, rt));
	if (p->py == DUMP_PY_MISMATCH && own_ns && py_nscheck(rt, proc_ns_pid(p->pid)))
		p->py = DUMP_PY_OK;
	p->py_version = rt->version;
	snprintf(p->py_path, sizeof(p->py_path), "%s", rt->path);
	/* a CPython without a layout here (3.9 and older): named all the same */
	if (p->py == DUMP_PY_NONE &&
	    (p->py_version = py_guess_version(p->pid, p->py_path, sizeof(p->py_path))))
		p->py = DUMP_PY_UNSUPPORTED;
	test_pause(p->pid);
	if (p->py == DUMP_PY_OK)
		err = python_threads(p, rt);
cleanup:
	if (!err && !still_there(p))
		p->exited = true;
	free(rt);
	free(tids);
	return err;
}

static void proc_free(struct dump_proc *p)
{
	unsigned int i;

	for (i = 0; p->threads && i < p->nthreads; i++)
		dump_frames_free(p->threads[i].frames, p->threads[i].nframes);
	free(p->threads);
}

void dump_free(struct dump *d)
{
	unsigned int i;

	if (!d)
		return;
	for (i = 0; i < d->nprocs; i++)
		proc_free(&d->procs[i]);
	free(d->procs);
	verdict_free(&d->v);
	free(d);
}

int dump_take(const struct dump_request *req, struct dump **out)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	struct sched_now *now = NULL;
	unsigned int npids = req->npids, i;
	pid_t *pids = NULL;
	struct dump *d;
	bool cut = false;
	int err = 0;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	clock_gettime(CLOCK_REALTIME, &d->when);
	if (gethostname(d->host, sizeof(d->host) - 1))
		snprintf(d->host, sizeof(d->host), "?");
	if (req->children) {
		err = dump_procs_expand(req->pids, req->npids, &pids, &npids, &cut);
		if (err)
			goto fail;
		if (cut)
			log_warn("more than %d processes: the dump covers the first %d", DUMP_PROCS_MAX,
				 DUMP_PROCS_MAX);
	}
	if (npids > DUMP_PROCS_MAX)
		npids = DUMP_PROCS_MAX;
	d->procs = calloc(npids ? npids : 1, sizeof(*d->procs));
	now = sched_now_new();
	if (!d->procs || !now) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < npids && !err; i++) {
		d->procs[i].pid = pids ? pids[i] : req->pids[i];
		d->nprocs++;
		err = read_proc(&d->procs[i], now);
		d->exited += d->procs[i].exited;
	}
	if (err)
		goto fail;
	dump_procs_name(d);
	dump_procs_sort(d);
	err = verdict_make(d);
	if (err)
		goto fail;
	d->took_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	sched_now_free(now);
	free(pids);
	*out = d;
	return 0;
fail:
	log_error("cannot dump: %s", strerror(-err));
	sched_now_free(now);
	free(pids);
	dump_free(d);
	return err;
}

void dump_fmt_duration(char *buf, size_t len, int64_t ns)
{
	double s = (double)ns / 1e9;

	if (ns < 0)
		snprintf(buf, len, "?");
	else if (s < 1)
		snprintf(buf, len, "%.0f ms", s * 1e3);
	else if (s < 600)
		snprintf(buf, len, "%.1f s", s);
	else if (s < 7200)
		snprintf(buf, len, "%.0f min", s / 60);
	else
		snprintf(buf, len, "%.1f h", s / 3600);
}
