// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * DataLoader batches joined to the trainer's receipts (dl_join.h).
 *
 * Why the queues and not the workers' Python: a worker forked long before
 * the attach has no fvbpf code that could run in it (its control page is
 * wiped at fork, the shim's request never reaches it) and must not be
 * changed; what it sends and receives passes through CPython's _pickle
 * functions, which uprobes see in any process without writing to it
 * (they start with a REX push: the int3 path, safe across fork).  The
 * objects are (idx, indices) and (idx, data) tuples: a type check in BPF
 * keeps the rest of the job's pickling out.
 *
 * A batch ends when its result is pickled on the worker's feeder thread,
 * or when the worker's main thread takes its next request, whichever
 * comes first: the main thread runs one batch at a time and hands each
 * to the feeder before it asks for the next, and the feeder may pickle
 * the previous result only after that next request came (then its end
 * is the next start, and the feeder's late record is expected).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/loader/dl_join.h"
#include "util/checked_math.h"

struct dl_worker {
	pid_t pid;
	int32_t worker_id;
	bool open;
	struct dl_batch cur;
	int64_t last_idx;         /* its last batch ended by its next start, -1 none */
};

struct dl_join {
	struct dl_worker workers[DL_WORKERS];
	unsigned int nworkers;
	struct dl_batch *ring;      /* DL_BATCHES finished batches, oldest at head */
	size_t head, n;
	struct dl_counts counts;
};

struct dl_join *dl_join__new(void)
{
	struct dl_join *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->ring = calloc(DL_BATCHES, sizeof(*j->ring));
	if (!j->ring) {
		free(j);
		return NULL;
	}
	return j;
}

void dl_join__free(struct dl_join *j)
{
	if (!j)
		return;
	free(j->ring);
	free(j);
}

static struct dl_worker *worker_find(struct dl_join *j, pid_t pid, bool add)
{
	unsigned int i;

	for (i = 0; i < j->nworkers; i++)
		if (j->workers[i].pid == pid)
			return &j->workers[i];
	if (!add)
		return NULL;
	if (j->nworkers == DL_WORKERS) {
		j->counts.workers_over++;
		return NULL;
	}
	j->workers[j->nworkers] = (struct dl_worker){ .pid = pid, .worker_id = -1, .last_idx = -1 };
	return &j->workers[j->nworkers++];
}

static struct dl_batch *ring_at(const struct dl_join *j, size_t i)
{
	return &j->ring[(j->head + i) % DL_BATCHES];
}

/* Keep a batch: finished, or cut short by its worker's end (end_ns 0). */
static void keep(struct dl_join *j, const struct dl_batch *b)
{
	if (j->n == DL_BATCHES) {
		if (!j->ring[j->head].recv_ns && j->ring[j->head].end_ns)
			j->counts.evicted++;
		j->head = (j->head + 1) % DL_BATCHES;
		j->n--;
	}
	*ring_at(j, j->n++) = *b;
}

/* An open batch that will never end: kept with end_ns 0, counted. */
static void cut_open(struct dl_join *j, struct dl_worker *w)
{
	if (!w->open)
		return;
	w->open = false;
	j->counts.unfinished++;
	w->cur.end_ns = 0;
	keep(j, &w->cur);
}

void dl_batch_start(struct dl_join *j, pid_t pid, int32_t worker_id, int64_t idx,
		    uint64_t samples, uint64_t ts)
{
	struct dl_worker *w;

	if (idx < 0 || idx > DL_IDX_MAX || samples > DL_SAMPLES_MAX ||
	    worker_id < -1 || worker_id >= (int32_t)DL_SAMPLES_MAX) {
		j->counts.bad++;
		return;
	}
	w = worker_find(j, pid, true);
	if (!w)
		return;
	w->last_idx = -1;
	if (w->open && ts >= w->cur.start_ns) {
		/* the main thread moved on: the batch was handed to the feeder */
		w->open = false;
		w->cur.end_ns = ts;
		w->last_idx = w->cur.idx;
		j->counts.batches++;
		keep(j, &w->cur);
	}
	cut_open(j, w);
	if (worker_id >= 0)
		w->worker_id = worker_id;
	w->open = true;
	w->cur = (struct dl_batch){ .start_ns = ts, .idx = idx, .pid = pid,
				    .worker_id = w->worker_id, .samples = (uint32_t)samples };
}

bool dl_worker_known(const struct dl_join *j, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < j->nworkers; i++)
		if (j->workers[i].pid == pid)
			return j->workers[i].worker_id >= 0;
	return false;
}

void dl_batch_collate(struct dl_join *j, pid_t pid, uint64_t ts)
{
	struct dl_worker *w = worker_find(j, pid, false);

	if (w && w->open && !w->cur.collate_ns && ts >= w->cur.start_ns)
		w->cur.collate_ns = ts;
}

void dl_batch_end(struct dl_join *j, pid_t pid, int64_t idx, uint64_t ts)
{
	struct dl_worker *w = worker_find(j, pid, false);

	if (w && w->last_idx == idx && (!w->open || w->cur.idx != idx)) {
		w->last_idx = -1; /* the feeder's record of a batch ended already */
		return;
	}
	if (!w || !w->open || w->cur.idx != idx || ts < w->cur.start_ns) {
		j->counts.end_unmatched++;
		return;
	}
	w->open = false;
	w->cur.end_ns = ts;
	j->counts.batches++;
	keep(j, &w->cur);
}

void dl_worker_exit(struct dl_join *j, pid_t pid, uint64_t ts)
{
	struct dl_worker *w = worker_find(j, pid, false);

	(void)ts;
	if (w)
		cut_open(j, w);
}

const struct dl_batch *dl_receive(struct dl_join *j, uint32_t tid, int64_t idx, uint64_t ts)
{
	size_t i;

	/* Newest first: indices restart every epoch. */
	for (i = j->n; i-- > 0;) {
		struct dl_batch *b = ring_at(j, i);

		if (b->idx == idx && b->end_ns && !b->recv_ns && b->end_ns <= ts) {
			b->recv_ns = ts;
			b->recv_tid = tid;
			j->counts.received++;
			return b;
		}
	}
	j->counts.recv_unmatched++;
	return NULL;
}

/* The wait ends with the batch it hands out, the last received in it;
 * batches received earlier in it arrived out of order (kept for later). */
void dl_wait(struct dl_join *j, uint64_t start_ns, uint64_t end_ns)
{
	struct dl_batch *last = NULL;
	size_t i;

	for (i = 0; i < j->n; i++) {
		struct dl_batch *b = ring_at(j, i);

		if (b->recv_ns && b->recv_ns >= start_ns && b->recv_ns <= end_ns &&
		    (!last || b->recv_ns > last->recv_ns))
			last = b;
	}
	if (last && !last->wait_ns)
		last->wait_ns = span_u64(start_ns, end_ns);
}

void dl_reap(struct dl_join *j, bool (*alive)(pid_t pid))
{
	unsigned int i;

	for (i = 0; i < j->nworkers; i++)
		if (j->workers[i].open && !alive(j->workers[i].pid))
			cut_open(j, &j->workers[i]);
}

size_t dl_nbatches(const struct dl_join *j)
{
	return j->n;
}

const struct dl_batch *dl_batch_at(const struct dl_join *j, size_t i)
{
	return i < j->n ? ring_at(j, i) : NULL;
}

const struct dl_counts *dl_counts(const struct dl_join *j)
{
	return &j->counts;
}

unsigned int dl_nworkers(const struct dl_join *j)
{
	return j->nworkers;
}

uint64_t dl_fetch_ns(const struct dl_batch *b)
{
	if (!b->end_ns)
		return 0;
	return span_u64(b->start_ns, b->collate_ns ? b->collate_ns : b->end_ns);
}

uint64_t dl_collate_ns(const struct dl_batch *b)
{
	return b->end_ns && b->collate_ns ? span_u64(b->collate_ns, b->end_ns) : 0;
}

/* The part of [s, e] inside [from, to]. */
static uint64_t overlap(uint64_t s, uint64_t e, uint64_t from, uint64_t to)
{
	return span_u64(s > from ? s : from, e < to ? e : to);
}

static struct dl_worker_sum *sum_worker(struct dl_span_sum *out, const struct dl_batch *b)
{
	uint32_t i;

	for (i = 0; i < out->nworkers; i++)
		if (out->workers[i].pid == b->pid)
			return &out->workers[i];
	if (out->nworkers == DL_WORKERS)
		return NULL;
	out->workers[out->nworkers] = (struct dl_worker_sum){ .pid = b->pid,
							      .worker_id = b->worker_id };
	return &out->workers[out->nworkers++];
}

void dl_span(const struct dl_join *j, uint64_t from, uint64_t to, struct dl_span_sum *out)
{
	uint64_t len = span_u64(from, to);
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < j->n; i++) {
		const struct dl_batch *b = ring_at(j, i);
		bool got = b->recv_ns && b->recv_ns >= from && b->recv_ns <= to;
		uint64_t busy = b->end_ns ? overlap(b->start_ns, b->end_ns, from, to) : 0;
		struct dl_worker_sum *w;

		if (!got && !busy)
			continue;
		w = sum_worker(out, b);
		if (!w)
			continue;
		w->busy_ns = sat_add_u64(w->busy_ns, busy);
		if (!got)
			continue;
		w->batches++;
		w->fetch_ns = sat_add_u64(w->fetch_ns, dl_fetch_ns(b));
		w->collate_ns = sat_add_u64(w->collate_ns, dl_collate_ns(b));
		out->batches++;
		out->wait_ns = sat_add_u64(out->wait_ns, b->wait_ns);
		if (b->wait_ns && (!out->has_worst || b->wait_ns > out->worst.wait_ns)) {
			out->has_worst = true;
			out->worst = *b;
		}
	}
	for (i = 0; i < out->nworkers; i++)
		out->workers[i].idle_ns = span_u64(out->workers[i].busy_ns, len);
}

int dl_bottleneck(const struct dl_span_sum *s, const char *where, char *buf, size_t len)
{
	const struct dl_batch *b = s->has_worst ? &s->worst : NULL;
	char who[48];
	int n;

	if (!len)
		return 0;
	buf[0] = '\0';
	if (!b || b->wait_ns < 1000000 || dl_fetch_ns(b) < b->wait_ns / 2)
		return 0;
	if (b->worker_id >= 0)
		snprintf(who, sizeof(who), "worker %d", b->worker_id);
	else
		snprintf(who, sizeof(who), "the worker of PID %d", (int)b->pid);
	n = snprintf(buf, len, "waited %.1f ms for batch %lld from %s, which spent %.1f ms in "
		     "__getitem__%s%s%s", b->wait_ns / 1e6, (long long)b->idx, who,
		     dl_fetch_ns(b) / 1e6, where ? " (" : "", where ? where : "", where ? ")" : "");
	if (n < 0) {
		buf[0] = '\0';
		return 0;
	}
	return (size_t)n >= len ? (int)len - 1 : n;
}

struct dl_seg *dl_seg_make(const struct dl_join *j, uint64_t from, uint64_t to,
			   uint64_t waits_ns)
{
	struct dl_seg *d;
	size_t i;

	if (!j || !j->n)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	dl_span(j, from, to, &d->sum);
	if (d->sum.batches) {
		d->batches = calloc(d->sum.batches < DL_SEG_BATCHES ? d->sum.batches : DL_SEG_BATCHES,
				    sizeof(*d->batches));
		if (!d->batches) {
			free(d);
			return NULL;
		}
	}
	for (i = 0; i < j->n; i++) {
		const struct dl_batch *b = ring_at(j, i);

		if (!b->recv_ns || b->recv_ns < from || b->recv_ns > to)
			continue;
		if (d->n < DL_SEG_BATCHES)
			d->batches[d->n++] = *b;
		else
			d->batches_cut++;
	}
	dl_bottleneck(&d->sum, NULL, d->sentence, sizeof(d->sentence));
	d->counts = j->counts;
	d->waits_ns = waits_ns;
	return d;
}

void dl_seg_free(struct dl_seg *d)
{
	if (!d)
		return;
	free(d->batches);
	free(d);
}
