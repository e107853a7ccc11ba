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
/* events_handle() as a libbpf ring_buffer_sample_fn, @ctx the session;
 * -EAGAIN, which stops libbpf, at the end of a bounded pass
 * (ring_consume.c). */
int events_ring_cb(void *ctx, void *data, size_t size);

#endif /* FVBPF_RING_EVENTS_H */
