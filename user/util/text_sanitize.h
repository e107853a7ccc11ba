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
 *     escape sequence nor a forged line gets through; nor the invisible
 *     characters that reorder or hide the text around them (bidi
 *     overrides and isolates: "Trojan Source", CVE-2021-42574), shown as
 *     "\uNNNN" (or "\UNNNNNNNN").
 *   - XML and HTML (the SVG pictures, report --html): the same, and the
 *     markup characters as entities.
 */
#ifndef FVBPF_TEXT_SANITIZE_H
#define FVBPF_TEXT_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
 * Invisible characters that reorder, hide or break the text around them:
 * the bidi marks, embeddings, overrides and isolates (U+061C, U+200E,
 * U+200F, U+202A..U+202E, U+2066..U+2069), the line and paragraph
 * separators (U+2028, U+2029), zero-width space, word joiner and the
 * invisible operators (U+200B, U+2060..U+2064), U+FEFF, U+180E, the
 * interlinear annotations (U+FFF9..U+FFFB) and the tag characters
 * (U+E0000..U+E007F).  Not the joiners U+200C, U+200D, which scripts and
 * emoji need and which move nothing.
 */
bool text_is_invisible(uint32_t cp);
/* What no text output writes raw: a control or an invisible character. */
bool text_needs_escape(uint32_t cp);
#define TEXT_ESCAPE_MAX 11
/* @cp as the text outputs show it: "\xNN" up to U+00FF, else "\uNNNN" or
 * "\UNNNNNNNN", into @buf (TEXT_ESCAPE_MAX bytes); its length. */
size_t text_escape_cp(uint32_t cp, char *buf);
/*
 * Copy @src into @dst (@dstsz bytes, always NUL-terminated when @dstsz > 0)
 * as valid UTF-8, each invalid byte replaced by U+FFFD.  Truncates between
 * characters, never inside one.  Returns the length written.
 */
size_t text_clean_utf8(char *dst, size_t dstsz, const char *src);
/* The same, and every control and invisible character escaped
 * (text_escape_cp()).  Safe to print to a terminal. */
size_t text_clean_terminal(char *dst, size_t dstsz, const char *src);
/* At most @n bytes of @s (whole characters) to @f as XML/HTML text: valid
 * UTF-8, controls and invisible characters escaped as text_clean_terminal()
 * does, & < > " ' as entities. */
void text_xml_write(FILE *f, const char *s, size_t n);
/* Bytes text_clean_utf8() or text_clean_terminal() may need for @src,
 * terminating NUL included (the worst case, 4 bytes per input byte). */
size_t text_clean_bound(const char *src);
/* True when @s is valid UTF-8 without control characters (tab allowed)
 * or invisible ones. */
bool text_is_plain(const char *s);

#endif /* FVBPF_TEXT_SANITIZE_H */
