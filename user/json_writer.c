// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <inttypes.h>
#include <string.h>

#include "json_writer.h"

struct sink {
	FILE *f;
	char *out;
	size_t outsz, len;
};

static void put(struct sink *k, const char *s, size_t n)
{
	if (k->f) {
		fwrite(s, 1, n, k->f);
	} else if (k->out) {
		size_t room = k->len < k->outsz ? k->outsz - k->len - 1 : 0;

		memcpy(k->out + k->len, s, n < room ? n : room);
	}
	k->len += n;
}

/* Length of the valid UTF-8 sequence at @p, or 0 when it is not valid. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, cp = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, cp = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

static void escape(struct sink *k, const char *str)
{
	const unsigned char *p = (const unsigned char *)(str ? str : "");
	char buf[8];
	size_t n;

	put(k, "\"", 1);
	while (*p) {
		switch (*p) {
		case '"': put(k, "\\\"", 2); p++; continue;
		case '\\': put(k, "\\\\", 2); p++; continue;
		case '\n': put(k, "\\n", 2); p++; continue;
		case '\r': put(k, "\\r", 2); p++; continue;
		case '\t': put(k, "\\t", 2); p++; continue;
		case '\b': put(k, "\\b", 2); p++; continue;
		case '\f': put(k, "\\f", 2); p++; continue;
		}
		if (*p < 0x20 || *p == 0x7f) {
			snprintf(buf, sizeof(buf), "\\u%04x", *p);
			put(k, buf, 6);
			p++;
			continue;
		}
		n = utf8_len(p);
		if (!n) {
			put(k, "\\ufffd", 6);
			p++;
			continue;
		}
		put(k, (const char *)p, n);
		p += n;
	}
	put(k, "\"", 1);
}

void json_write_string(FILE *f, const char *s)
{
	struct sink k = { .f = f };

	escape(&k, s);
}

size_t json_escape(char *out, size_t outsz, const char *s)
{
	struct sink k = { .out = out, .outsz = outsz };

	escape(&k, s);
	if (outsz)
		out[k.len < outsz ? k.len : outsz - 1] = '\0';
	return k.len;
}

void json_write_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}
