// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_writer.h"
#include "util/text_sanitize.h"

struct sink {
	FILE *f;
	char *out;
	size_t outsz, len;
};

static void put(void *ctx, const char *s, size_t n)
{
	struct sink *k = ctx;

	if (k->f) {
		fwrite(s, 1, n, k->f);
	} else if (k->out) {
		size_t room = k->len < k->outsz ? k->outsz - k->len - 1 : 0;

		memcpy(k->out + k->len, s, n < room ? n : room);
	}
	k->len += n;
}

/* Bytes that go out as they are: printable ASCII but the two JSON escapes. */
static inline int plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

void json_escape_to(json_put_fn put_fn, void *ctx, const char *str)
{
	const unsigned char *p = (const unsigned char *)(str ? str : ""), *run;
	char buf[16];
	uint32_t cp;
	size_t n;

	while (*p) {
		/* Names are mostly plain ASCII: one copy per run, not per byte. */
		for (run = p; plain(*p); p++)
			;
		if (p > run)
			put_fn(ctx, (const char *)run, (size_t)(p - run));
		if (!*p)
			break;
		switch (*p) {
		case '"': put_fn(ctx, "\\\"", 2); p++; continue;
		case '\\': put_fn(ctx, "\\\\", 2); p++; continue;
		case '\n': put_fn(ctx, "\\n", 2); p++; continue;
		case '\r': put_fn(ctx, "\\r", 2); p++; continue;
		case '\t': put_fn(ctx, "\\t", 2); p++; continue;
		case '\b': put_fn(ctx, "\\b", 2); p++; continue;
		case '\f': put_fn(ctx, "\\f", 2); p++; continue;
		}
		n = text_utf8_len(p, &cp);
		if (!n) {
			put_fn(ctx, "\\ufffd", 6);
			p++;
			continue;
		}
		/* Controls, DEL and C1 escaped: a viewer's terminal obeys some;
		 * and the invisible characters, so that the file itself holds
		 * none (the value decoded is still the target's text). */
		if (cp > 0xffff && text_is_invisible(cp)) {
			snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xd800u + ((cp - 0x10000) >> 10),
				 0xdc00u + ((cp - 0x10000) & 0x3ff));
			put_fn(ctx, buf, 12);
		} else if (text_needs_escape(cp)) {
			snprintf(buf, sizeof(buf), "\\u%04x", (unsigned int)cp);
			put_fn(ctx, buf, 6);
		} else {
			put_fn(ctx, (const char *)p, n);
		}
		p += n;
	}
}

static void escape(struct sink *k, const char *str)
{
	put(k, "\"", 1);
	json_escape_to(put, k, str);
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
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);

	fwrite(tmp, 1, (size_t)n, f);
}

json_object *json_string_obj(const char *s)
{
	size_t size = text_clean_bound(s);
	json_object *o;
	char *clean;

	/*
	 * json-c copies bytes as they are: give it valid UTF-8 only.  And no
	 * control character, not even one json-c would escape: people read
	 * summaries and the manifest with cat and `jq -r`, which decodes.
	 */
	clean = malloc(size);
	if (!clean)
		return json_object_new_string(TEXT_REPLACEMENT);
	text_clean_terminal(clean, size, s);
	o = json_object_new_string(clean);
	free(clean);
	return o;
}
