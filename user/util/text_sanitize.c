// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdio.h>
#include <string.h>

#include "util/text_sanitize.h"

size_t text_utf8_len(const unsigned char *p, uint32_t *cp)
{
	uint32_t c;
	size_t n, i;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, c = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, c = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF. */
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	*cp = c;
	return n;
}

bool text_is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

bool text_is_invisible(uint32_t cp)
{
	return cp == 0x061c || cp == 0x180e || cp == 0x200b || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff ||
	       (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0xe0000 && cp <= 0xe007f);
}

bool text_needs_escape(uint32_t cp)
{
	return text_is_control(cp) || text_is_invisible(cp);
}

size_t text_escape_cp(uint32_t cp, char *buf)
{
	int n;

	if (cp <= 0xff)
		n = snprintf(buf, TEXT_ESCAPE_MAX, "\\x%02x", (unsigned int)cp);
	else if (cp <= 0xffff)
		n = snprintf(buf, TEXT_ESCAPE_MAX, "\\u%04x", (unsigned int)cp);
	else
		n = snprintf(buf, TEXT_ESCAPE_MAX, "\\U%08x", (unsigned int)cp);
	return n > 0 ? (size_t)n : 0;
}

/* Append @n bytes if they all fit before the terminating NUL. */
static bool append(char *dst, size_t dstsz, size_t *len, const char *s, size_t n)
{
	if (*len + n >= dstsz)
		return false;
	memcpy(dst + *len, s, n);
	*len += n;
	return true;
}

static size_t clean(char *dst, size_t dstsz, const char *src, bool terminal)
{
	const unsigned char *p = (const unsigned char *)(src ? src : "");
	size_t len = 0, n;
	char esc[TEXT_ESCAPE_MAX];
	uint32_t cp;
	bool ok;

	if (!dstsz)
		return 0;
	while (*p) {
		n = text_utf8_len(p, &cp);
		if (!n) {
			ok = append(dst, dstsz, &len, TEXT_REPLACEMENT, 3);
			n = 1;
		} else if (terminal && text_needs_escape(cp)) {
			ok = append(dst, dstsz, &len, esc, text_escape_cp(cp, esc));
		} else {
			ok = append(dst, dstsz, &len, (const char *)p, n);
		}
		if (!ok)
			break;
		p += n;
	}
	dst[len] = '\0';
	return len;
}

size_t text_clean_utf8(char *dst, size_t dstsz, const char *src)
{
	return clean(dst, dstsz, src, false);
}

size_t text_clean_terminal(char *dst, size_t dstsz, const char *src)
{
	return clean(dst, dstsz, src, true);
}

size_t text_clean_bound(const char *src)
{
	size_t n = src ? strlen(src) : 0;

	/* Only a string of most of the address space could exceed this. */
	return n < (SIZE_MAX - 1) / 4 ? n * 4 + 1 : SIZE_MAX;
}

bool text_is_plain(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	size_t n;

	while (*p) {
		n = text_utf8_len(p, &cp);
		if (!n || (text_is_control(cp) && cp != '\t') || text_is_invisible(cp))
			return false;
		p += n;
	}
	return true;
}

void text_xml_write(FILE *f, const char *s, size_t max)
{
	static const char *const ent[] = { ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;",
					   ['"'] = "&quot;", ['\''] = "&#39;" };
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char esc[TEXT_ESCAPE_MAX];
	size_t at = 0, n;
	uint32_t cp;

	while (at < max && p[at]) {
		n = text_utf8_len(p + at, &cp);
		if (!n) {
			fputs(TEXT_REPLACEMENT, f);
			at++;
			continue;
		}
		if (at + n > max)
			break; /* never half a character */
		if (text_needs_escape(cp))
			fwrite(esc, 1, text_escape_cp(cp, esc), f);
		else if (cp < sizeof(ent) / sizeof(ent[0]) && ent[cp])
			fputs(ent[cp], f);
		else
			fwrite(p + at, 1, n, f);
		at += n;
	}
}
