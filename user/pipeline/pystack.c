// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pystack.h"
#include "util/grow.h"

void pystack_table_init(struct pystack_table *t, struct name_table *names)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	t->names = names;
}

void pystack_table_free(struct pystack_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->e[i]);
	free(t->e);
	charge_hook_give(t->charge, t->charged);
	pthread_mutex_destroy(&t->lock);
	memset(t, 0, sizeof(*t));
}

const struct pystack_entry *pystack_get(struct pystack_table *t, uint32_t id)
{
	const struct pystack_entry *e = NULL;

	pthread_mutex_lock(&t->lock);
	if (id && id <= t->n)
		e = t->e[id - 1];
	pthread_mutex_unlock(&t->lock);
	return e;
}

/* The new entry's id, 0 when refused. */
static uint32_t table_add(struct pystack_table *t, struct pystack_entry *e)
{
	uint32_t id = 0;

	pthread_mutex_lock(&t->lock);
	if (t->n < PYSTACK_MAX_STACKS && !grow_one(&t->e, t->n, &t->cap, sizeof(*t->e), 64)) {
		t->e[t->n++] = e;
		id = (uint32_t)t->n;
	}
	pthread_mutex_unlock(&t->lock);
	return id;
}

int pystack_target_init(struct pystack_target *pt, pid_t pid)
{
	memset(pt, 0, sizeof(*pt));
	pt->status = py_runtime_find(pid, &pt->rt);
	return pt->status;
}

void pystack_target_free(struct pystack_target *pt)
{
	size_t i;

	for (i = 0; i < pt->ncodes; i++)
		py_code_free(&pt->codes[i].c);
	free(pt->codes);
	addr_cache_free(&pt->code_ix);
	addr_cache_free(&pt->raw);
	for (i = 0; i < pt->nseen; i++)
		free(pt->seen[i].frames);
	free(pt->seen);
	fwd_link_free(&pt->fwd);
	charge_hook_give(pt->charge, pt->charged);
	memset(pt, 0, sizeof(*pt));
}

/* Charge @bytes to the table's share, for the table (@own: the entries,
 * which live as long as it) or for the target: false when refused
 * (counted). */
static bool charge(struct pystack_table *tab, struct pystack_target *pt, uint64_t bytes,
		   bool own)
{
	if (charge_hook_take(tab->charge, bytes)) {
		pt->n.refused++;
		return false;
	}
	if (!tab->charge)
		return true;
	if (own) {
		tab->charged += bytes;
	} else {
		pt->charge = tab->charge;
		pt->charged += bytes;
	}
	return true;
}

/* Give back what charge(@own) took for an entry not kept after all. */
static void uncharge_own(struct pystack_table *tab, uint64_t bytes)
{
	if (!tab->charge)
		return;
	charge_hook_give(tab->charge, bytes);
	tab->charged -= bytes;
}

/* What a code object kept costs: its strings, line table and entries. */
static uint64_t code_cost(const struct py_code *c)
{
	return sizeof(struct pystack_code) + 32 /* its cache entry */ + c->ntable +
	       (c->file ? strlen(c->file) + 1 : 0) + (c->name ? strlen(c->name) + 1 : 0);
}

/* The code object at @addr, read once; NULL when it cannot be kept. */
static const struct pystack_code *code_of(struct pystack_table *tab, struct pystack_target *pt,
					  uint64_t addr)
{
	uint64_t ix = addr_cache_get(&pt->code_ix, addr);
	struct pystack_code *pc;

	if (ix)
		return &pt->codes[ix - 1];
	if (pt->ncodes >= PYSTACK_MAX_CODES ||
	    grow_one(&pt->codes, pt->ncodes, &pt->capcodes, sizeof(*pt->codes), 64)) {
		pt->n.refused++;
		return NULL;
	}
	pc = &pt->codes[pt->ncodes];
	pc->err = (int)py_code_read(&pt->rt, addr, &pc->c);
	if (!charge(tab, pt, code_cost(&pc->c), false)) {
		py_code_free(&pc->c);
		return NULL;
	}
	if (pc->err == PY_CODE_NOT_CODE || pc->err == PY_CODE_BAD_STRING)
		pt->n.bad_code++;
	else if (pc->err == PY_CODE_HUGE_TABLE)
		pt->n.huge_tables++;
	else if (pc->err != PY_CODE_OK)
		pt->n.unreadable++;
	if (addr_cache_put(&pt->code_ix, addr, pt->ncodes + 1)) {
		py_code_free(&pc->c);
		pt->n.refused++;
		return NULL;
	}
	return &pt->codes[pt->ncodes++];
}

static uint64_t raw_hash(const struct fvbpf_pystack_event *ev, uint32_t n)
{
	const uint8_t *p = (const uint8_t *)ev->frames;
	uint64_t h = 0xcbf29ce484222325ULL ^ n ^ ((uint64_t)ev->flags << 32);
	size_t i;

	for (i = 0; i < n * sizeof(ev->frames[0]); i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h ? h : 1;
}

static void frame_of(struct pystack_table *tab, struct pystack_target *pt,
		     const struct fvbpf_py_frame *raw, struct pystack_frame *f)
{
	const struct pystack_code *pc = code_of(tab, pt, raw->code);
	char buf[48];

	if (!pc || (pc->err != PY_CODE_OK && pc->err != PY_CODE_HUGE_TABLE)) {
		snprintf(buf, sizeof(buf), "[unreadable code 0x%llx]", (unsigned long long)raw->code);
		f->func = name_table_intern(tab->names, buf);
		f->file = 0;
		f->line = f->firstline = 0;
		pt->n.frames_unknown++;
		return;
	}
	f->func = name_table_intern(tab->names, pc->c.name);
	f->file = name_table_intern(tab->names, pc->c.file);
	f->firstline = pc->c.firstlineno;
	f->line = py_code_line(&pt->rt, &pc->c, raw->instr);
	if (!f->line)
		pt->n.frames_unknown++;
}

static uint32_t intern(struct pystack_table *tab, struct pystack_target *pt,
		       const struct fvbpf_pystack_event *ev, uint32_t n)
{
	uint64_t h = raw_hash(ev, n), ix = addr_cache_get(&pt->raw, h), id, cost;
	struct pystack_entry *e;
	struct pystack_seen *sn;
	uint32_t i;

	if (ix) {
		sn = &pt->seen[ix - 1];
		if (sn->n == n && sn->flags == ev->flags &&
		    !memcmp(sn->frames, ev->frames, n * sizeof(ev->frames[0])))
			return sn->id;
		/* another stack with its hash: a new entry, not cached */
	}
	cost = sizeof(*e) + n * sizeof(e->f[0]);
	if (!charge(tab, pt, cost, true))
		return 0;
	e = malloc(cost);
	if (!e) {
		uncharge_own(tab, cost);
		return 0;
	}
	e->n = 0;
	e->flags = ev->flags;
	for (i = 0; i < n; i++)
		if (ev->frames[i].code) /* 0: a C entry frame (3.12+), not Python */
			frame_of(tab, pt, &ev->frames[i], &e->f[e->n++]);
	id = table_add(tab, e);
	if (!id) {
		free(e);
		uncharge_own(tab, cost);
		pt->n.refused++;
		return 0;
	}
	pt->n.stacks++;
	if (addr_cache_get(&pt->raw, h) ||
	    grow_one(&pt->seen, pt->nseen, &pt->capseen, sizeof(*pt->seen), 64))
		return (uint32_t)id; /* not cached: the next same stack is a new entry */
	/* its raw frames kept to compare the next one with */
	if (!charge(tab, pt, sizeof(*sn) + 32 + n * sizeof(ev->frames[0]), false))
		return (uint32_t)id;
	sn = &pt->seen[pt->nseen];
	sn->frames = malloc(n * sizeof(ev->frames[0]) + 1);
	if (!sn->frames || addr_cache_put(&pt->raw, h, pt->nseen + 1)) {
		free(sn->frames);
		pt->n.refused++;
		return (uint32_t)id;
	}
	memcpy(sn->frames, ev->frames, n * sizeof(ev->frames[0]));
	sn->id = (uint32_t)id;
	sn->n = n;
	sn->flags = ev->flags;
	pt->nseen++;
	return (uint32_t)id;
}

void pystack_record(struct pystack_table *tab, struct pystack_target *pt,
		    const struct fvbpf_pystack_event *ev, size_t size)
{
	uint32_t n = ev->nframes, slot = ev->hdr.tid % PYSTACK_PENDING;

	pt->n.records++;
	if (pt->status || n > FVBPF_PY_DEPTH_MAX || size < 32 + (size_t)n * sizeof(ev->frames[0]))
		return;
	pt->pend[slot].tid = ev->hdr.tid;
	pt->pend[slot].ts = ev->hdr.ts_ns;
	pt->pend[slot].id = intern(tab, pt, ev, n);
}

uint32_t pystack_take(struct pystack_target *pt, uint32_t tid, uint64_t ts)
{
	uint32_t slot = tid % PYSTACK_PENDING, id = pt->pend[slot].id;

	if (!id || pt->pend[slot].tid != tid || pt->pend[slot].ts != ts)
		return 0;
	pt->n.matched++;
	pt->pend[slot].id = 0;
	return id;
}

uint32_t pystack_take_op(struct pystack_target *pt, uint32_t tid, uint64_t ts, bool same)
{
	uint32_t slot = tid % PYSTACK_PENDING, id;

	if (same) {
		id = pt->pend[slot].op_tid == tid ? pt->pend[slot].op_id : 0;
		pt->n.same++;
		pt->n.same_lost += !id;
		return id;
	}
	id = pystack_take(pt, tid, ts);
	pt->pend[slot].op_tid = tid;
	pt->pend[slot].op_id = id;
	return id;
}

void seg_slice_set_stack(struct segment *seg, uint32_t tid, uint64_t ts, uint32_t stack)
{
	size_t i;

	/* the begin just added: the newest slices first */
	for (i = seg ? seg->nslices : 0; i > 0; i--) {
		struct seg_slice *sl = &seg->slices[i - 1];

		if (sl->tid == tid && sl->start_ns == ts && !sl->stack) {
			sl->stack = stack;
			return;
		}
		if (seg->nslices - i >= 64)
			return;
	}
}
