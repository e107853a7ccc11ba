// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/stall_watch.h"
#include "dump/dump.h"
#include "util/file/output_files.h"
#include "output/seg_output.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/text_sanitize.h"

struct stall_target {
	uint64_t closed;            /* segments it had closed when last looked at */
	uint64_t since_ns;          /* when that count last changed */
	bool covered;               /* in a dump since it last stepped */
};

struct stall_dump {
	char name[64];              /* dump_stallNNNN (.txt, .json) */
	pid_t pid;                  /* the process that stalled first */
	char who[64];
	uint64_t closed;
	uint64_t stalled_ns;
	char verdict[sizeof(((struct dump_verdict *)0)->line)];
	int err;                    /* a file that could not be written */
};

struct stall_watch {
	const char *outdir;
	uint64_t after_ns;
	struct stall_target *t;     /* one per session target slot */
	int nt;
	struct stall_dump dumps[STALL_DUMPS_MAX];
	unsigned int ndumps;
	uint64_t not_dumped;        /* stalls past STALL_DUMPS_MAX */
};

int stall_watch_start(struct session *s, const struct attach_opts *o)
{
	struct stall_watch *w;

	if (o->dump_on_stall_s <= 0)
		return 0;
	w = calloc(1, sizeof(*w));
	if (w)
		w->t = calloc((size_t)s->cap_targets, sizeof(*w->t));
	if (!w || !w->t) {
		free(w);
		log_error("out of memory");
		return -ENOMEM;
	}
	w->outdir = o->outdir;
	w->after_ns = (uint64_t)(o->dump_on_stall_s * 1e9);
	w->nt = s->cap_targets;
	s->stall = w;
	return 0;
}

static int write_one(const struct dump *d, const char *dir, const char *name, bool json)
{
	struct out_file of;
	char file[80];
	int err;

	snprintf(file, sizeof(file), "%s.%s", name, json ? "json" : "txt");
	err = out_open(&of, dir, file);
	if (err)
		return err;
	err = json ? dump_write_json(d, of.f) : dump_write_text(d, of.f);
	if (err) {
		out_abort(&of);
		return err;
	}
	return out_commit(&of);
}

/* One dump of every traced process still there, for the stall of @first. */
static void take(struct session *s, int first, uint64_t now)
{
	struct stall_watch *w = s->stall;
	struct stall_dump *sd;
	struct dump_request req = { 0 };
	struct dump *d = NULL;
	pid_t *pids;
	int i;

	if (w->ndumps == STALL_DUMPS_MAX) {
		w->not_dumped++;
		return;
	}
	pids = calloc((size_t)s->ntargets, sizeof(*pids));
	if (!pids)
		return;
	for (i = 0; i < s->ntargets; i++)
		if (!s->targets[i].exited && !s->targets[i].superseded)
			pids[req.npids++] = s->targets[i].proc->pid;
	req.pids = pids;
	sd = &w->dumps[w->ndumps++];
	snprintf(sd->name, sizeof(sd->name), "dump_stall%04u", w->ndumps - 1);
	sd->pid = s->targets[first].proc->pid;
	seg_output_rank_text(s->targets[first].proc, sd->who, sizeof(sd->who));
	sd->closed = w->t[first].closed;
	sd->stalled_ns = now - w->t[first].since_ns;
	sd->err = dump_take(&req, &d);
	free(pids);
	if (!sd->err) {
		snprintf(sd->verdict, sizeof(sd->verdict), "%s", d->v.line);
		sd->err = write_one(d, w->outdir, sd->name, false);
		if (!sd->err)
			sd->err = write_one(d, w->outdir, sd->name, true);
	}
	if (sd->err)
		log_warn("--dump-on-stall: cannot write %s/%s: %s", w->outdir, sd->name,
			 strerror(-sd->err));
	else
		log_info("--dump-on-stall: PID %d (%s) ended no segment for %.1f s: wrote %s/%s.txt "
			 "and .json: %s", sd->pid, sd->who, (double)sd->stalled_ns / 1e9, w->outdir,
			 sd->name, sd->verdict);
	dump_free(d);
}

void stall_watch_tick(struct session *s)
{
	struct stall_watch *w = s->stall;
	uint64_t now;
	int i, first = -1;

	if (!w)
		return;
	now = clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < s->ntargets && i < w->nt; i++) {
		struct session_target *t = &s->targets[i];
		struct stall_target *st = &w->t[i];

		if (t->closed != st->closed || !st->since_ns) {
			st->closed = t->closed;
			st->since_ns = now;
			st->covered = false;
			continue;
		}
		/* a process that had been stepping (and is still there) stopped */
		if (!t->finished && st->closed && !st->covered && now - st->since_ns >= w->after_ns &&
		    first < 0)
			first = i;
	}
	if (first < 0)
		return;
	take(s, first, now);
	/* the job's other processes stalled with it are in this dump */
	for (i = 0; i < s->ntargets && i < w->nt; i++)
		if (s->targets[i].closed == w->t[i].closed)
			w->t[i].covered = true;
}

void stall_watch_report(const struct session *s)
{
	const struct stall_watch *w = s->stall;
	char clean[sizeof(w->dumps[0].verdict) * 4];
	unsigned int i;

	if (!w)
		return;
	if (!w->ndumps) {
		printf("fvbpf: --dump-on-stall: no process stalled for %.1f s\n",
		       (double)w->after_ns / 1e9);
		return;
	}
	for (i = 0; i < w->ndumps; i++) {
		const struct stall_dump *sd = &w->dumps[i];

		if (sd->err) {
			printf("fvbpf: --dump-on-stall: PID %d (%s) stalled after %llu segments; its "
			       "dump could not be written: %s\n", sd->pid, sd->who,
			       (unsigned long long)sd->closed, strerror(-sd->err));
			continue;
		}
		printf("fvbpf: --dump-on-stall: PID %d (%s) ended no segment for %.1f s after %llu: "
		       "%s/%s.txt and .json\n", sd->pid, sd->who, (double)sd->stalled_ns / 1e9,
		       (unsigned long long)sd->closed, w->outdir, sd->name);
		text_clean_terminal(clean, sizeof(clean), sd->verdict);
		printf("  %s\n", clean);
	}
	if (w->not_dumped)
		printf("fvbpf: --dump-on-stall: %llu later stalls not dumped (at most %d dumps an "
		       "attach)\n", (unsigned long long)w->not_dumped, STALL_DUMPS_MAX);
}

void stall_watch_free(struct session *s)
{
	if (!s->stall)
		return;
	free(s->stall->t);
	free(s->stall);
	s->stall = NULL;
}
