/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A minimal protocol buffer encoder: varints and length-delimited fields
 * into a growable buffer, nested messages by back-patching their length.
 * Enough for Perfetto's TracePacket stream (user/pftrace_writer.c).
 */
#ifndef FVBPF_PB_WRITER_H
#define FVBPF_PB_WRITER_H

#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

struct pb_buf {
	uint8_t *p;
	size_t len, cap;
	int err;          /* -ENOMEM once an allocation failed; writes stop */
};

void pb_init(struct pb_buf *b);
void pb_free(struct pb_buf *b);
void pb_reset(struct pb_buf *b);
/* pb_varint() when the buffer has no room for ten more bytes. */
void pb_varint_slow(struct pb_buf *b, uint64_t v);

/* Raw varint (base 128, little-endian groups); returns nothing, sets err.
 * Inline: a pftrace slice is a dozen varints, and the calls and the room
 * check were a third of the writer (perf). */
static inline void pb_varint(struct pb_buf *b, uint64_t v)
{
	uint8_t *o;

	if (b->err || b->cap - b->len < 10) {
		pb_varint_slow(b, v);
		return;
	}
	o = b->p + b->len;
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	b->len = (size_t)(o - b->p);
}

static inline void pb_tag(struct pb_buf *b, uint32_t field, enum pb_wire wire)
{
	pb_varint(b, (uint64_t)field << 3 | (uint32_t)wire);
}

/* uint32/64, enum, bool */
static inline void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	pb_tag(b, field, PB_VARINT);
	pb_varint(b, v);
}
void pb_int(struct pb_buf *b, uint32_t field, int64_t v);     /* int32/64 (two's complement) */
void pb_fixed64(struct pb_buf *b, uint32_t field, uint64_t v);
void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t n);
void pb_string(struct pb_buf *b, uint32_t field, const char *s);
/* A nested message: pb_begin() returns a mark for pb_end(), which writes its length. */
size_t pb_begin(struct pb_buf *b, uint32_t field);
void pb_end(struct pb_buf *b, size_t mark);
/* Bytes a varint of @v takes. */
size_t pb_varint_len(uint64_t v);

#endif /* FVBPF_PB_WRITER_H */
