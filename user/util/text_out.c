// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdarg.h>

#include "util/json_writer.h"
#include "util/text_out.h"

void ob_init(struct obuf *o, FILE *f)
{
	o->f = f;
	o->n = 0;
	o->err = 0;
}

int ob_flush(struct obuf *o)
{
	/* The FILE is the writer thread's alone: no lock per write. */
	if (o->n && !o->err && fwrite_unlocked(o->buf, 1, o->n, o->f) != o->n)
		o->err = -(errno ? errno : EIO);
	o->n = 0;
	return o->err;
}

void ob_write_slow(struct obuf *o, const char *s, size_t n)
{
	size_t room;

	while (n) {
		if (o->n == OBUF_SIZE)
			ob_flush(o);
		room = OBUF_SIZE - o->n;
		if (room > n)
			room = n;
		memcpy(o->buf + o->n, s, room);
		o->n += room;
		s += room;
		n -= room;
	}
}

void ob_printf(struct obuf *o, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		ob_write(o, tmp, (size_t)n);
		return;
	}
	/* Longer than any format here writes; still written whole. */
	ob_flush(o);
	va_start(ap, fmt);
	if (!o->err && vfprintf(o->f, fmt, ap) < 0)
		o->err = -(errno ? errno : EIO);
	va_end(ap);
}

static void ob_put_cb(void *ctx, const char *s, size_t n)
{
	ob_write(ctx, s, n);
}

void ob_json_chars(struct obuf *o, const char *s)
{
	json_escape_to(ob_put_cb, o, s);
}

void ob_json_string(struct obuf *o, const char *s)
{
	ob_char(o, '"');
	json_escape_to(ob_put_cb, o, s);
	ob_char(o, '"');
}

void ob_hex(struct obuf *o, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[20], *p = tmp + sizeof(tmp);

	do {
		*--p = digits[v & 15];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	ob_write(o, p, (size_t)(tmp + sizeof(tmp) - p));
}
