// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Draining a target's fast-path rings (fvbpf_fast.h).  The rings are the
 * target's memory: each record is copied out before it is checked, a ring
 * whose positions or records make no sense is skipped to its head and
 * counted, and the memfd is mapped only when sealed at its size (a
 * truncation could otherwise fault our reads).
 *
 * Order: each ring is in time order; the rings are merged by timestamp,
 * and the BPF consumer drains the records older than each BPF record
 * before handling it, so a thread's operators and its CUDA calls, markers
 * and scopes arrive in the order they happened.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fvbpf_events.h"
#include "fvbpf_fast.h"
#include "fvbpf_pystack.h"
#include "model/session.h"
#include "pipeline/torch/callback_ops.h"
#include "pipeline/api_events.h"
#include "pipeline/windows.h"
#include "pipeline/pystack.h"
#include "pipeline/torch/torch_events.h"
#include "pipeline/torch/torch_pairing.h"
#include "probes/torch_ops.h"
#include "probes/torch_probes.h"
#include "util/clock.h"
#include "pipeline/drops.h"
#include "proc/proc_info.h"

#define SEALS_WANTED (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static struct fvbpf_fast_ring *ring_at(const struct callback_ops *f, uint32_t i)
{
	return (struct fvbpf_fast_ring *)(f->map + fvbpf_fast_ring_off(i));
}

int callback_ops_open(struct callback_ops *f, pid_t pid, int fd, uint64_t bytes)
{
	const struct fvbpf_fast_hdr *h;
	char path[64];
	struct stat st;
	void *p;
	int mfd, seals, err = 0;

	if (fd < 0 || bytes != FVBPF_FAST_BYTES)
		return -EPROTO;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	/* O_NONBLOCK: whatever the target put at that number, no open blocks */
	mfd = open(path, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	seals = fcntl(mfd, F_GET_SEALS);
	if (fstat(mfd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != bytes ||
	    seals < 0 || (seals & SEALS_WANTED) != SEALS_WANTED)
		err = -EPROTO;
	p = err ? MAP_FAILED : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (!err && p == MAP_FAILED)
		err = -errno;
	close(mfd);
	if (err)
		return err;
	h = p;
	if (h->magic != FVBPF_FAST_MAGIC || h->version != FVBPF_FAST_VERSION ||
	    h->nthreads != FVBPF_FAST_THREADS || h->ring_bytes != FVBPF_FAST_RING_BYTES) {
		munmap(p, bytes);
		return -EPROTO;
	}
	f->names = calloc(FAST_NAME_SLOTS, sizeof(*f->names));
	f->stack = malloc(FVBPF_FAST_THREADS * sizeof(*f->stack));
	f->api = malloc(FVBPF_FAST_THREADS * sizeof(*f->api));
	if (!f->names || !f->stack || !f->api) {
		free(f->names);
		free(f->stack);
		free(f->api);
		f->names = NULL;
		f->stack = NULL;
		f->api = NULL;
		munmap(p, bytes);
		return -ENOMEM;
	}
	f->map = p;
	f->bytes = bytes;
	f->nrings = FVBPF_FAST_THREADS;
	/* what an earlier attach left unread or lost is not ours */
	callback_ops_rebase(f, 0);
	return 0;
}

void callback_ops_rebase(struct callback_ops *f, uint64_t from_ns)
{
	const struct fvbpf_fast_hdr *h = (const struct fvbpf_fast_hdr *)f->map;
	struct fvbpf_fast_ring *r;
	uint32_t i;

	if (!f->map)
		return;
	f->no_ring = h->no_ring;
	f->late = h->late;
	f->outside = h->outside;
	f->ring_drops = f->base_drops = f->early = 0;
	memset(f->early_open, 0, sizeof(f->early_open));
	f->from_ns = from_ns;
	f->next_ts = 0;
	for (i = 0; i < f->nrings; i++) {
		r = ring_at(f, i);
		f->base_drops += r->drops;
		__atomic_store_n(&r->tail, __atomic_load_n(&r->head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
	}
}

/* A STACK record of @size bytes at @at into @ev, as BPF's record: 0, or
 * -1 when it makes no sense. */
static int copy_stack(struct fvbpf_pystack_event *ev, const uint8_t *at, uint32_t size)
{
	struct fvbpf_fast_stack h;

	if (size < FVBPF_FAST_STACK_SIZE)
		return -1;
	memcpy(&h, at, sizeof(h));
	if (!h.nframes || h.nframes > FVBPF_PY_DEPTH_MAX || h.size != size ||
	    size != FVBPF_FAST_STACK_SIZE + h.nframes * sizeof(ev->frames[0]))
		return -1;
	ev->hdr.type = FVBPF_EV_PYSTACK;
	ev->hdr.version = FVBPF_EVENT_VERSION;
	ev->hdr.size = 32 + h.nframes * (uint32_t)sizeof(ev->frames[0]);
	ev->hdr.tgid = 0; /* the caller's target */
	ev->hdr.tid = h.tid;
	ev->hdr.ts_ns = h.ts_ns;
	ev->nframes = h.nframes;
	ev->flags = h.flags & FVBPF_FAST_CUT ? FVBPF_PYSTACK_CUT : 0;
	memcpy(ev->frames, at + FVBPF_FAST_STACK_SIZE, h.nframes * sizeof(ev->frames[0]));
	return 0;
}

int callback_ops_peek(struct callback_ops *f, uint32_t i, struct fvbpf_fast_rec *rec, char *name)
{
	struct fvbpf_fast_ring *r = ring_at(f, i);
	uint64_t head, tail, pos;
	const uint8_t *data = (const uint8_t *)(r + 1);

	for (;;) {
		head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		tail = r->tail;
		if (head == tail)
			return 0;
		if (head < tail || head - tail > FVBPF_FAST_RING_BYTES)
			goto broken;
		pos = tail % FVBPF_FAST_RING_BYTES;
		memcpy(rec, data + pos, sizeof(rec->kind));
		if (rec->kind == FVBPF_FAST_PAD) {
			__atomic_store_n(&r->tail, tail + FVBPF_FAST_RING_BYTES - pos,
					 __ATOMIC_RELEASE);
			continue;
		}
		if (FVBPF_FAST_RING_BYTES - pos < FVBPF_FAST_END_SIZE)
			goto broken;
		memcpy(rec, data + pos, FVBPF_FAST_END_SIZE);
		if (rec->size < FVBPF_FAST_END_SIZE || rec->size % 8 || rec->size > head - tail ||
		    rec->size > FVBPF_FAST_RING_BYTES - pos)
			goto broken;
		if (rec->kind == FVBPF_FAST_END)
			return 1;
		if (rec->kind == FVBPF_FAST_STACK) {
			if (copy_stack(&f->stack[i], data + pos, rec->size))
				goto broken;
			return 2;
		}
		if (rec->kind == FVBPF_FAST_API || rec->kind == FVBPF_FAST_API_END) {
			if (rec->size != (rec->kind == FVBPF_FAST_API ? FVBPF_FAST_API_SIZE :
									  FVBPF_FAST_API_END_SIZE))
				goto broken;
			memcpy(&f->api[i], data + pos, rec->size);
			return 3;
		}
		if ((rec->kind != FVBPF_FAST_OP && rec->kind != FVBPF_FAST_NODE) ||
		    rec->size < FVBPF_FAST_BEGIN_SIZE)
			goto broken;
		memcpy(rec, data + pos, FVBPF_FAST_BEGIN_SIZE);
		if (rec->name_len > FVBPF_FAST_NAME ||
		    rec->name_len > (uint32_t)rec->size - FVBPF_FAST_BEGIN_SIZE)
			goto broken;
		memcpy(name, data + pos + FVBPF_FAST_BEGIN_SIZE, rec->name_len);
		name[rec->name_len] = '\0';
		return 1;
	}
broken:
	__atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
	f->bad++;
	return -1;
}

static void advance(struct callback_ops *f, uint32_t i, uint16_t size)
{
	struct fvbpf_fast_ring *r = ring_at(f, i);

	__atomic_store_n(&r->tail, r->tail + size, __ATOMIC_RELEASE);
}

/* The torch id of a fast-path name: one per name and kind, made at first
 * sight.  evaluate_function comes as a FUNCTION scope: a node, as the
 * uprobe path names it. */
static int fast_id(struct session *s, const struct fvbpf_fast_rec *rec, const char *name,
		   uint32_t *id)
{
	uint8_t kind = rec->kind == FVBPF_FAST_NODE ||
		       !strncmp(name, TORCH_EVAL_PREFIX, strlen(TORCH_EVAL_PREFIX)) ?
		       TORCH_NODE : TORCH_OP;
	uint32_t nid = name_table_intern(&s->knames, name);
	uint64_t key = (uint64_t)nid << 8 | kind, v;
	int err;

	if (!nid)
		return -ENOMEM;
	v = addr_cache_get(&s->fast_ids, key);
	if (v) {
		*id = (uint32_t)(v - 1);
		return 0;
	}
	err = torch_table_add(s->torch, name, kind, id);
	if (!err)
		err = addr_cache_put(&s->fast_ids, key, (uint64_t)*id + 1);
	return err == -ENOSPC ? 0 : err;
}

_Static_assert(sizeof(((struct fast_name_slot *)0)->name) >= FVBPF_FAST_NAME, "a slot holds a name");

/* fast_id() through the slot cache: FNV-1a of the name and kind. */
static int cached_id(struct session *s, struct callback_ops *f, const struct fvbpf_fast_rec *rec,
		     const char *name, uint32_t *id)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ rec->kind;
	struct fast_name_slot *sl;
	uint32_t i;
	int err;

	for (i = 0; i < rec->name_len; i++) {
		h ^= (unsigned char)name[i];
		h *= 0x100000001b3ULL;
	}
	h = h ? h : 1;
	sl = &f->names[h % FAST_NAME_SLOTS];
	if (sl->hash == h && sl->len == rec->name_len && sl->kind == rec->kind &&
	    !memcmp(sl->name, name, rec->name_len)) {
		*id = sl->id;
		return 0;
	}
	err = fast_id(s, rec, name, id);
	if (err)
		return err;
	sl->hash = h;
	sl->id = *id;
	sl->len = (uint16_t)rec->name_len;
	sl->kind = rec->kind;
	memcpy(sl->name, name, rec->name_len);
	return 0;
}

static void deliver(struct session *s, struct session_target *t, const struct fvbpf_fast_rec *rec,
		    const char *name)
{
	struct fvbpf_torch_event ev;
	struct torch_seq sq = { .seq_nr = rec->seq_nr, .rf_tid = rec->rf_tid,
				.fwd_tid = rec->fwd_tid, .node = rec->kind == FVBPF_FAST_NODE };

	memset(&ev, 0, sizeof(ev));
	ev.hdr.version = FVBPF_EVENT_VERSION;
	ev.hdr.size = sizeof(ev);
	ev.hdr.tgid = (uint32_t)t->proc->pid;
	ev.hdr.tid = rec->tid;
	ev.hdr.ts_ns = rec->ts_ns;
	ev.drops = (uint32_t)t->loss->drops_seen; /* the BPF ring's: no new gap */
	if (rec->kind == FVBPF_FAST_END) {
		ev.hdr.type = FVBPF_EV_TORCH_EXIT;
		ev.id = torch_pairing_top_op(t->tpair, rec->tid);
		if (ev.id == TORCH_SCOPE_ID) {
			t->tpair->unmatched++;
			return;
		}
	} else {
		ev.hdr.type = FVBPF_EV_TORCH_ENTER;
		if (cached_id(s, t->fast, rec, name, &ev.id)) {
			s->bad_records++;
			return;
		}
		if (rec->flags & FVBPF_FAST_SAME)
			ev.id |= FVBPF_TORCH_SAME_STACK;
	}
	t->fast->records++;
	if (t->next_cut)
		window_cut_until(s, t, rec->ts_ns);
	torch_events_fast(s, t, &ev, rec->kind == FVBPF_FAST_END ? NULL : &sq);
}

/* A hooked CUDA call's entry or return (fvbpf_fast.h), handed on as BPF's
 * record of the uprobe on the same call would be. */
static void deliver_api(struct session *s, struct session_target *t, const union fast_api_rec *a)
{
	struct fvbpf_api_enter en;
	struct fvbpf_api_exit ex;
	bool entry = a->e.kind == FVBPF_FAST_API;
	struct fvbpf_event_hdr *h = entry ? &en.hdr : &ex.hdr;

	/* the only call the hook knows, and only where fvbpf asked for it */
	if ((entry ? a->e.call : a->x.call) != FVBPF_HOOK_LAUNCH_KERNEL || !t->fast->hook_used ||
	    t->fast->launch_id < 0) {
		t->fast->bad++;
		return;
	}
	memset(&en, 0, sizeof(en));
	memset(&ex, 0, sizeof(ex));
	h->version = FVBPF_EVENT_VERSION;
	h->tgid = (uint32_t)t->proc->pid;
	h->tid = a->e.tid;
	h->ts_ns = a->e.ts_ns;
	t->fast->api_records++;
	if (t->next_cut)
		window_cut_until(s, t, h->ts_ns);
	if (entry) {
		h->type = FVBPF_EV_API_ENTER;
		h->size = sizeof(en);
		en.api_id = (uint32_t)t->fast->launch_id;
		memcpy(en.args, a->e.args, sizeof(en.args));
		events_api_enter(s, t, &en);
	} else {
		h->type = FVBPF_EV_API_EXIT;
		h->size = sizeof(ex);
		ex.api_id = (uint32_t)t->fast->launch_id;
		ex.ret = a->x.ret;
		events_api_exit(s, t, &ex);
	}
}

/* The record at ring @i's tail (callback_ops_peek's 3, 2, 1 or 0), past broken ones. */
static int next_rec(struct callback_ops *f, uint32_t i, struct fvbpf_fast_rec *rec, char *name)
{
	int r;

	while ((r = callback_ops_peek(f, i, rec, name)) < 0)
		;
	return r;
}

/*
 * Ring @i's STACK record (peeked into f->stack[i]) to the stack table, in
 * time order as BPF's record would be: just before its operator (same
 * thread, same ts), never at a peek, when other threads' stacks could take
 * its thread's pending slot or it could come before records older than it.
 */
static void take_stack(struct session *s, struct session_target *t, uint32_t i)
{
	struct callback_ops *f = t->fast;
	struct fvbpf_pystack_event *ev = &f->stack[i];

	ev->hdr.tgid = (uint32_t)t->proc->pid;
	f->stacks++;
	if (t->pystk && s->pystacks)
		pystack_record(s->pystacks, t->pystk, ev, ev->hdr.size);
}

/*
 * Ring @i's record from before the attach (the library follows segments
 * from its answer on, fvbpf from the attach), or the end of an operator
 * begun then while nothing begun since is open on its thread: in no
 * segment, skipped and counted.
 */
static bool before_attach(struct callback_ops *f, struct session_target *t, uint32_t i,
			  const struct fvbpf_fast_rec *rec)
{
	bool begin = rec->kind == FVBPF_FAST_OP || rec->kind == FVBPF_FAST_NODE;

	if (rec->ts_ns < f->from_ns) {
		if (begin) {
			f->early++;
			f->early_open[i]++;
		} else if (rec->kind == FVBPF_FAST_END && f->early_open[i]) {
			f->early_open[i]--;
		}
		return true;
	}
	if (rec->kind != FVBPF_FAST_END || !f->early_open[i] ||
	    torch_pairing_top_op(t->tpair, rec->tid) != TORCH_SCOPE_ID)
		return false;
	f->early_open[i]--;
	return true;
}

void callback_ops_drain(struct session *s, struct session_target *t, uint64_t until)
{
	struct callback_ops *f = t->fast;
	static __thread struct fvbpf_fast_rec recs[FVBPF_FAST_THREADS];
	static __thread char names[FVBPF_FAST_THREADS][FVBPF_FAST_NAME + 1];
	bool have[FVBPF_FAST_THREADS];
	uint64_t scan_ns, next;
	uint32_t i, best;

	if (!f->map || until < f->next_ts)
		return; /* nothing there can be older: the last scan said so */
	scan_ns = clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < f->nrings; i++)
		have[i] = next_rec(f, i, &recs[i], names[i]) > 0;
	for (;;) {
		best = UINT32_MAX;
		for (i = 0; i < f->nrings; i++)
			if (have[i] && recs[i].ts_ns < until &&
			    (best == UINT32_MAX || recs[i].ts_ns < recs[best].ts_ns))
				best = i;
		if (best == UINT32_MAX)
			break;
		if (before_attach(f, t, best, &recs[best]))
			; /* in no segment: skipped */
		else if (recs[best].kind == FVBPF_FAST_STACK)
			take_stack(s, t, best);
		else if (recs[best].kind == FVBPF_FAST_API || recs[best].kind == FVBPF_FAST_API_END)
			deliver_api(s, t, &f->api[best]);
		else
			deliver(s, t, &recs[best], names[best]);
		advance(f, best, recs[best].size);
		have[best] = next_rec(f, best, &recs[best], names[best]) > 0;
	}
	/* A record not there yet is younger than this scan (give or take the
	 * few ns between its timestamp and its commit). */
	next = scan_ns;
	for (i = 0; i < f->nrings; i++)
		if (have[i] && recs[i].ts_ns < next)
			next = recs[i].ts_ns;
	f->next_ts = next;
}

uint64_t callback_ops_lost(const struct callback_ops *f)
{
	const struct fvbpf_fast_hdr *h;
	uint64_t n;
	uint32_t i;

	if (!f->map)
		return f->ring_drops + f->no_ring + f->bad;
	h = (const struct fvbpf_fast_hdr *)f->map;
	n = h->no_ring - f->no_ring;
	for (i = 0; i < f->nrings; i++)
		n += ring_at(f, i)->drops;
	return n - f->base_drops + f->bad;
}

void callback_ops_close(struct callback_ops *f)
{
	const struct fvbpf_fast_hdr *h;
	uint32_t i;

	if (!f->map)
		return;
	h = (const struct fvbpf_fast_hdr *)f->map;
	f->no_ring = h->no_ring - f->no_ring;
	f->late = h->late - f->late;
	f->outside = h->outside - f->outside + f->early;
	for (i = 0; i < f->nrings; i++)
		f->ring_drops += ring_at(f, i)->drops;
	f->ring_drops -= f->base_drops;
	munmap(f->map, f->bytes);
	f->map = NULL;
	free(f->names);
	f->names = NULL;
	free(f->stack);
	f->stack = NULL;
	free(f->api);
	f->api = NULL;
}

struct callback_ops *callback_ops__new(void)
{
	return calloc(1, sizeof(struct callback_ops));
}

void callback_ops__free(struct callback_ops *p)
{
	if (!p)
		return;
	callback_ops_close(p);
	free(p);
}
