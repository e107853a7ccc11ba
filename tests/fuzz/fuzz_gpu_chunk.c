// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The reassembly of the agent's GPU record stream from ring-buffer chunks
 * and its join to calls (user/pipeline/gpu_join.c), driven as the consumer drives
 * it: chunks of a batch (what FVBPF_EV_GPU_CHUNK records carry, their
 * length checked as the consumer checks it), calls noted with their
 * correlations, segments written (forgotten) in between.
 *
 * Input: a sequence of operations, each one byte of opcode then its bytes:
 *   op & 3 == 0: a chunk: u16 length (LE, cut to FVBPF_GPU_CHUNK and to the
 *                input left), then that many bytes; op & 4: index 0 (first
 *                chunk of a batch), op & 8: last chunk of its batch
 *   op & 3 == 1: note a call: u32 correlation, u8 segment, u8 call index
 *   op & 3 == 2: segment (op >> 2) & 1 is written: forgotten and replaced
 *   op & 3 == 3: a call appended to segment (op >> 2) & 1 (u8 api id)
 */
#include "fuzz.h" /* first: it asks for _GNU_SOURCE */

#include <string.h>

#include "probes/cuda_api.h"
#include "fvbpf_events.h"
#include "pipeline/gpu_join.h"
#include "util/name_table.h"
#include "pipeline/segment.h"

#define NSEG 2
#define MAX_CALLS 64

struct store {
	struct segment *segs[NSEG];
	uint32_t next_seq;
};

static struct segment *find(void *ctx, uint32_t seq)
{
	struct store *s = ctx;
	int i;

	for (i = 0; i < NSEG; i++)
		if (s->segs[i] && s->segs[i]->seq == seq)
			return s->segs[i];
	return NULL;
}

static struct segment *seg_new(struct store *s)
{
	struct segment *seg = calloc(1, sizeof(*seg));

	if (!seg)
		abort();
	seg->pid = 4242;
	seg->seq = s->next_seq++;
	return seg;
}

static void add_call(struct segment *seg, uint32_t api_id)
{
	struct api_call *n;

	if (seg->ncalls == MAX_CALLS)
		return;
	if (seg->ncalls == seg->capcalls) {
		seg->capcalls = seg->capcalls ? seg->capcalls * 2 : 8;
		n = realloc(seg->calls, seg->capcalls * sizeof(*n));
		if (!n)
			abort();
		seg->calls = n;
	}
	memset(&seg->calls[seg->ncalls], 0, sizeof(*n));
	seg->calls[seg->ncalls].api_id = api_id;
	seg->calls[seg->ncalls].correlation = (uint32_t)seg->ncalls + 1;
	seg->ncalls++;
}

struct input {
	const uint8_t *p, *end;
};

static bool take(struct input *in, void *out, size_t n)
{
	if ((size_t)(in->end - in->p) < n)
		return false;
	memcpy(out, in->p, n);
	in->p += n;
	return true;
}

static void op_chunk(struct gpu_join *j, struct input *in, uint8_t op)
{
	uint16_t len;
	size_t left;
	uint8_t *copy;

	if (!take(in, &len, sizeof(len)))
		return;
	left = (size_t)(in->end - in->p);
	if (len > FVBPF_GPU_CHUNK)
		len = FVBPF_GPU_CHUNK;
	if (len > left)
		len = (uint16_t)left;
	/* An exact-size copy, so ASan sees any read past the chunk. */
	copy = malloc(len ? len : 1);
	if (!copy)
		abort();
	memcpy(copy, in->p, len);
	in->p += len;
	if (op & 4)
		gpu_join_batch_start(j);
	gpu_join_chunk(j, copy, len, op & 8);
	free(copy);
}

static void op_note(struct gpu_join *j, struct store *s, struct input *in)
{
	uint32_t corr;
	uint8_t seg, idx;

	if (!take(in, &corr, 4) || !take(in, &seg, 1) || !take(in, &idx, 1))
		return;
	if (s->segs[seg % NSEG])
		gpu_join_note_call(j, corr, s->segs[seg % NSEG]->seq, idx);
}

static void op_written(struct gpu_join *j, struct store *s, int i)
{
	gpu_join_missing(s->segs[i]);
	gpu_join_forget(j, s->segs[i]);
	segment_free(s->segs[i]);
	s->segs[i] = seg_new(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, data + size };
	struct name_table names;
	struct store s = { 0 };
	struct gpu_join j;
	uint8_t op, api;
	int i;

	name_table_init(&names);
	gpu_join_init(&j, &names, find, &s);
	for (i = 0; i < NSEG; i++)
		s.segs[i] = seg_new(&s);
	while (take(&in, &op, 1)) {
		switch (op & 3) {
		case 0:
			op_chunk(&j, &in, op);
			break;
		case 1:
			op_note(&j, &s, &in);
			break;
		case 2:
			op_written(&j, &s, (op >> 2) & 1);
			break;
		default:
			if (take(&in, &api, 1))
				add_call(s.segs[(op >> 2) & 1], api);
		}
	}
	for (i = 0; i < NSEG; i++)
		segment_free(s.segs[i]);
	gpu_join_free(&j);
	name_table_free(&names);
	return 0;
}
