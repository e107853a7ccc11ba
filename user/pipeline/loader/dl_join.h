/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * DataLoader workers' batches joined to their trainer's receipts (issue 38).
 *
 * The facts come from what crosses the DataLoader's queues, seen where
 * CPython's _pickle module turns it into objects (docs: the "DataLoader
 * workers" design in dl_join.c):
 *
 *   worker, main thread   unpickles (idx, [sample indices])  -> batch start
 *   worker, first collate allocation (default_collate)       -> collate start
 *   worker, feeder thread pickles (idx, data)                -> batch end
 *   trainer (main or pin-memory thread) unpickles (idx, data)-> receipt
 *   trainer's __next__ scope (record_function)               -> its wait
 *
 * Batch indices restart at 0 every epoch, so a receipt takes the latest
 * finished, not yet received batch of its index that ended before it.
 * Everything here came from the target: indices and counts are bounded,
 * times ordered, and every record that joins nothing is counted.
 */
#ifndef FVBPF_DL_JOIN_H
#define FVBPF_DL_JOIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define DL_WORKERS 64       /* worker processes one trainer keeps track of */
#define DL_BATCHES 4096     /* finished batches kept for their receipts */
#define DL_IDX_MAX (1LL << 40) /* a batch index past this is not one */
#define DL_SAMPLES_MAX (1u << 24)

/* One batch as its worker did it. */
struct dl_batch {
	uint64_t start_ns, end_ns;  /* request unpickled; result handed to the feeder */
	uint64_t collate_ns;        /* collate began; 0: not seen (collate_us unknown) */
	uint64_t recv_ns;           /* the trainer unpickled it; 0: not (yet) */
	uint64_t wait_ns;           /* the trainer's __next__ that received it; 0: none */
	int64_t idx;                /* the loader's batch index (per epoch) */
	pid_t pid;                  /* the worker */
	uint32_t recv_tid;          /* the trainer's thread that received it */
	int32_t worker_id;          /* the loader's worker_id; -1: not known */
	uint32_t samples;
};

/* What joined nothing, or was cut. */
struct dl_counts {
	uint64_t batches;           /* finished */
	uint64_t received;          /* ... joined to a receipt */
	uint64_t unfinished;        /* a worker's batch that never ended (died mid-batch) */
	uint64_t recv_unmatched;    /* receipts of no finished batch */
	uint64_t end_unmatched;     /* ends of no started batch */
	uint64_t evicted;           /* finished batches forgotten unreceived (table full) */
	uint64_t workers_over;      /* records of workers past DL_WORKERS */
	uint64_t bad;               /* indices or counts out of range */
};

struct dl_join;

struct dl_join *dl_join__new(void);
void dl_join__free(struct dl_join *j);

/* Worker @pid (the loader's @worker_id, -1 when not known) took batch
 * @idx of @samples samples at @ts. */
void dl_batch_start(struct dl_join *j, pid_t pid, int32_t worker_id, int64_t idx,
		    uint64_t samples, uint64_t ts);
/* Worker @pid has been seen with a worker_id (its first start). */
bool dl_worker_known(const struct dl_join *j, pid_t pid);
/* Worker @pid began collating its batch (the first mark counts). */
void dl_batch_collate(struct dl_join *j, pid_t pid, uint64_t ts);
/* Worker @pid handed batch @idx's result to its queue at @ts. */
void dl_batch_end(struct dl_join *j, pid_t pid, int64_t idx, uint64_t ts);
/* Worker @pid is gone: its open batch, if any, is counted unfinished and
 * kept (end_ns 0) so a summary can name it. */
void dl_worker_exit(struct dl_join *j, pid_t pid, uint64_t ts);
/* dl_worker_exit() for every worker with an open batch that @alive says
 * is gone (killed or crashed mid-batch). */
void dl_reap(struct dl_join *j, bool (*alive)(pid_t pid));
/* The trainer's thread @tid unpickled batch @idx at @ts: the batch it
 * joins, or NULL (counted). */
const struct dl_batch *dl_receive(struct dl_join *j, uint32_t tid, int64_t idx, uint64_t ts);
/* One of the trainer's waits (__next__) [start, end]: the batch it handed
 * out, the last received inside it, gets its length as wait_ns. */
void dl_wait(struct dl_join *j, uint64_t start_ns, uint64_t end_ns);

/* The finished batches kept, oldest first: 0..n-1. */
size_t dl_nbatches(const struct dl_join *j);
const struct dl_batch *dl_batch_at(const struct dl_join *j, size_t i);
const struct dl_counts *dl_counts(const struct dl_join *j);
/* Worker processes seen (at most DL_WORKERS). */
unsigned int dl_nworkers(const struct dl_join *j);

/* One worker's part of a span [from, to] of its trainer (a segment). */
struct dl_worker_sum {
	pid_t pid;
	int32_t worker_id;
	uint32_t batches;           /* received in the span */
	uint64_t fetch_ns, collate_ns, busy_ns;
	uint64_t idle_ns;           /* the span less its batches' work inside it */
};

/* The span's picture: the trainer's waits and each worker's part. */
struct dl_span_sum {
	uint64_t wait_ns;           /* the waits of the batches received in the span */
	uint32_t batches;           /* received in the span */
	uint32_t nworkers;
	struct dl_worker_sum workers[DL_WORKERS];
	bool has_worst;
	struct dl_batch worst;      /* the batch waited for longest (has_worst) */
};

/* Fill @out for the batches received in [from, to]. */
void dl_span(const struct dl_join *j, uint64_t from, uint64_t to, struct dl_span_sum *out);

/* What a segment carries to its writers (copies: the writer thread
 * never reads the live join). */
#define DL_SEG_BATCHES 4096
#define DL_SENTENCE 256
struct dl_seg {
	struct dl_batch *batches;   /* received in the segment, oldest first */
	size_t n;
	uint64_t batches_cut;       /* received in it past DL_SEG_BATCHES */
	struct dl_span_sum sum;
	char sentence[DL_SENTENCE]; /* dl_bottleneck()'s, "" none */
	struct dl_counts counts;    /* the trainer's so far, when it closed */
	uint64_t waits_ns;          /* every __next__ in the segment, batch received or not */
};

/* The segment [from, to]'s part (@waits_ns: its __next__ waits): NULL
 * while the trainer has had no worker batch (no workers: nothing
 * changes), or on no memory. */
struct dl_seg *dl_seg_make(const struct dl_join *j, uint64_t from, uint64_t to,
			   uint64_t waits_ns);
void dl_seg_free(struct dl_seg *d);

/* The batch's fetch and collate times (its work split at collate_ns). */
uint64_t dl_fetch_ns(const struct dl_batch *b);
uint64_t dl_collate_ns(const struct dl_batch *b);

/*
 * The sentence when the loader held the trainer up: the worst wait is at
 * least 1 ms and its batch's fetch at least half of it ("waited 41.0 ms
 * for batch 17 from worker 1, which spent 40.2 ms in __getitem__"), with
 * @where (a cleaned "file:line", or NULL) in parentheses.  0 and an empty
 * @buf when it did not; the length otherwise (cut to @len, always ended).
 */
int dl_bottleneck(const struct dl_span_sum *s, const char *where, char *buf, size_t len);

#endif /* FVBPF_DL_JOIN_H */
