// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/gpu_join.h"
#include "pipeline/segment.h"
#include "proc/elf/symbolizer.h"

/* A correlation whose segment was written already. */
#define GPU_JOIN_WRITTEN UINT64_MAX

void gpu_join_init(struct gpu_join *j, struct name_table *knames, gpu_find_segment_fn find,
		   void *ctx)
{
	memset(j, 0, sizeof(*j));
	j->knames = knames;
	j->find = find;
	j->ctx = ctx;
}

void gpu_join_free(struct gpu_join *j)
{
	free(j->buf);
	addr_cache_free(&j->names);
	addr_cache_free(&j->corrs);
	memset(j, 0, sizeof(*j));
}

int gpu_join_note_call(struct gpu_join *j, uint32_t correlation, uint32_t seq, size_t index)
{
	if (!correlation)
		return 0;
	return addr_cache_put(&j->corrs, correlation, ((uint64_t)seq + 1) << 32 | (uint32_t)index);
}

static void on_name(struct gpu_join *j, const struct fvbpf_gpu_name *r)
{
	size_t max = r->hdr.size - sizeof(r->hdr);
	char raw[FVBPF_GPU_NAME_MAX], name[FVBPF_GPU_NAME_MAX];
	uint32_t id;

	/* The agent names each kernel once; a target that sends endless
	 * names must not grow the session's name table without bound. */
	if (j->nnames >= GPU_JOIN_MAX_NAMES) {
		j->names_dropped++;
		return;
	}
	j->nnames++;

	snprintf(raw, sizeof(raw), "%.*s", (int)(max < sizeof(raw) ? max : sizeof(raw) - 1), r->name);
	symbolizer_demangle(raw, name, sizeof(name));
	id = name_table_intern(j->knames, name);
	if (id)
		addr_cache_put(&j->names, r->hdr.correlation, id);
}

static void fill_activity(struct gpu_join *j, const struct fvbpf_gpu_hdr *h, struct gpu_activity *a)
{
	const struct fvbpf_gpu_span *s = (const void *)h;

	memset(a, 0, sizeof(*a));
	a->kind = h->kind;
	a->correlation = h->correlation;
	a->start = s->start;
	a->end = s->end;
	a->device = s->device;
	a->stream = s->stream;
	a->call = -1;
	if (h->kind == FVBPF_GPU_KERNEL) {
		const struct fvbpf_gpu_kernel *k = (const void *)h;

		a->name = (uint32_t)addr_cache_get(&j->names, k->name_id);
		a->registers = k->registers;
		memcpy(a->grid, k->grid, sizeof(a->grid));
		memcpy(a->block, k->block, sizeof(a->block));
		a->static_smem = k->static_smem;
		a->dynamic_smem = k->dynamic_smem;
	} else if (h->kind == FVBPF_GPU_MEMCPY) {
		const struct fvbpf_gpu_memcpy *m = (const void *)h;

		a->bytes = m->bytes;
		a->copy_kind = m->copy_kind;
	} else if (h->kind == FVBPF_GPU_MEMSET) {
		a->bytes = ((const struct fvbpf_gpu_memset *)h)->bytes;
	} else if (h->kind == FVBPF_GPU_SYNC) {
		uint32_t type = ((const struct fvbpf_gpu_sync *)h)->type;

		a->copy_kind = type <= UINT8_MAX ? (uint8_t)type : 0;
	}
}

static size_t record_min_size(uint16_t kind)
{
	switch (kind) {
	case FVBPF_GPU_KERNEL: return sizeof(struct fvbpf_gpu_kernel);
	case FVBPF_GPU_MEMCPY: return sizeof(struct fvbpf_gpu_memcpy);
	case FVBPF_GPU_MEMSET: return sizeof(struct fvbpf_gpu_memset);
	case FVBPF_GPU_SYNC: return sizeof(struct fvbpf_gpu_sync);
	case FVBPF_GPU_NAME: return sizeof(struct fvbpf_gpu_hdr) + 1;
	default: return SIZE_MAX;
	}
}

static void on_activity(struct gpu_join *j, const struct fvbpf_gpu_hdr *h)
{
	struct gpu_activity a;
	struct segment *seg;
	uint64_t where;
	uint32_t seq;
	size_t idx;
	int err;

	fill_activity(j, h, &a);
	where = h->correlation ? addr_cache_get(&j->corrs, h->correlation) : 0;
	if (!where) {
		j->outside++; /* launched outside segments, or before we looked */
		return;
	}
	seq = (uint32_t)((where >> 32) - 1);
	idx = (uint32_t)where;
	seg = where == GPU_JOIN_WRITTEN ? NULL : j->find(j->ctx, seq);
	if (!seg) {
		j->late++;
		return;
	}
	if (idx < seg->ncalls) {
		a.call = (int64_t)idx;
		/* Saturating: the target decides how many records name a call. */
		if (seg->calls[idx].gpu_records < UINT32_MAX)
			seg->calls[idx].gpu_records++;
		/* CUPTI's name is authoritative over the host stub's symbol. */
		if (a.kind == FVBPF_GPU_KERNEL && a.name && cuda_api_is_launch(seg->calls[idx].api_id))
			seg->calls[idx].kernel = a.name;
	}
	err = seg_add_gpu(seg, &a);
	if (!err)
		j->joined++;
	else if (err == -ENOSPC)
		j->over_limit++;
}

int gpu_join_chunk(struct gpu_join *j, const uint8_t *data, size_t len, bool last)
{
	const struct fvbpf_gpu_hdr *h;
	size_t off = 0, cap;
	uint8_t *b;
	int ret = 0;

	if (j->resync) {
		/* Out of step: drop the rest of this batch. */
		j->resync = !last;
		return 0;
	}
	if (!len)
		goto batch_end;
	if (j->len + len > j->cap) {
		cap = j->cap ? j->cap : 4096;
		while (cap < j->len + len)
			cap *= 2;
		b = realloc(j->buf, cap);
		if (!b)
			return -ENOMEM;
		j->buf = b;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, data, len);
	j->len += len;
	while (j->len - off >= sizeof(*h)) {
		h = (const void *)(j->buf + off);
		if (h->size < record_min_size(h->kind) || h->size % 8) {
			/* Not a record we know: the stream is out of step. */
			j->bad++;
			j->len = 0;
			j->resync = !last;
			return -EINVAL;
		}
		if (j->len - off < h->size)
			break;
		j->records++;
		if (h->kind == FVBPF_GPU_NAME)
			on_name(j, (const void *)h);
		else
			on_activity(j, h);
		off += h->size;
	}
	memmove(j->buf, j->buf + off, j->len - off);
	j->len -= off;
batch_end:
	if (last && j->len) {
		/* A batch ends on a record boundary: a partial record left
		 * means a chunk of it was lost. */
		j->bad++;
		j->len = 0;
		ret = -EINVAL;
	}
	return ret;
}

void gpu_join_batch_start(struct gpu_join *j)
{
	if (j->len || j->resync)
		j->bad++;
	j->len = 0;
	j->resync = false;
}

uint64_t gpu_join_missing(const struct segment *seg)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < seg->ncalls; i++)
		if (seg->calls[i].correlation && !seg->calls[i].gpu_records &&
		    cuda_api_expects_gpu(seg->calls[i].api_id) && !seg->calls[i].no_return)
			n++;
	return n;
}

void gpu_join_forget(struct gpu_join *j, const struct segment *seg)
{
	uint64_t where;
	size_t i;

	for (i = 0; i < seg->ncalls; i++) {
		uint32_t ids[2] = { seg->calls[i].correlation, seg->calls[i].correlation2 };

		for (size_t k = 0; k < 2; k++) {
			if (!ids[k])
				continue;
			where = addr_cache_get(&j->corrs, ids[k]);
			if (where && where != GPU_JOIN_WRITTEN && (uint32_t)((where >> 32) - 1) == seg->seq) {
				addr_cache_put(&j->corrs, ids[k], GPU_JOIN_WRITTEN);
				j->forgotten++;
			}
		}
	}
	/* Keep the map as big as the calls still waiting: once most entries
	 * are of written segments, drop them (their late records then count
	 * as outside). */
	if (j->forgotten > 4096 && j->forgotten * 2 > j->corrs.n) {
		addr_cache_drop(&j->corrs, GPU_JOIN_WRITTEN);
		j->forgotten = 0;
	}
}

struct gpu_join *gpu_join__new(void)
{
	return calloc(1, sizeof(struct gpu_join));
}

void gpu_join__free(struct gpu_join *p)
{
	if (!p)
		return;
	gpu_join_free(p);
	free(p);
}

struct agent_state *agent_state__new(void)
{
	return calloc(1, sizeof(struct agent_state));
}

void agent_state__free(struct agent_state *p)
{
	free(p);
}
