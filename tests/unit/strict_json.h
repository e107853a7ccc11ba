/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * An independent strict checker for the writers' tests: UTF-8 by RFC 3629's
 * byte table (not fvbpf's decoder), JSON by RFC 8259's grammar (no raw
 * control characters in strings, no NaN/Infinity, no lone surrogate
 * escapes, nothing after the value).  Header-only, written apart from the
 * code under test so that the two cannot share a mistake.
 */
#ifndef FVBPF_STRICT_JSON_H
#define FVBPF_STRICT_JSON_H

#include <stddef.h>
#include <string.h>

/* Length of the RFC 3629 sequence at @s (of @n bytes), 0 if invalid. */
static inline size_t ref_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char a = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (a <= 0x7f)
		return 1;
	if (a >= 0xc2 && a <= 0xdf)
		len = 2;
	else if (a >= 0xe0 && a <= 0xef)
		len = 3;
	else if (a >= 0xf0 && a <= 0xf4)
		len = 4;
	else
		return 0;
	if (a == 0xe0)
		lo = 0xa0;
	else if (a == 0xed)
		hi = 0x9f;
	else if (a == 0xf0)
		lo = 0x90;
	else if (a == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

static inline int ref_utf8_valid(const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, k;

	while (i < n) {
		k = ref_utf8_seq(s + i, n - i);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

/* Bytes a terminal could act on: C0, DEL, and C1 as UTF-8 (C2 80..9F). */
static inline int ref_has_control(const char *text, int allow_newline)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i;

	for (i = 0; s[i]; i++) {
		if (s[i] == '\n' && allow_newline)
			continue;
		if (s[i] < 0x20 || s[i] == 0x7f)
			return 1;
		if (s[i] == 0xc2 && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f)
			return 1;
	}
	return 0;
}

struct sj {
	const char *p, *end;
	int depth;
};

static inline void sj_ws(struct sj *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static inline int sj_lit(struct sj *j, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
		return 0;
	j->p += n;
	return 1;
}

static inline int sj_hex4(struct sj *j, unsigned int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++, j->p++) {
		char c = j->p < j->end ? *j->p : 0;

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned int)(c - 'A' + 10);
		else
			return 0;
	}
	return 1;
}

static inline int sj_string(struct sj *j)
{
	unsigned int u, lo;
	size_t k;

	j->p++; /* '"' */
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p;

		if (c < 0x20)
			return 0;
		if (c != '\\') {
			k = ref_utf8_seq((const unsigned char *)j->p, (size_t)(j->end - j->p));
			if (!k)
				return 0;
			j->p += k;
			continue;
		}
		j->p++;
		if (j->p >= j->end)
			return 0;
		if (strchr("\"\\/bfnrt", *j->p) && *j->p) {
			j->p++;
			continue;
		}
		if (*j->p++ != 'u' || !sj_hex4(j, &u))
			return 0;
		if (u >= 0xdc00 && u <= 0xdfff)
			return 0; /* a low surrogate alone */
		if (u >= 0xd800 && u <= 0xdbff) {
			if (!sj_lit(j, "\\u") || !sj_hex4(j, &lo) || lo < 0xdc00 || lo > 0xdfff)
				return 0;
		}
	}
	if (j->p >= j->end)
		return 0;
	j->p++;
	return 1;
}

static inline int sj_digits(struct sj *j)
{
	const char *s = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > s;
}

static inline int sj_number(struct sj *j)
{
	if (*j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!sj_digits(j))
		return 0;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!sj_digits(j))
			return 0;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!sj_digits(j))
			return 0;
	}
	return 1;
}

static inline int sj_value(struct sj *j);

static inline int sj_members(struct sj *j, char close, int keyed)
{
	j->p++;
	sj_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return 1;
	}
	for (;;) {
		sj_ws(j);
		if (keyed) {
			if (j->p >= j->end || *j->p != '"' || !sj_string(j))
				return 0;
			sj_ws(j);
			if (j->p >= j->end || *j->p++ != ':')
				return 0;
		}
		if (!sj_value(j))
			return 0;
		sj_ws(j);
		if (j->p >= j->end)
			return 0;
		if (*j->p == close) {
			j->p++;
			return 1;
		}
		if (*j->p++ != ',')
			return 0;
	}
}

static inline int sj_value(struct sj *j)
{
	int ok;

	sj_ws(j);
	if (j->p >= j->end || ++j->depth > 64)
		return 0;
	switch (*j->p) {
	case '{': ok = sj_members(j, '}', 1); break;
	case '[': ok = sj_members(j, ']', 0); break;
	case '"': ok = sj_string(j); break;
	case 't': ok = sj_lit(j, "true"); break;
	case 'f': ok = sj_lit(j, "false"); break;
	case 'n': ok = sj_lit(j, "null"); break;
	default: ok = sj_number(j); break;
	}
	j->depth--;
	return ok;
}

/* 1 when @text (@n bytes) is one strict JSON value, nothing else. */
static inline int strict_json_ok(const char *text, size_t n)
{
	struct sj j = { text, text + n, 0 };

	if (!ref_utf8_valid(text, n) || !sj_value(&j))
		return 0;
	sj_ws(&j);
	return j.p == j.end;
}

#endif /* FVBPF_STRICT_JSON_H */
