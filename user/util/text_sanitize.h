/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Text fvbpf did not write itself is hostile: the target chooses its comm
 * and thread names, its symbol and kernel names, the agent's status text,
 * and a region file may hold any bytes.  Every writer makes such text safe
 * here, with one UTF-8 decoder:
 *   - JSON (json_writer.c, json-c users): valid UTF-8 only, each invalid
 *     byte becomes U+FFFD; the JSON writers escape control characters.
 *   - terminal, log and text files a user may cat: valid UTF-8 and no
 *     control characters at all (C0, DEL, C1), shown as "\xNN", so neither an
 *     escape sequence nor a forged line gets through.
 */
#ifndef FVBPF_TEXT_SANITIZE_H
#define FVBPF_TEXT_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* U+FFFD REPLACEMENT CHARACTER in UTF-8. */
#define TEXT_REPLACEMENT "\xef\xbf\xbd"

/*
 * Length of the valid UTF-8 sequence at @p (1 to 4), or 0 when the byte at
 * @p does not start one: overlong forms, UTF-16 surrogates, code points past
 * U+10FFFF and truncated sequences are invalid.  Reads no further than the
 * first byte that breaks the sequence, so a NUL ends it safely.
 */
size_t text_utf8_len(const unsigned char *p, uint32_t *cp);
/* C0 controls, DEL and the C1 controls U+0080..U+009F (terminals obey some). */
bool text_is_control(uint32_t cp);
/*
 * Copy @src into @dst (@dstsz bytes, always NUL-terminated when @dstsz > 0)
 * as valid UTF-8, each invalid byte replaced by U+FFFD.  Truncates between
 * characters, never inside one.  Returns the length written.
 */
size_t text_clean_utf8(char *dst, size_t dstsz, const char *src);
/* The same, and every control character written as "\xNN" (for U+0080..
 * U+009F, its code point).  Safe to print to a terminal. */
size_t text_clean_terminal(char *dst, size_t dstsz, const char *src);
/* Bytes text_clean_utf8() or text_clean_terminal() may need for @src,
 * terminating NUL included (the worst case, 4 bytes per input byte). */
size_t text_clean_bound(const char *src);
/* True when @s is valid UTF-8 without control characters (tab allowed). */
bool text_is_plain(const char *s);

#endif /* FVBPF_TEXT_SANITIZE_H */
