// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/pftrace/pb_writer.h"

void pb_init(struct pb_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void pb_free(struct pb_buf *b)
{
	free(b->p);
	pb_init(b);
}

void pb_reset(struct pb_buf *b)
{
	b->len = 0;
}

static int pb_room(struct pb_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->err)
		return -1;
	if (n <= b->cap - b->len)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->err = -ENOMEM;
			return -1;
		}
		cap *= 2;
	}
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

size_t pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t varint_put(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

void pb_varint_slow(struct pb_buf *b, uint64_t v)
{
	if (pb_room(b, 10))
		return;
	b->len += varint_put(b->p + b->len, v);
}

void pb_int(struct pb_buf *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

void pb_fixed64(struct pb_buf *b, uint32_t field, uint64_t v)
{
	int i;

	pb_tag(b, field, PB_I64);
	if (pb_room(b, 8))
		return;
	for (i = 0; i < 8; i++)
		b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t n)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, n);
	if (pb_room(b, n))
		return;
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
}

void pb_string(struct pb_buf *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

/* One byte is reserved for the length; pb_end() moves the body when it needs more. */
size_t pb_begin(struct pb_buf *b, uint32_t field)
{
	pb_tag(b, field, PB_LEN);
	if (pb_room(b, 1))
		return 0;
	b->p[b->len++] = 0;
	return b->len;
}

void pb_end(struct pb_buf *b, size_t mark)
{
	size_t body, extra;

	if (b->err || !mark || mark > b->len)
		return;
	body = b->len - mark;
	extra = pb_varint_len(body) - 1;
	if (extra) {
		if (pb_room(b, extra))
			return;
		memmove(b->p + mark + extra, b->p + mark, body);
		b->len += extra;
	}
	varint_put(b->p + mark - 1, body);
}
