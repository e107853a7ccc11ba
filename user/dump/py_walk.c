// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dump/py_walk.h"

/* x86-64 glibc's struct pthread: the TCB points at itself (the TLS ABI) and
 * holds the kernel's tid at 0x2d0 (as proc/python/py_runtime.c checks 3.10's
 * main thread). */
#define GLIBC_PTHREAD_TID 0x2d0
#define NO_CFRAME 0xffff

static int rd64(pid_t pid, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return py_mem_read(pid, addr, v, sizeof(*v));
}

/* The thread's innermost frame (0: none, or unreadable: *@ok false). */
static uint64_t top_frame(const struct py_runtime *r, uint64_t ts, bool *ok)
{
	const struct py_layout *L = r->lay;
	uint64_t v;

	*ok = !rd64(r->pid, ts + L->ts_cframe, &v);
	if (*ok && v && !L->frame_object && L->cf_current != NO_CFRAME)
		*ok = !rd64(r->pid, v + L->cf_current, &v);
	return *ok ? v : 0;
}

/* The span of a frame the walk reads: every field it takes, one read. */
static void window(const struct py_layout *L, unsigned int *lo, unsigned int *hi)
{
	unsigned int a = L->fr_code, b = L->fr_code + 8u;

	if (L->fr_previous < a)
		a = L->fr_previous;
	if (L->fr_instr < a)
		a = L->fr_instr;
	if (L->owner_cstack && L->fr_owner < a)
		a = L->fr_owner;
	if (L->fr_previous + 8u > b)
		b = L->fr_previous + 8u;
	if (L->fr_instr + 8u > b)
		b = L->fr_instr + 8u;
	if (L->owner_cstack && L->fr_owner + 1u > b)
		b = L->fr_owner + 1u;
	*lo = a;
	*hi = b;
}

static uint64_t field(const uint8_t *w, unsigned int off, unsigned int lo)
{
	uint64_t v;

	memcpy(&v, w + (off - lo), sizeof(v));
	return v;
}

/* The fields of the innermost frame a walk saw: compared after it. */
struct top_seen {
	uint64_t frame, code, previous, instr;
};

static bool read_top(const struct py_runtime *r, uint64_t ts, struct top_seen *t)
{
	const struct py_layout *L = r->lay;
	unsigned int lo, hi;
	uint8_t w[128];
	bool ok;

	memset(t, 0, sizeof(*t));
	t->frame = top_frame(r, ts, &ok);
	if (!ok)
		return false;
	if (!t->frame)
		return true;
	window(L, &lo, &hi);
	if (hi - lo > sizeof(w) || py_mem_read(r->pid, t->frame + lo, w, hi - lo))
		return false;
	t->code = field(w, L->fr_code, lo);
	t->previous = field(w, L->fr_previous, lo);
	t->instr = field(w, L->fr_instr, lo);
	return true;
}

/* One walk from @top; what it read of the innermost frame in *@seen. */
static void walk_once(const struct py_runtime *r, uint64_t top, struct pyw_stack *st,
		      struct top_seen *seen)
{
	const struct py_layout *L = r->lay;
	unsigned int lo, hi, steps;
	uint8_t w[128];
	uint64_t frame = top;

	window(L, &lo, &hi);
	st->nframes = 0;
	st->flags &= ~(unsigned int)(PYW_CUT | PYW_FAULT);
	memset(seen, 0, sizeof(*seen));
	seen->frame = top;
	/* C-stack entry frames are stepped over, not kept: the steps bound them */
	for (steps = 0; frame; steps++) {
		uint64_t instr;

		if (st->nframes == PYW_DEPTH_MAX || steps >= 2 * PYW_DEPTH_MAX) {
			st->flags |= PYW_CUT;
			break;
		}
		if (hi - lo > sizeof(w) || py_mem_read(r->pid, frame + lo, w, hi - lo)) {
			st->flags |= PYW_FAULT;
			break;
		}
		instr = field(w, L->fr_instr, lo);
		if (!steps) {
			seen->code = field(w, L->fr_code, lo);
			seen->previous = field(w, L->fr_previous, lo);
			seen->instr = instr;
		}
		if (L->frame_object) /* 3.10's f_lasti is an int */
			instr = (uint32_t)instr;
		if (!L->owner_cstack || w[L->fr_owner - lo] != L->owner_cstack) {
			struct pyw_frame *f = &st->frames[st->nframes++];

			f->addr = frame;
			f->code = field(w, L->fr_code, lo);
			f->instr = instr;
		}
		frame = field(w, L->fr_previous, lo);
	}
}

void pyw_walk(const struct py_runtime *r, struct pyw_stack *st)
{
	struct top_seen before, after;
	bool ok;

	st->flags &= ~(unsigned int)PYW_TORN;
	for (st->tries = 1;; st->tries++) {
		before.frame = top_frame(r, st->tstate, &ok);
		if (!ok) {
			st->nframes = 0;
			st->flags |= PYW_FAULT;
			return;
		}
		walk_once(r, before.frame, st, &before);
		/*
		 * The innermost frame as it was read at the start, still: its
		 * callers were suspended under it the whole time.  A frame
		 * popped and another pushed at the same address (a return and
		 * a call) changes its code, caller or instruction.
		 */
		ok = read_top(r, st->tstate, &after);
		if (ok && !memcmp(&before, &after, sizeof(before)))
			return;
		if (!ok && !st->nframes && (st->flags & PYW_FAULT))
			return; /* unreadable, not changing */
		if (st->tries == PYW_TRIES) {
			st->flags |= PYW_TORN;
			return;
		}
	}
}

/* 3.10 names a thread state's thread by its pthread_t: the TCB that
 * points at itself holds the tid. */
static pid_t tid_of(const struct py_runtime *r, uint64_t name)
{
	uint64_t self;
	uint32_t tid;

	if (!r->lay->frame_object)
		return name > 0 && name < (1u << 30) ? (pid_t)name : 0;
	if (rd64(r->pid, name, &self) || self != name ||
	    py_mem_read(r->pid, name + GLIBC_PTHREAD_TID, &tid, sizeof(tid)) || !tid ||
	    tid >= (1u << 30))
		return 0;
	return (pid_t)tid;
}

static bool seen(const struct pyw_stack *v, unsigned int n, uint64_t ts)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (v[i].tstate == ts)
			return true;
	return false;
}

/* One walk of the thread list: the states found, into @v (room for
 * PYW_THREADS_MAX). */
static unsigned int list_once(const struct py_runtime *r, uint64_t interp, struct pyw_stack *v,
			      struct pyw_list *list)
{
	const struct py_layout *L = r->lay;
	uint64_t ts, back, name;
	unsigned int n = 0;

	memset(list, 0, sizeof(*list));
	if (rd64(r->pid, interp + L->interp_threads, &ts)) {
		list->bad++;
		return 0;
	}
	while (ts) {
		if (n == PYW_THREADS_MAX || seen(v, n, ts)) {
			list->cut++;
			break;
		}
		if (rd64(r->pid, ts + L->ts_interp, &back) || back != interp ||
		    rd64(r->pid, ts + L->ts_native_tid, &name)) {
			list->bad++; /* freed under us, or not a thread state */
			break;
		}
		v[n].tstate = ts;
		v[n].flags = v[n].tries = v[n].nframes = 0;
		v[n].tid = tid_of(r, name);
		if (!v[n].tid)
			v[n].flags |= PYW_NO_TID;
		n++;
		list->states = n;
		if (rd64(r->pid, ts + L->ts_next, &ts)) {
			list->bad++;
			break;
		}
	}
	return n;
}

int pyw_threads(const struct py_runtime *r, struct pyw_stack **out, struct pyw_list *list)
{
	struct pyw_stack *v;
	uint64_t interp;
	unsigned int n = 0, i, tries;

	*out = NULL;
	memset(list, 0, sizeof(*list));
	if (!r->lay || rd64(r->pid, r->runtime + r->lay->rt_interp_head, &interp) || !interp)
		return -EFAULT;
	v = calloc(PYW_THREADS_MAX, sizeof(*v));
	if (!v)
		return -ENOMEM;
	/* a thread that ends during the walk frees its state: walk again */
	for (tries = 0; tries < PYW_TRIES; tries++) {
		n = list_once(r, interp, v, list);
		if (!list->bad)
			break;
	}
	if (!n && list->bad) {
		free(v);
		return -EFAULT;
	}
	for (i = 0; i < n; i++)
		pyw_walk(r, &v[i]);
	/* PYW_THREADS_MAX stacks are 3 MiB: keep the ones found */
	*out = n ? realloc(v, n * sizeof(*v)) : v;
	if (!*out)
		*out = v;
	return (int)n;
}
