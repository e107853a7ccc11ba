// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * DataLoader batches joined to the trainer's receipts (issue 38): a
 * receipt takes the latest finished batch of its index (indices restart
 * every epoch), waits go to the batches received inside them, a worker
 * that dies mid-batch and every record that joins nothing are counted,
 * the span picture and the bottleneck sentence.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <string.h>

#include "pipeline/loader/dl_join.h"
#include "unit.h"

#define MS 1000000ULL

static void test_one_batch(void)
{
	struct dl_join *j = dl_join__new();
	const struct dl_batch *b;

	dl_batch_start(j, 100, 1, 5, 4, 10 * MS);
	dl_batch_collate(j, 100, 50 * MS);
	dl_batch_collate(j, 100, 51 * MS); /* the first mark counts */
	dl_batch_end(j, 100, 5, 52 * MS);
	b = dl_receive(j, 7, 5, 53 * MS);
	CHECK(b != NULL);
	if (b) {
		CHECK_EQ(b->pid, 100);
		CHECK_EQ(b->worker_id, 1);
		CHECK_EQ(b->samples, 4);
		CHECK_EQ(dl_fetch_ns(b), 40 * MS);
		CHECK_EQ(dl_collate_ns(b), 2 * MS);
		CHECK_EQ(b->recv_tid, 7);
	}
	dl_wait(j, 20 * MS, 54 * MS);
	CHECK_EQ(dl_batch_at(j, 0)->wait_ns, 34 * MS);
	CHECK_EQ(dl_counts(j)->batches, 1);
	CHECK_EQ(dl_counts(j)->received, 1);
	/* received once only */
	CHECK(dl_receive(j, 7, 5, 60 * MS) == NULL);
	CHECK_EQ(dl_counts(j)->recv_unmatched, 1);
	dl_join__free(j);
}

/* Epoch 2 reuses index 0: a receipt takes the newest batch that ended
 * before it, never one that ends after it. */
static void test_epochs(void)
{
	struct dl_join *j = dl_join__new();
	const struct dl_batch *b;

	dl_batch_start(j, 100, 0, 0, 4, 1 * MS);
	dl_batch_end(j, 100, 0, 2 * MS);
	CHECK(dl_receive(j, 7, 0, 3 * MS) != NULL);
	dl_batch_start(j, 100, 0, 0, 4, 10 * MS);
	dl_batch_end(j, 100, 0, 20 * MS);
	CHECK(dl_receive(j, 7, 0, 15 * MS) == NULL); /* before its end */
	b = dl_receive(j, 7, 0, 21 * MS);
	CHECK(b && b->start_ns == 10 * MS);
	CHECK_EQ(dl_counts(j)->received, 2);
	dl_join__free(j);
}

/* Worker 200 was killed. */
static bool alive(pid_t pid)
{
	return pid != 200;
}

static void test_died_and_unmatched(void)
{
	struct dl_join *j = dl_join__new();

	dl_batch_end(j, 100, 3, 1 * MS);             /* never started */
	dl_batch_start(j, 100, 0, 3, 4, 2 * MS);
	dl_batch_end(j, 100, 4, 3 * MS);             /* another index */
	dl_batch_start(j, 100, 0, 5, 4, 4 * MS);     /* 3 ended by the next start */
	dl_worker_exit(j, 100, 9 * MS);              /* 5 never ends: it died */
	dl_worker_exit(j, 555, 9 * MS);              /* unknown: nothing */
	CHECK_EQ(dl_counts(j)->end_unmatched, 2);
	CHECK_EQ(dl_counts(j)->unfinished, 1);
	CHECK_EQ(dl_counts(j)->batches, 1);
	/* kept, end 0, never received, no fetch time invented */
	CHECK_EQ(dl_nbatches(j), 2);
	CHECK_EQ(dl_batch_at(j, 0)->end_ns, 4 * MS);
	CHECK_EQ(dl_batch_at(j, 1)->idx, 5);
	CHECK_EQ(dl_batch_at(j, 1)->end_ns, 0);
	CHECK_EQ(dl_fetch_ns(dl_batch_at(j, 1)), 0);
	CHECK(dl_receive(j, 7, 5, 10 * MS) == NULL);
	CHECK(dl_batch_at(j, 2) == NULL);
	/* a worker killed mid-batch, found gone at a segment's close */
	dl_batch_start(j, 100, 0, 6, 4, 20 * MS);
	dl_batch_start(j, 200, 1, 7, 4, 20 * MS);
	dl_reap(j, alive);
	CHECK_EQ(dl_counts(j)->unfinished, 2);
	CHECK_EQ(dl_batch_at(j, 2)->pid, 200);
	dl_batch_end(j, 100, 6, 30 * MS);            /* the live one goes on */
	CHECK_EQ(dl_counts(j)->batches, 2);
	dl_join__free(j);
}

/* The feeder thread pickles a result after the main thread took its next
 * request: the batch ended at that start, the late record is expected. */
static void test_feeder_late(void)
{
	struct dl_join *j = dl_join__new();

	dl_batch_start(j, 100, 0, 1, 4, 0);
	dl_batch_start(j, 100, 0, 3, 4, 10 * MS);
	dl_batch_end(j, 100, 1, 11 * MS);
	dl_batch_end(j, 100, 3, 20 * MS);
	CHECK_EQ(dl_counts(j)->batches, 2);
	CHECK_EQ(dl_counts(j)->end_unmatched, 0);
	CHECK_EQ(dl_batch_at(j, 0)->end_ns, 10 * MS);
	CHECK_EQ(dl_batch_at(j, 1)->end_ns, 20 * MS);
	/* a repeated feeder record is not expected twice */
	dl_batch_end(j, 100, 1, 21 * MS);
	CHECK_EQ(dl_counts(j)->end_unmatched, 1);
	dl_join__free(j);
}

/* A wait that received a batch out of order first hands out the last one
 * it received: only that one waited. */
static void test_wait_last(void)
{
	struct dl_join *j = dl_join__new();

	dl_batch_start(j, 100, 0, 2, 4, 0);
	dl_batch_end(j, 100, 2, 1 * MS);
	dl_batch_start(j, 200, 1, 1, 4, 0);
	dl_batch_end(j, 200, 1, 30 * MS);
	dl_receive(j, 7, 2, 2 * MS);
	dl_receive(j, 7, 1, 31 * MS);
	dl_wait(j, 1 * MS, 32 * MS);
	CHECK_EQ(dl_batch_at(j, 0)->wait_ns, 0);
	CHECK_EQ(dl_batch_at(j, 1)->wait_ns, 31 * MS);
	dl_join__free(j);
}

/* The target's numbers: negative and huge indices, huge counts, a worker
 * id past any loader's, an end before its start, too many workers. */
static void test_hostile(void)
{
	struct dl_join *j = dl_join__new();
	int i;

	dl_batch_start(j, 100, 0, -1, 4, 1);
	dl_batch_start(j, 100, 0, DL_IDX_MAX + 1, 4, 1);
	dl_batch_start(j, 100, 0, 1, (uint64_t)DL_SAMPLES_MAX + 1, 1);
	dl_batch_start(j, 100, -5, 1, 4, 1);
	dl_batch_start(j, 100, INT32_MAX, 1, 4, 1);
	CHECK_EQ(dl_counts(j)->bad, 5);
	dl_batch_start(j, 100, 0, 1, 4, 10 * MS);
	dl_batch_end(j, 100, 1, 5 * MS);             /* before its start */
	CHECK_EQ(dl_counts(j)->end_unmatched, 1);
	for (i = 0; i < DL_WORKERS + 3; i++)
		dl_batch_start(j, 1000 + i, i, 0, 1, 1);
	CHECK_EQ(dl_counts(j)->workers_over, 3 + 1); /* pid 100 holds a place */
	dl_join__free(j);
}

/* A full table forgets its oldest finished batches, counting those
 * never received. */
static void test_evicted(void)
{
	struct dl_join *j = dl_join__new();
	uint64_t i;

	for (i = 0; i < DL_BATCHES + 10; i++) {
		dl_batch_start(j, 100, 0, (int64_t)i, 1, 10 * i + 1);
		dl_batch_end(j, 100, (int64_t)i, 10 * i + 2);
		if (i < 4)
			dl_receive(j, 7, (int64_t)i, 10 * i + 3);
	}
	CHECK_EQ(dl_nbatches(j), DL_BATCHES);
	CHECK_EQ(dl_counts(j)->evicted, 10 - 4);
	CHECK_EQ(dl_batch_at(j, 0)->idx, 10);
	dl_join__free(j);
}

/* Two workers, one slow: the span counts received batches per worker,
 * busy and idle inside it, and the worst wait names the slow one. */
static void test_span_and_sentence(void)
{
	struct dl_join *j = dl_join__new();
	struct dl_span_sum s;
	char line[256];
	int n;

	dl_batch_start(j, 100, 0, 0, 4, 0 * MS);
	dl_batch_end(j, 100, 0, 1 * MS);
	dl_batch_start(j, 200, 1, 1, 4, 0 * MS);
	dl_batch_collate(j, 200, 40 * MS);
	dl_batch_end(j, 200, 1, 41 * MS);
	dl_receive(j, 7, 0, 2 * MS);
	dl_wait(j, 1500000, 2 * MS);   /* 0.5 ms: under the sentence's 1 ms */
	dl_receive(j, 7, 1, 42 * MS);
	dl_wait(j, 3 * MS, 43 * MS);
	dl_span(j, 0, 100 * MS, &s);
	CHECK_EQ(s.batches, 2);
	CHECK_EQ(s.wait_ns, 40 * MS + 500000);
	CHECK_EQ(s.nworkers, 2);
	CHECK_EQ(s.workers[0].pid, 100);
	CHECK_EQ(s.workers[0].busy_ns, 1 * MS);
	CHECK_EQ(s.workers[0].idle_ns, 99 * MS);
	CHECK_EQ(s.workers[1].worker_id, 1);
	CHECK_EQ(s.workers[1].fetch_ns, 40 * MS);
	CHECK_EQ(s.workers[1].collate_ns, 1 * MS);
	CHECK(s.has_worst && s.worst.idx == 1);
	n = dl_bottleneck(&s, "dataset.py:88", line, sizeof(line));
	CHECK_STR(line, "waited 40.0 ms for batch 1 from worker 1, which spent 40.0 ms in "
		  "__getitem__ (dataset.py:88)");
	CHECK_EQ(n, (int)strlen(line));
	/* cut to the buffer, always ended */
	n = dl_bottleneck(&s, NULL, line, 10);
	CHECK_EQ(n, 9);
	CHECK_EQ(strlen(line), 9);
	/* a span that holds only worker 0's receipt: no bottleneck */
	dl_span(j, 0, 10 * MS, &s);
	CHECK_EQ(s.batches, 1);
	CHECK_EQ(dl_bottleneck(&s, NULL, line, sizeof(line)), 0);
	CHECK_STR(line, "");
	/* worker 1 worked through [0, 10 ms] without a receipt there */
	CHECK_EQ(s.nworkers, 2);
	CHECK_EQ(s.workers[1].batches, 0);
	CHECK_EQ(s.workers[1].busy_ns, 10 * MS);
	CHECK_EQ(s.workers[1].idle_ns, 0);
	dl_join__free(j);
}

int main(void)
{
	RUN(test_one_batch);
	RUN(test_epochs);
	RUN(test_died_and_unmatched);
	RUN(test_feeder_late);
	RUN(test_wait_last);
	RUN(test_hostile);
	RUN(test_evicted);
	RUN(test_span_and_sentence);
	UNIT_DONE();
}
