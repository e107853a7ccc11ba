/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A minimal streaming JSON writer for traces, which can hold millions of
 * events: nothing is built in memory.  Summaries use json-c instead.
 */
#ifndef FVBPF_JSON_WRITER_H
#define FVBPF_JSON_WRITER_H

#include <stdint.h>
#include <stdio.h>

/* Write @s as a quoted JSON string (RFC 8259 escapes; invalid UTF-8 -> U+FFFD). */
void json_write_string(FILE *f, const char *s);
/* Escape into a buffer; returns the length it needed (like snprintf). */
size_t json_escape(char *out, size_t outsz, const char *s);
/* Nanoseconds as microseconds with three decimals, e.g. 1234.567 */
void json_write_us(FILE *f, uint64_t ns);

#endif /* FVBPF_JSON_WRITER_H */
