// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json_writer.h"
#include "text_sanitize.h"

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

static void escape(struct sink *k, const char *str)
{
	const unsigned char *p = (const unsigned char *)(str ? str : "");
	char buf[8];
	uint32_t cp;
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
		n = text_utf8_len(p, &cp);
		if (!n) {
			put(k, "\\ufffd", 6);
			p++;
			continue;
		}
		/* Controls, DEL and C1 escaped: a viewer's terminal obeys some. */
		if (text_is_control(cp)) {
			snprintf(buf, sizeof(buf), "\\u%04x", (unsigned int)cp);
			put(k, buf, 6);
		} else {
			put(k, (const char *)p, n);
		}
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
