/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Ring-record decoding and dispatch. */
#ifndef FVBPF_RING_EVENTS_H
#define FVBPF_RING_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/session.h"

/* Decode one ring record of @size bytes and apply it to @s.  The record is
 * untrusted: malformed ones are counted in s->bad_records.  Needs no live
 * BPF session.  Always returns 0 (libbpf stops consuming otherwise). */
int events_handle(struct session *s, const void *data, size_t size);
/* Whether events_handle() knows record type @type, and the size below
 * which it counts one bad (0: its handler checks). */
bool events_kind(uint16_t type, size_t *min_size);
/* A CUDA call's entry and return, from BPF's ring or the launch hook's
 * (callback_ops.c), the record already checked for size. */
struct fvbpf_api_enter;
struct fvbpf_api_exit;
int events_api_enter(struct session *s, struct session_target *t, const struct fvbpf_api_enter *e);
void events_api_exit(struct session *s, struct session_target *t, const struct fvbpf_api_exit *x);
/* events_handle() as a libbpf ring_buffer_sample_fn, @ctx the session. */
/* --window: close the windows that ended before @ts and open the next. */
void window_cut_until(struct session *s, struct session_target *t, uint64_t ts);
/* --window: cut windows that ended a while ago though no record came. */
void window_idle_cut(struct session *s, struct session_target *t);
int events_ring_cb(void *ctx, void *data, size_t size);
/* A paired CUDA call: into the open segment, or counted as outside. */
void events_record_call(struct session *s, struct session_target *t, struct api_call *c);

#endif /* FVBPF_RING_EVENTS_H */
