// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The one cleaner of hostile text (user/util/text_sanitize.c): valid UTF-8 for
 * JSON, and no control characters for the terminal, whatever the bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strict_json.h"
#include "util/json_writer.h"
#include "util/parse_count.h"
#include "util/text_copy.h"
#include "util/text_sanitize.h"
#include "unit.h"

#define R TEXT_REPLACEMENT

static const char *utf8(const char *s)
{
	static char buf[256];

	text_clean_utf8(buf, sizeof(buf), s);
	return buf;
}

static const char *tty(const char *s)
{
	static char buf[256];

	text_clean_terminal(buf, sizeof(buf), s);
	return buf;
}

/* The byte strings a hostile target sends. */
static const char *const hostile[] = {
	"\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xf0\x80\x80\xaf",     /* overlong */
	"\xed\xa0\x80", "\xed\xbf\xbf", "\xed\xa0\xbd\xed\xb8\x80",     /* surrogates */
	"\xc3", "\xe6\x97", "\xf0\x9f\x98", "\xe6\x97z",                /* truncated */
	"\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf8\x88\x80\x80\x80",  /* too big */
	"\xff", "\xfe", "\x80", "\xbf",
	"\x01\x02\x1b[31m\x1f\x7f", "a\nfvbpf: forged\r\n", "\x1b]0;title\x07",
	"\xc2\x9b" "31m", "\xc2\x85", "\t",
};

static void test_valid_passes(void)
{
	CHECK_STR(utf8("training_forward"), "training_forward");
	CHECK_STR(utf8("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80");
	CHECK_STR(tty("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80");
	CHECK_STR(utf8(""), "");
	CHECK_STR(utf8(NULL), "");
	CHECK_STR(tty("a\\b"), "a\\b");
	CHECK_STR(utf8("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
	CHECK_STR(utf8("\xc2\xa0"), "\xc2\xa0");
}

static void test_invalid_replaced(void)
{
	CHECK_STR(utf8("\xff"), R);
	CHECK_STR(utf8("a\x80z"), "a" R "z");
	CHECK_STR(utf8("\xc0\xaf"), R R);
	CHECK_STR(utf8("\xe0\x80\xaf"), R R R);
	CHECK_STR(utf8("\xed\xa0\x80"), R R R);
	CHECK_STR(utf8("\xf4\x90\x80\x80"), R R R R);
	CHECK_STR(utf8("\xe6\x97z"), R R "z");
	CHECK_STR(utf8("\xf0\x9f\x98\xc3\xa9"), R R R "\xc3\xa9");
	/* JSON's writers escape controls themselves: kept here. */
	CHECK_STR(utf8("a\nb\x1b"), "a\nb\x1b");
}

static void test_terminal_escapes(void)
{
	CHECK_STR(tty("\x1b[31mred"), "\\x1b[31mred");
	CHECK_STR(tty("x\nfvbpf: forged"), "x\\x0afvbpf: forged");
	CHECK_STR(tty("\r\t\x7f"), "\\x0d\\x09\\x7f");
	CHECK_STR(tty("\xc2\x9b" "31m"), "\\x9b31m");        /* C1 CSI */
	CHECK_STR(tty("\xc2\x85"), "\\x85");                  /* C1 NEL */
	CHECK_STR(tty("\xff\x1b"), R "\\x1b");
	CHECK_STR(tty("\x01\x1f"), "\\x01\\x1f");
}

/* Invisible characters that reorder or hide text ("Trojan Source"): escaped
 * for the terminal, text files, XML and inside JSON files; the joiners
 * scripts and emoji need pass. */
static void test_bidi_and_invisible(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "\xe2\x80\xaa" "a\xe2\x80\xac", "\\u202aa\\u202c" },   /* LRE, PDF */
		{ "x\xe2\x80\xae" "cod.exe", "x\\u202ecod.exe" },           /* RLO */
		{ "\xe2\x80\xad\xe2\x80\xab", "\\u202d\\u202b" },        /* LRO, RLE */
		{ "\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9",
		  "\\u2066\\u2067\\u2068\\u2069" },                        /* isolates */
		{ "\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", "\\u200e\\u200f\\u061c" }, /* marks */
		{ "a\xe2\x80\xa8" "fvbpf: forged\xe2\x80\xa9",
		  "a\\u2028fvbpf: forged\\u2029" },                          /* separators */
		{ "\xe2\x80\x8b\xe2\x81\xa0\xef\xbb\xbf", "\\u200b\\u2060\\ufeff" },
		{ "\xef\xbf\xb9\xe1\xa0\x8e", "\\ufff9\\u180e" },
		{ "\xf3\xa0\x81\x81\xf3\xa0\x81\xbf", "\\U000e0041\\U000e007f" }, /* tags */
		/* ZWNJ, ZWJ (an emoji family), a right-to-left letter: kept */
		{ "\xe2\x80\x8c\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xd7\x90",
		  "\xe2\x80\x8c\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xd7\x90" },
	};
	char json[128], *xml = NULL;
	size_t i, n;
	FILE *f;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_STR(tty(cases[i].in), cases[i].out);
		CHECK_STR(utf8(cases[i].in), cases[i].in); /* the text itself, for JSON */
	}
	CHECK(!text_is_plain("\xe2\x80\xae"));
	CHECK(!text_is_plain("\xf3\xa0\x81\x81"));
	CHECK(text_is_plain("\xe2\x80\x8d"));
	CHECK(text_is_invisible(0x202e) && !text_is_invisible(0x200d) && !text_is_control(0x202e));
	/* JSON: escaped in the file, the target's text once decoded */
	json_escape(json, sizeof(json), "a\xe2\x80\xae\xf3\xa0\x81\x81");
	CHECK_STR(json, "\"a\\u202e\\udb40\\udc41\"");
	/* XML: entities, escapes, whole characters only */
	f = open_memstream(&xml, &n);
	text_xml_write(f, "<a href=\"x\">&'\x1b\xe2\x80\xae\xff", SIZE_MAX);
	text_xml_write(f, "|ab\xe6\x97\xa5", 4);
	fclose(f);
	CHECK_STR(xml, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;\\x1b\\u202e" R "|ab");
	free(xml);
}

/* Truncation keeps whole characters and whole escapes. */
static void test_truncation(void)
{
	char buf[8], big[64];
	size_t n;

	memset(buf, 'Z', sizeof(buf));
	n = text_clean_utf8(buf, 5, "ab\xe6\x97\xa5");
	CHECK_EQ(n, 2);
	CHECK_STR(buf, "ab");
	CHECK_EQ(buf[5], 'Z');
	n = text_clean_utf8(buf, 6, "ab\xe6\x97\xa5");
	CHECK_EQ(n, 5);
	CHECK_STR(buf, "ab\xe6\x97\xa5");
	n = text_clean_terminal(buf, 7, "ab\x1b\x1b");
	CHECK_EQ(n, 6);
	CHECK_STR(buf, "ab\\x1b");
	n = text_clean_terminal(buf, 6, "ab\x1b");
	CHECK_STR(buf, "ab");
	n = text_clean_utf8(buf, 4, "\xff\xff");
	CHECK_STR(buf, R);
	n = text_clean_utf8(buf, 1, "abc");
	CHECK_EQ(n, 0);
	CHECK_STR(buf, "");
	memset(buf, 'Z', sizeof(buf));
	CHECK_EQ(text_clean_utf8(buf, 0, "abc"), 0);
	CHECK_EQ(buf[0], 'Z');
	/* The bound is enough for the worst case. */
	memset(big, 0x1b, 15);
	big[15] = '\0';
	CHECK_EQ(text_clean_bound(big), 61);
	{
		char *out = malloc(text_clean_bound(big));

		CHECK(out != NULL);
		if (out) {
			CHECK_EQ(text_clean_terminal(out, text_clean_bound(big), big), 60);
			free(out);
		}
	}
}

static void test_plain(void)
{
	CHECK(text_is_plain("training_forward"));
	CHECK(text_is_plain("caf\xc3\xa9\ttab"));
	CHECK(text_is_plain(""));
	CHECK(!text_is_plain("\x1b[31m"));
	CHECK(!text_is_plain("a\nb"));
	CHECK(!text_is_plain("\xff"));
	CHECK(!text_is_plain("\xc0\xaf"));
	CHECK(!text_is_plain("\xed\xa0\x80"));
	CHECK(!text_is_plain("\x7f"));
	CHECK(!text_is_plain("\xc2\x9b"));
}

/* Every hostile string, and random bytes, come out valid (checked by the
 * independent RFC 3629 table) and, for the terminal, with no control byte. */
static void test_anything_in_safe_out(void)
{
	char in[64], out[4 * sizeof(in)];
	unsigned int seed = 12345, i, k, bad = 0;
	size_t n;

	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		n = text_clean_utf8(out, sizeof(out), hostile[i]);
		bad += !ref_utf8_valid(out, n);
		n = text_clean_terminal(out, sizeof(out), hostile[i]);
		bad += !ref_utf8_valid(out, n) || ref_has_control(out, 0);
	}
	for (i = 0; i < 20000; i++) {
		for (k = 0; k < sizeof(in) - 1; k++) {
			seed = seed * 1103515245u + 12345u;
			in[k] = (char)((seed >> 16) & 0xff);
			if (!in[k])
				in[k] = 1;
		}
		in[(seed >> 8) % sizeof(in)] = '\0';
		n = text_clean_utf8(out, (seed >> 4) % sizeof(out) + 1, in);
		bad += !ref_utf8_valid(out, n) || strlen(out) != n;
		n = text_clean_terminal(out, (seed >> 12) % sizeof(out) + 1, in);
		bad += !ref_utf8_valid(out, n) || ref_has_control(out, 0) || strlen(out) != n ||
		       !text_is_plain(out);
	}
	CHECK_EQ(bad, 0);
}

/* The decoder agrees with the RFC 3629 table on every two-byte prefix. */
static void test_decoder_matches_table(void)
{
	unsigned char s[5] = { 0 };
	unsigned int a, b, c, bad = 0;
	uint32_t cp;

	for (a = 1; a < 256; a++)
		for (b = 0; b < 256; b++)
			for (c = 0x7f; c <= 0xc0; c += 0x41) {
				s[0] = (unsigned char)a;
				s[1] = (unsigned char)b;
				s[2] = s[3] = (unsigned char)c;
				bad += text_utf8_len(s, &cp) != ref_utf8_seq(s, 4);
			}
	CHECK_EQ(bad, 0);
}

/* text_copy_out(): cut to fit, always terminated; nothing into no room. */
static void test_copy_out(void)
{
	char buf[4] = "xyz", big[16];

	text_copy_out(buf, sizeof(buf), "ab", 2);
	CHECK_STR(buf, "ab");
	text_copy_out(buf, sizeof(buf), "abcdef", 6);
	CHECK_STR(buf, "abc");
	text_copy_out(buf, 0, "q", 1);
	CHECK_STR(buf, "abc");
	CHECK(text_shown(big, sizeof(big), "a\x1b") == big);
	CHECK_STR(big, "a\\x1b");
}

/* parse_count(): digits only, within [min, max], no wrap of "-1". */
static void test_parse_count(void)
{
	unsigned long long v = 7;

	CHECK_EQ(parse_count("42", 1, 100, &v), 0);
	CHECK_EQ(v, 42);
	CHECK_EQ(parse_count("0", 0, 1, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(parse_count("0", 1, 100, &v), -ERANGE);
	CHECK_EQ(parse_count("101", 1, 100, &v), -ERANGE);
	CHECK_EQ(parse_count("18446744073709551616", 0, ~0ULL, &v), -ERANGE);
	CHECK_EQ(parse_count("", 0, 100, &v), -EINVAL);
	CHECK_EQ(parse_count("-1", 0, ~0ULL, &v), -EINVAL);
	CHECK_EQ(parse_count("+1", 0, 100, &v), -EINVAL);
	CHECK_EQ(parse_count(" 1", 0, 100, &v), -EINVAL);
	CHECK_EQ(parse_count("1 ", 0, 100, &v), -EINVAL);
	CHECK_EQ(parse_count("12a", 0, 100, &v), -EINVAL);
	CHECK_EQ(v, 0);
}

int main(void)
{
	RUN(test_valid_passes);
	RUN(test_invalid_replaced);
	RUN(test_terminal_escapes);
	RUN(test_bidi_and_invisible);
	RUN(test_truncation);
	RUN(test_plain);
	RUN(test_anything_in_safe_out);
	RUN(test_decoder_matches_table);
	RUN(test_copy_out);
	RUN(test_parse_count);
	UNIT_DONE();
}
