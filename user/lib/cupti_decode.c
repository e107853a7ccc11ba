// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdlib.h>
#include <string.h>

#include "cupti_decode.h"

#ifdef FVBPF_HAVE_CUPTI
#include <cupti_activity.h>

/* CUPTI's status for "no more records in this buffer". */
#define NEXT_DONE CUPTI_ERROR_MAX_LIMIT_REACHED

static uint32_t intern(struct cupti_decoder *d, const char *name, int *is_new)
{
	char **v;
	size_t i;

	*is_new = 0;
	/* Few distinct kernels per job: a scan from the newest is enough. */
	for (i = d->names.n; i > 0; i--)
		if (!strcmp(d->names.names[i - 1], name))
			return (uint32_t)i;
	if (d->names.n == d->names.cap) {
		v = realloc(d->names.names, (d->names.cap ? d->names.cap * 2 : 64) * sizeof(*v));
		if (!v)
			return 0;
		d->names.names = v;
		d->names.cap = d->names.cap ? d->names.cap * 2 : 64;
	}
	d->names.names[d->names.n] = strdup(name);
	if (!d->names.names[d->names.n])
		return 0;
	*is_new = 1;
	return (uint32_t)++d->names.n;
}

static void emit_name(struct cupti_decoder *d, uint32_t id, const char *name)
{
	uint8_t buf[sizeof(struct fvbpf_gpu_hdr) + FVBPF_GPU_NAME_MAX];
	struct fvbpf_gpu_name *r = (void *)buf;
	size_t len = strnlen(name, FVBPF_GPU_NAME_MAX - 1), size;

	size = (sizeof(r->hdr) + len + 1 + 7) & ~(size_t)7;
	memset(buf, 0, size);
	r->hdr.kind = FVBPF_GPU_NAME;
	r->hdr.size = (uint16_t)size;
	r->hdr.correlation = id;
	memcpy(r->name, name, len);
	d->emit(r, size, d->ctx);
}

static void span(struct cupti_decoder *d, struct fvbpf_gpu_span *s, uint16_t kind, uint16_t size,
		 uint32_t corr, uint64_t start, uint64_t end, uint32_t dev, uint32_t ctx,
		 uint32_t stream)
{
	s->hdr.kind = kind;
	s->hdr.size = size;
	s->hdr.correlation = corr;
	s->start = start + (uint64_t)d->clock_offset;
	s->end = end + (uint64_t)d->clock_offset;
	s->device = dev;
	s->context = ctx;
	s->stream = stream;
}

static void kernel(struct cupti_decoder *d, const CUpti_ActivityKernel10 *k)
{
	struct fvbpf_gpu_kernel r;
	int is_new = 0;

	memset(&r, 0, sizeof(r));
	r.name_id = k->name ? intern(d, k->name, &is_new) : 0;
	if (is_new)
		emit_name(d, r.name_id, k->name);
	span(d, &r.s, FVBPF_GPU_KERNEL, sizeof(r), k->correlationId, k->start, k->end, k->deviceId,
	     k->contextId, k->streamId);
	r.registers = k->registersPerThread;
	r.grid[0] = k->gridX; r.grid[1] = k->gridY; r.grid[2] = k->gridZ;
	r.block[0] = k->blockX; r.block[1] = k->blockY; r.block[2] = k->blockZ;
	r.static_smem = k->staticSharedMemory;
	r.dynamic_smem = k->dynamicSharedMemory;
	r.graph_id = k->graphId;
	d->emit(&r, sizeof(r), d->ctx);
}

static void memcpy_rec(struct cupti_decoder *d, const CUpti_ActivityMemcpy6 *m)
{
	struct fvbpf_gpu_memcpy r;

	memset(&r, 0, sizeof(r));
	span(d, &r.s, FVBPF_GPU_MEMCPY, sizeof(r), m->correlationId, m->start, m->end, m->deviceId,
	     m->contextId, m->streamId);
	r.bytes = m->bytes;
	r.copy_kind = m->copyKind;
	r.src_kind = m->srcKind;
	r.dst_kind = m->dstKind;
	d->emit(&r, sizeof(r), d->ctx);
}

static void memset_rec(struct cupti_decoder *d, const CUpti_ActivityMemset4 *m)
{
	struct fvbpf_gpu_memset r;

	memset(&r, 0, sizeof(r));
	span(d, &r.s, FVBPF_GPU_MEMSET, sizeof(r), m->correlationId, m->start, m->end, m->deviceId,
	     m->contextId, m->streamId);
	r.bytes = m->bytes;
	r.value = m->value;
	d->emit(&r, sizeof(r), d->ctx);
}

static void sync_rec(struct cupti_decoder *d, const CUpti_ActivitySynchronization2 *s)
{
	struct fvbpf_gpu_sync r;

	memset(&r, 0, sizeof(r));
	span(d, &r.s, FVBPF_GPU_SYNC, sizeof(r), s->correlationId, s->start, s->end, 0,
	     s->contextId, s->streamId);
	r.type = s->type;
	d->emit(&r, sizeof(r), d->ctx);
}

long cupti_decode_buffer(struct cupti_decoder *d, uint8_t *buf, size_t valid)
{
	CUpti_Activity *rec = NULL;
	long n = 0;
	int ret;

	if (!valid)
		return 0;
	while ((ret = d->next(buf, valid, (void **)&rec)) == CUPTI_SUCCESS) {
		n++;
		d->records++;
		switch (rec->kind) {
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			kernel(d, (const CUpti_ActivityKernel10 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			memcpy_rec(d, (const CUpti_ActivityMemcpy6 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			memset_rec(d, (const CUpti_ActivityMemset4 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
			sync_rec(d, (const CUpti_ActivitySynchronization2 *)rec);
			break;
		default:
			d->skipped++;
		}
	}
	return ret == NEXT_DONE ? n : -1;
}

#else /* !FVBPF_HAVE_CUPTI */

long cupti_decode_buffer(struct cupti_decoder *d, uint8_t *buf, size_t valid)
{
	(void)d;
	(void)buf;
	(void)valid;
	return -1;
}

#endif

int64_t cupti_clock_offset(const uint64_t *before, const uint64_t *cupti, const uint64_t *after,
			   size_t n)
{
	uint64_t best = UINT64_MAX, gap;
	int64_t offset = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (after[i] < before[i])
			continue; /* not a sample */
		gap = after[i] - before[i];
		if (gap < best) {
			best = gap;
			offset = (int64_t)(before[i] + gap / 2) - (int64_t)cupti[i];
		}
	}
	return offset;
}

void cupti_decoder_reset_names(struct cupti_decoder *d)
{
	size_t i;

	for (i = 0; i < d->names.n; i++)
		free(d->names.names[i]);
	free(d->names.names);
	memset(&d->names, 0, sizeof(d->names));
}
