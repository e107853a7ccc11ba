// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"
#include "output/seg_files.h"
#include "output/seg_writer.h"
#include "output/spill.h"
#include "output/writer_delay.h"

struct seg_writer {
	const char *outdir;
	const struct region_registry *reg;
	const struct session_meta *meta;
	struct name_table *knames;
	struct seg_writer_opts o;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct seg_job *head, *tail;
	bool stopping, started;
	uint64_t queued_bytes;    /* of the closed segments queued in memory */
	uint64_t next_spill;      /* number of the next spill file */
	/* results, read after seg_writer_stop() */
	struct seg_index index;   /* the segments written, on disk */
	unsigned int write_errors;
	int first_error;          /* -errno of the first failed write */
};

struct seg_job {
	struct segment *seg;      /* NULL: spilled */
	uint64_t spill;           /* its spill file's number */
	uint64_t bytes;           /* charged while queued in memory */
	uint32_t pid, seq;        /* for messages about a spilled one */
	struct proc_target *proc;
	struct seg_job *next;
};

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The segment of @job in memory again: read back if it was spilled. */
static struct segment *job_segment(struct seg_writer *w, struct seg_job *job)
{
	struct segment *seg = job->seg;
	int ret;

	if (seg) {
		pthread_mutex_lock(&w->lock);
		w->queued_bytes -= job->bytes;
		pthread_mutex_unlock(&w->lock);
		return seg;
	}
	ret = spill_load(w->outdir, job->spill, (uint32_t)w->reg->count, &seg);
	if (ret) {
		if (w->o.mem)
			atomic_fetch_add(&w->o.mem->segments_dropped, 1);
		log_warn("cannot read back spilled segment %u of pid %u from %s: %s (changed or "
			 "removed by someone else?); it is lost", job->seq, job->pid, w->outdir,
			 ret == -EINVAL ? "not as written" : strerror(-ret));
		return NULL;
	}
	seg->mem = w->o.mem;
	if (w->o.mem)
		budget_charge(w->o.mem, seg->bytes);
	return seg;
}

static void process_job(struct seg_writer *w, struct seg_job *job)
{
	struct segment *seg = job_segment(w, job);
	struct seg_output_ctx c = { .seg = seg, .proc = job->proc, .reg = w->reg, .meta = w->meta,
				    .knames = w->knames, .format = w->o.format,
				    .record_shapes = w->o.record_shapes, .with_flops = w->o.with_flops,
				    .pystacks = w->o.pystacks };
	unsigned int delay = writer_delay_ms();
	struct written_segment ws;
	int ret, ir;

	free(job);
	if (!seg)
		return;
	if (delay)
		sleep_ms(delay);
	writer_hold_wait();
	ret = seg_write_files(w->outdir, &c, &ws);
	if (!ret && (ir = seg_index_add(&w->index, &c, &ws)))
		log_warn("cannot list segment %u of pid %d for the manifest: %s", seg->seq, seg->pid,
			 strerror(-ir));
	if (ret) {
		pthread_mutex_lock(&w->lock);
		if (!w->write_errors++)
			w->first_error = ret;
		pthread_mutex_unlock(&w->lock);
		log_warn("cannot write segment %u of pid %d into %s: %s%s", seg->seq, seg->pid,
			 w->outdir, strerror(-ret),
			 ret == -ENOSPC ? " (disk full: free space or choose another -o)" : "");
	}
	segment_free(seg);
}

static void *writer_main(void *arg)
{
	struct seg_writer *w = arg;
	struct seg_job *job;

	for (;;) {
		pthread_mutex_lock(&w->lock);
		while (!w->head && !w->stopping)
			pthread_cond_wait(&w->cond, &w->lock);
		job = w->head;
		if (job) {
			w->head = job->next;
			if (!w->head)
				w->tail = NULL;
		}
		pthread_mutex_unlock(&w->lock);
		if (!job)
			break; /* stopping and drained */
		process_job(w, job);
	}
	return NULL;
}

struct seg_writer *seg_writer__new(const char *outdir, const struct region_registry *reg,
				   const struct session_meta *meta, struct name_table *knames,
				   const struct seg_writer_opts *o)
{
	struct seg_writer *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	w->outdir = outdir;
	w->reg = reg;
	w->meta = meta;
	w->knames = knames;
	w->o = *o;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	seg_index_init(&w->index, outdir);
	err = pthread_create(&w->thread, NULL, writer_main, w);
	if (err) {
		seg_writer__free(w);
		errno = err;
		return NULL;
	}
	w->started = true;
	return w;
}

/* Would @bytes more in the queue pass its share of --max-memory?  If
 * not, they are counted in. */
static bool queue_takes(struct seg_writer *w, uint64_t bytes)
{
	bool ok;

	pthread_mutex_lock(&w->lock);
	ok = !w->o.mem || !w->o.mem->budget || w->queued_bytes + bytes <= budget_share(w->o.mem);
	if (ok)
		w->queued_bytes += bytes;
	pthread_mutex_unlock(&w->lock);
	return ok;
}

/* Out of memory's way: to a spill file, or dropped when that fails. */
static int spill_job(struct seg_writer *w, struct seg_job *job)
{
	uint64_t size = 0;
	int ret;

	job->spill = w->next_spill++;
	ret = spill_save(w->outdir, job->spill, job->seg, &size);
	if (!ret) {
		atomic_fetch_add(&w->o.mem->segments_spilled, 1);
		atomic_fetch_add(&w->o.mem->bytes_spilled, size);
	} else {
		atomic_fetch_add(&w->o.mem->segments_dropped, 1);
		log_warn("segment %u of pid %u dropped: over --max-memory and it cannot be spilled to "
			 "%s: %s%s", job->seq, job->pid, w->outdir, strerror(-ret),
			 ret == -ENOSPC || ret == -EDQUOT ? " (disk full: free space or use -o elsewhere)" :
			 " (use -o elsewhere or raise --max-memory)");
	}
	segment_free(job->seg);
	job->seg = NULL;
	return ret;
}

int seg_writer_submit(struct seg_writer *w, struct segment *seg, struct proc_target *proc)
{
	struct seg_job *job = calloc(1, sizeof(*job));
	int ret;

	if (!job) {
		segment_free(seg);
		return -ENOMEM;
	}
	job->seg = seg;
	job->proc = proc;
	job->pid = seg->pid;
	job->seq = seg->seq;
	job->bytes = seg->bytes;
	if (!queue_takes(w, job->bytes) && (ret = spill_job(w, job))) {
		free(job);
		return ret;
	}
	pthread_mutex_lock(&w->lock);
	if (w->tail)
		w->tail->next = job;
	else
		w->head = job;
	w->tail = job;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

void seg_writer_stop(struct seg_writer *w)
{
	if (!w || !w->started)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	w->started = false;
}

void seg_writer__free(struct seg_writer *w)
{
	if (!w)
		return;
	seg_writer_stop(w);
	seg_index_close(&w->index);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
}

struct seg_index *seg_writer_index(struct seg_writer *w)
{
	return &w->index;
}

unsigned int seg_writer_write_errors(const struct seg_writer *w)
{
	return w ? w->write_errors : 0;
}

int seg_writer_first_error(const struct seg_writer *w)
{
	return w ? w->first_error : 0;
}
