/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A minimal streaming JSON writer for traces, which can hold millions of
 * events: nothing is built in memory.  Summaries and the manifest use
 * json-c, through json_string_obj() for every string.  Whatever bytes a
 * string holds, the output is valid JSON (see text_sanitize.h).
 */
#ifndef FVBPF_JSON_WRITER_H
#define FVBPF_JSON_WRITER_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef void (*json_put_fn)(void *ctx, const char *s, size_t n);
/* @s escaped (no quotes) through @put in runs: the one escaper of the trace
 * writers, whatever they write to. */
void json_escape_to(json_put_fn put, void *ctx, const char *s);
/* Write @s as a quoted JSON string (RFC 8259 escapes, DEL and C1 too; invalid UTF-8 -> U+FFFD). */
void json_write_string(FILE *f, const char *s);
/* Escape into a buffer; returns the length it needed (like snprintf). */
size_t json_escape(char *out, size_t outsz, const char *s);
/* A json-c string of @s made valid UTF-8 without control characters, even
 * decoded (json-c copies bytes as they are; see text_clean_terminal()). */
json_object *json_string_obj(const char *s);
/* Nanoseconds as microseconds with three decimals, e.g. 1234.567 */
void json_write_us(FILE *f, uint64_t ns);

#endif /* FVBPF_JSON_WRITER_H */
