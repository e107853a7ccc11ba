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
/* Raw varint (base 128, little-endian groups); returns nothing, sets err. */
void pb_varint(struct pb_buf *b, uint64_t v);
void pb_tag(struct pb_buf *b, uint32_t field, enum pb_wire wire);
void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v);   /* uint32/64, enum, bool */
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
