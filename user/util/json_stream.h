/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Reading a large JSON file one value at a time, for `fvbpf report` and
 * `fvbpf merge`: the manifest's files[] entries, a summary's rows, a
 * trace's events.  Only one value's text and its json-c tree are held at a
 * time, and both are bounded: at most JS_VALUE_MAX bytes of text, and
 * JS_ITEMS_MAX values and JS_CONTAINERS_MAX objects or arrays inside it
 * (json-c spends about 800 bytes on an empty object, so a text bound alone
 * would let 1 MiB of "{}," become 280 MiB).  Values that are skipped are
 * only scanned.  The file may be gzip-compressed (zlib reads plain files
 * as they are).
 */
#ifndef FVBPF_JSON_STREAM_H
#define FVBPF_JSON_STREAM_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#define JS_VALUE_MAX      (1u << 20) /* bytes of one value parsed */
#define JS_ITEMS_MAX      65536      /* values inside it */
#define JS_CONTAINERS_MAX 4096       /* objects and arrays inside it */
#define JS_KEY_MAX        4096       /* bytes of an object key read */

struct js_reader {
	gzFile gz;
	uint64_t read;          /* bytes decompressed so far */
	uint64_t max_bytes;     /* past this the file is refused (0: no bound) */
	size_t pos, len;
	int eof, too_big;
	unsigned char buf[1 << 16];
};

struct js_text {
	char *p;
	size_t n, cap;
};

/*
 * A reader of @fd (its owner from now on, closed in any case): *@out, or
 * -ENOMEM.  @max_bytes bounds the uncompressed bytes read (0: no bound).
 */
int js_open(struct js_reader **out, int fd, uint64_t max_bytes);
void js_close(struct js_reader *r);
/* Back to the first byte (a second pass). */
int js_rewind(struct js_reader *r);
/* The next byte (-1 at the end) without taking it, after whitespace. */
int js_ws(struct js_reader *r);
/* Take the next byte after whitespace if it is @c: 0, else -EINVAL. */
int js_expect(struct js_reader *r, int c);
/* Nothing but whitespace left: 0, else -EINVAL (or -EFBIG past max_bytes). */
int js_end(struct js_reader *r);
/*
 * The text of the next value into @t (NULL: skip it, no bound), NUL
 * terminated: 0, -EINVAL (not JSON), -EFBIG (more than @max bytes, or the
 * file past max_bytes), -E2BIG (more than JS_ITEMS_MAX values or
 * JS_CONTAINERS_MAX containers inside), -ENOMEM.
 */
int js_value(struct js_reader *r, struct js_text *t, size_t max);
/* json-c's tree of @t's text, or NULL when it is not valid JSON. */
json_object *js_parse(const struct js_text *t);
/*
 * Members of an object or elements of an array: js_first() takes the
 * opening @open ('{' or '[') and returns 1 for an empty one (closed too),
 * 0 when a member follows; js_next() after each member takes ',' (0) or
 * the closing bracket (1).  -EINVAL for anything else.
 */
int js_first(struct js_reader *r, int open);
int js_next(struct js_reader *r, int close);
/* An object key and its ':' into @key (\"\" when not a plain string of
 * fewer than @len bytes, so it matches no key we know): 0 or -errno. */
int js_key(struct js_reader *r, struct js_text *t, char *key, size_t len);
/* Byte offset of the reader, for messages. */
uint64_t js_offset(const struct js_reader *r);
void js_text_free(struct js_text *t);

#endif /* FVBPF_JSON_STREAM_H */
