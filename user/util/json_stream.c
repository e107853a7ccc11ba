// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* One JSON value at a time out of a large file, bounded (json_stream.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/json_stream.h"

/* Skipped values are scanned with a stack of their brackets this deep. */
#define JS_DEPTH_MAX 256

int js_open(struct js_reader **out, int fd, uint64_t max_bytes)
{
	struct js_reader *r;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		return -ENOMEM;
	}
	r->gz = gzdopen(fd, "rb");
	if (!r->gz) {
		close(fd);
		free(r);
		return -ENOMEM;
	}
	gzbuffer(r->gz, 1 << 16);
	r->max_bytes = max_bytes;
	*out = r;
	return 0;
}

void js_close(struct js_reader *r)
{
	if (!r)
		return;
	gzclose(r->gz);
	free(r);
}

int js_rewind(struct js_reader *r)
{
	if (gzrewind(r->gz))
		return -EIO;
	r->read = 0;
	r->pos = r->len = 0;
	r->eof = r->too_big = 0;
	return 0;
}

static int fill(struct js_reader *r)
{
	int n;

	if (r->eof)
		return -1;
	n = gzread(r->gz, r->buf, sizeof(r->buf));
	if (n <= 0) {
		r->eof = 1; /* the end, or a read or gzip error: the text is cut */
		return -1;
	}
	r->read += (uint64_t)n;
	if (r->max_bytes && r->read > r->max_bytes) {
		r->eof = r->too_big = 1;
		return -1;
	}
	r->pos = 0;
	r->len = (size_t)n;
	return r->buf[0];
}

static int peek(struct js_reader *r)
{
	return r->pos < r->len ? r->buf[r->pos] : fill(r);
}

static int get(struct js_reader *r)
{
	int c = peek(r);

	if (c >= 0)
		r->pos++;
	return c;
}

/* The error for text that stops early: cut, or past the file's bound. */
static int cut(const struct js_reader *r)
{
	return r->too_big ? -EFBIG : -EINVAL;
}

int js_ws(struct js_reader *r)
{
	int c;

	while ((c = peek(r)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		r->pos++;
	return c;
}

int js_expect(struct js_reader *r, int c)
{
	int got = js_ws(r);

	if (got < 0)
		return cut(r);
	if (got != c)
		return -EINVAL;
	r->pos++;
	return 0;
}

int js_end(struct js_reader *r)
{
	if (js_ws(r) >= 0)
		return -EINVAL;
	return r->too_big ? -EFBIG : 0;
}

uint64_t js_offset(const struct js_reader *r)
{
	return r->read - (r->len - r->pos);
}

void js_text_free(struct js_text *t)
{
	free(t->p);
	memset(t, 0, sizeof(*t));
}

static int put(struct js_text *t, int c, size_t max)
{
	size_t cap;
	char *np;

	if (!t)
		return 0;
	if (t->n + 2 > max)
		return -EFBIG;
	if (t->n + 2 > t->cap) {
		/* doubling, but never past what @max needs */
		cap = t->cap ? t->cap * 2 : 4096;
		if (cap > max)
			cap = max;
		np = realloc(t->p, cap);
		if (!np)
			return -ENOMEM;
		t->p = np;
		t->cap = cap;
	}
	t->p[t->n++] = (char)c;
	t->p[t->n] = 0;
	return 0;
}

/* A scalar (number, true, false, null): up to the next delimiter. */
static int scalar(struct js_reader *r, struct js_text *t, size_t max)
{
	int c, ret, n = 0;

	while ((c = peek(r)) >= 0 && !strchr(",]}: \t\r\n", c)) {
		/* what numbers and the three words are made of: anything else
		 * is not JSON, even where the value is only skipped */
		if (!strchr("0123456789+-.eEtrufalsn", c))
			return -EINVAL;
		ret = put(t, c, max);
		if (ret)
			return ret;
		r->pos++;
		n++;
	}
	return n ? 0 : cut(r);
}

struct scan {
	unsigned char open[JS_DEPTH_MAX]; /* the bracket each level opened with */
	int depth;
	size_t items, containers;
	bool in_str, esc;
};

/* One byte of a string, object or array; 1 once the value is complete. */
static int scan_byte(struct scan *s, int c, bool bounded)
{
	if (s->in_str) {
		if (s->esc)
			s->esc = false;
		else if (c == '\\')
			s->esc = true;
		else if (c == '"')
			s->in_str = false;
		else if ((unsigned char)c < 0x20)
			return -EINVAL; /* a raw control character ends no valid string */
		return !s->in_str && !s->depth;
	}
	switch (c) {
	case '"':
		s->in_str = true;
		return 0;
	case '{':
	case '[':
		if (s->depth == JS_DEPTH_MAX)
			return -EINVAL;
		s->open[s->depth++] = (unsigned char)c;
		s->items++;
		if (bounded && ++s->containers > JS_CONTAINERS_MAX)
			return -E2BIG;
		break;
	case '}':
	case ']':
		if (!s->depth || s->open[s->depth - 1] != (c == '}' ? '{' : '['))
			return -EINVAL;
		return --s->depth == 0;
	case ',':
		s->items++;
		break;
	default:
		break;
	}
	return bounded && s->items > JS_ITEMS_MAX ? -E2BIG : 0;
}

int js_value(struct js_reader *r, struct js_text *t, size_t max)
{
	struct scan s = { .depth = 0 };
	int c, ret;

	if (t)
		t->n = 0;
	c = js_ws(r);
	if (c < 0)
		return cut(r);
	if (c != '{' && c != '[' && c != '"')
		return scalar(r, t, max);
	for (;;) {
		c = get(r);
		if (c < 0)
			return cut(r);
		ret = put(t, c, max);
		if (!ret)
			ret = scan_byte(&s, c, t != NULL);
		if (ret)
			return ret < 0 ? ret : 0;
	}
}

json_object *js_parse(const struct js_text *t)
{
	struct json_tokener *tok;
	json_object *o;

	if (!t->n)
		return NULL;
	tok = json_tokener_new();
	if (!tok)
		return NULL;
	/* the NUL too: it ends a number or word at the very end, which
	 * json-c would otherwise wait on for more digits */
	o = json_tokener_parse_ex(tok, t->p, (int)t->n + 1);
	if (o && (size_t)json_tokener_get_parse_end(tok) < t->n) {
		json_object_put(o); /* "1 2" or "{} x": more than one value */
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

int js_first(struct js_reader *r, int open)
{
	int ret = js_expect(r, open);

	if (ret)
		return ret;
	if (js_ws(r) == (open == '{' ? '}' : ']')) {
		r->pos++;
		return 1;
	}
	return 0;
}

int js_next(struct js_reader *r, int close)
{
	int c = js_ws(r);

	if (c < 0)
		return cut(r);
	r->pos++;
	if (c == close)
		return 1;
	return c == ',' ? 0 : -EINVAL;
}

int js_key(struct js_reader *r, struct js_text *t, char *key, size_t len)
{
	json_object *k;
	int ret;

	key[0] = 0;
	if (js_ws(r) != '"')
		return js_ws(r) < 0 ? cut(r) : -EINVAL;
	ret = js_value(r, t, JS_KEY_MAX);
	if (ret)
		return ret;
	k = js_parse(t);
	if (!k || !json_object_is_type(k, json_type_string)) {
		json_object_put(k);
		return -EINVAL;
	}
	/* a key with a NUL inside (\u0000) matches none */
	if ((size_t)json_object_get_string_len(k) < len &&
	    strlen(json_object_get_string(k)) == (size_t)json_object_get_string_len(k))
		strcpy(key, json_object_get_string(k));
	json_object_put(k);
	return js_expect(r, ':');
}
