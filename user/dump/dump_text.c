// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The text form of a dump: the verdict on its first line, then each
 * process and thread.  Everything the target wrote is escaped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dump/dump.h"
#include "dump/verdict.h"
#include "util/text_sanitize.h"

/* @s as a terminal may show it: no control, no invisible character. */
static void esc(FILE *f, const char *s)
{
	size_t n = text_clean_bound(s ? s : "");
	char small[512], *buf = n <= sizeof(small) ? small : malloc(n);

	if (!buf) {
		fputs("?", f);
		return;
	}
	text_clean_terminal(buf, n, s ? s : "");
	fputs(buf, f);
	if (buf != small)
		free(buf);
}

static void py_line(FILE *f, const struct dump_proc *p)
{
	unsigned long v = p->py_version;

	switch (p->py) {
	case DUMP_PY_OK:
		fprintf(f, "  CPython %lu.%lu", (v >> 24) & 0xff, (v >> 16) & 0xff);
		if (v & 0xff) /* 3.10 has no Py_Version: its file name says 3.10 */
			fprintf(f, ".%lu", (v >> 8) & 0xff);
		break;
	case DUMP_PY_NONE:
		fputs("  no CPython", f);
		break;
	case DUMP_PY_UNSUPPORTED:
		fprintf(f, "  CPython %lu.%lu: not walked (3.10 to 3.13 are); native state only",
			(v >> 24) & 0xff, (v >> 16) & 0xff);
		break;
	case DUMP_PY_MISMATCH:
		fputs("  CPython whose layout fvbpf does not recognise: native state only", f);
		break;
	case DUMP_PY_UNREADABLE:
		fputs("  CPython whose thread list could not be read: native state only", f);
		break;
	}
}

static void native_text(FILE *f, const struct dump_native *n)
{
	char call[32], dur[32];

	if (n->call == NATIVE_RUNNING || n->state == 'R') {
		fputs("running", f);
		if (n->cpu >= 0)
			fprintf(f, " (CPU %d)", n->cpu);
		return;
	}
	if (n->call == NATIVE_SYSCALL)
		fprintf(f, "blocked in %s", native_call_name(n, call, sizeof(call)));
	else
		fputs(native_state_name(n->state), f);
	if (n->wchan[0]) {
		fputs(" (", f);
		esc(f, n->wchan);
		fputs(")", f);
	}
	if (n->off_cpu_ns >= 0) {
		dump_fmt_duration(dur, sizeof(dur), n->off_cpu_ns);
		fprintf(f, ", off CPU for %s", dur);
	}
}

static void thread_text(FILE *f, const struct dump_proc *p, const struct dump_thread *t)
{
	unsigned int i;

	fprintf(f, "  thread %d ", t->tid);
	esc(f, t->name);
	fputs(": ", f);
	native_text(f, &t->nat);
	if (t->coll_frame >= 0) {
		fputs("; waits in ", f);
		esc(f, t->collective);
		if (t->group[0])
			fprintf(f, " (group %s)", t->group);
	}
	if (!t->python && p->py == DUMP_PY_OK)
		fputs("; no Python", f);
	fputc('\n', f);
	if (t->nregions) {
		fputs("    regions: ", f);
		for (i = 0; i < t->nregions; i++) {
			fputs(i ? " > " : "", f);
			esc(f, t->regions[i]);
		}
		fputc('\n', f);
	}
	if (t->python && !t->nframes && !(t->py_flags & PYW_FAULT))
		fputs("    (no Python frame)\n", f);
	for (i = 0; i < t->nframes; i++) {
		const struct dump_frame *fr = &t->frames[i];

		fputs("    ", f);
		esc(f, fr->function);
		if (!fr->unreadable) {
			fputs(" (", f);
			esc(f, fr->file);
			if (fr->line > 0)
				fprintf(f, ":%d", fr->line);
			else
				fputs(":?", f);
			fputs(")", f);
		}
		fputc('\n', f);
	}
	if (t->py_flags & PYW_CUT)
		fprintf(f, "    [outer frames cut: more than %d]\n", PYW_DEPTH_MAX);
	if (t->py_flags & PYW_FAULT)
		fputs("    [the frame chain could not be read further]\n", f);
	if (t->py_flags & PYW_TORN)
		fprintf(f, "    [the stack changed under each of %d reads: frames may be of two moments]\n",
			PYW_TRIES);
}

static void proc_text(FILE *f, const struct dump_proc *p)
{
	unsigned int i;

	fputc('\n', f);
	esc(f, p->name);
	if (p->rank >= 0 && !strstr(p->name, "pid ")) /* "rank 1 (pid N)" says it */
		fprintf(f, "  pid %d", p->pid);
	fputs("  ", f);
	esc(f, p->comm);
	if (p->exited && !p->nthreads) {
		fputs(": exited before it could be read\n", f);
		return;
	}
	py_line(f, p);
	fputc('\n', f);
	if (p->exited)
		fputs("  exited during the dump: what was read before is below\n", f);
	if (p->cmdline[0]) {
		fputs("  command: ", f);
		esc(f, p->cmdline);
		fputc('\n', f);
	}
	for (i = 0; i < p->nthreads; i++)
		thread_text(f, p, &p->threads[i]);
	if (p->threads_cut)
		fprintf(f, "  %u more threads not read (at most %d)\n", p->threads_cut, DUMP_THREADS_MAX);
	if (p->pylist.cut)
		fprintf(f, "  [Python thread list cut at %d]\n", PYW_THREADS_MAX);
	if (p->pylist.bad)
		fputs("  [Python thread list not read to its end: a thread state changed under the "
		      "read]\n", f);
	if (p->py_states_unmatched)
		fprintf(f, "  [%u Python thread state%s of no live thread]\n", p->py_states_unmatched,
			p->py_states_unmatched == 1 ? "" : "s");
}

static void absent_text(FILE *f, const struct dump *d)
{
	char doing[512];
	unsigned int i;

	if (d->v.nabsent <= 1)
		return;
	fputs("\nabsent:\n", f);
	for (i = 0; i < d->v.nabsent; i++) {
		const struct dump_absent *a = &d->v.absent[i];

		if (a->proc < 0) {
			fprintf(f, "  rank %d: not dumped\n", a->rank);
			continue;
		}
		verdict_doing(&d->procs[a->proc], doing, sizeof(doing));
		fputs("  ", f);
		esc(f, d->procs[a->proc].name);
		fputs(": ", f);
		esc(f, doing);
		fputc('\n', f);
	}
}

int dump_write_text(const struct dump *d, FILE *f)
{
	unsigned int i, threads = 0;
	char when[64];
	struct tm tm;

	for (i = 0; i < d->nprocs; i++)
		threads += d->procs[i].nthreads;
	gmtime_r(&d->when.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fputs("fvbpf dump: ", f);
	esc(f, d->v.line);
	fputc('\n', f);
	fputs("host ", f);
	esc(f, d->host);
	fprintf(f, ", %s: %u process%s, %u threads, read in %.1f ms without stopping them\n", when,
		d->nprocs, d->nprocs == 1 ? "" : "es", threads, (double)d->took_ns / 1e6);
	absent_text(f, d);
	for (i = 0; i < d->nprocs; i++)
		proc_text(f, &d->procs[i]);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
