/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Small string helpers that several stages had each written for
 * themselves: a bounded copy, and a target-controlled string made safe to
 * print.
 */
#ifndef FVBPF_TEXT_COPY_H
#define FVBPF_TEXT_COPY_H

#include <stddef.h>
#include <string.h>

#include "util/text_sanitize.h"

/* Copy @n bytes of @src into @buf (@len bytes), cut to fit, terminated. */
static inline void text_copy_out(char *buf, size_t len, const char *src, size_t n)
{
	if (!len)
		return;
	if (n >= len)
		n = len - 1;
	memcpy(buf, src, n);
	buf[n] = '\0';
}

/* @s for a message or a text file a user may cat (a path, a comm, a kernel
 * name): target-controlled bytes made printable, no control characters,
 * valid UTF-8, into @buf, which is returned. */
static inline const char *text_shown(char *buf, size_t len, const char *s)
{
	text_clean_terminal(buf, len, s);
	return buf;
}

#endif /* FVBPF_TEXT_COPY_H */
