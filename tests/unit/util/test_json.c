// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The streaming JSON writer's string escaping and number format (user/util/json_writer.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_writer.h"
#include "unit.h"

/* json_escape into a static buffer; also checks the returned length. */
static const char *esc(const char *s)
{
	static char buf[512];
	size_t n = json_escape(buf, sizeof(buf), s);

	if (n != strlen(buf)) {
		printf("# json_escape returned %zu, wrote %zu\n", n, strlen(buf));
		unit_cur_failed = 1;
	}
	return buf;
}

/* What json_write_string writes to a FILE. */
static char *written(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	json_write_string(f, s);
	fclose(f);
	return buf;
}

static char *us(uint64_t ns)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	json_write_us(f, ns);
	fclose(f);
	return buf;
}

static void test_plain(void)
{
	CHECK_STR(esc("hello"), "\"hello\"");
	CHECK_STR(esc(""), "\"\"");
	CHECK_STR(esc(NULL), "\"\"");
	CHECK_STR(esc("void at::native::vectorized_elementwise_kernel<4, float>(int)"),
		  "\"void at::native::vectorized_elementwise_kernel<4, float>(int)\"");
	CHECK_STR(esc("/ ' ~ { } [ ]"), "\"/ ' ~ { } [ ]\"");
	CHECK_EQ(json_escape(NULL, 0, "abc"), 5);
}

static void test_quote_backslash(void)
{
	CHECK_STR(esc("a\"b"), "\"a\\\"b\"");
	CHECK_STR(esc("a\\b"), "\"a\\\\b\"");
	CHECK_STR(esc("\"\\\""), "\"\\\"\\\\\\\"\"");
	CHECK_STR(esc("C:\\path\\\"x\""), "\"C:\\\\path\\\\\\\"x\\\"\"");
}

static void test_control(void)
{
	CHECK_STR(esc("a\nb"), "\"a\\nb\"");
	CHECK_STR(esc("\t"), "\"\\t\"");
	CHECK_STR(esc("\r\b\f"), "\"\\r\\b\\f\"");
	CHECK_STR(esc("\x01"), "\"\\u0001\"");
	CHECK_STR(esc("x\x1fy"), "\"x\\u001fy\"");
	CHECK_STR(esc("\x0b"), "\"\\u000b\"");
	CHECK_STR(esc("\x1b[0m"), "\"\\u001b[0m\"");
	CHECK_STR(esc("\x7f"), "\"\\u007f\"");
	CHECK_STR(esc(" ~\x7f"), "\" ~\\u007f\"");
	/* Every byte below 0x20 is escaped, none passes raw. */
	{
		char in[2] = { 0, 0 }, out[16];
		int c;

		for (c = 1; c < 0x20; c++) {
			in[0] = (char)c;
			json_escape(out, sizeof(out), in);
			if (out[1] != '\\' || strlen(out) < 4) {
				printf("# byte %#x: %s\n", c, out);
				CHECK(0);
			}
		}
	}
}

static void test_utf8_valid(void)
{
	CHECK_STR(esc("\xc3\xa9"), "\"\xc3\xa9\"");                 /* é */
	CHECK_STR(esc("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
	CHECK_STR(esc("\xe6\x97\xa5\xe6\x9c\xac"), "\"\xe6\x97\xa5\xe6\x9c\xac\""); /* 日本 */
	CHECK_STR(esc("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\""); /* U+1F600 */
	/* C1 controls are valid UTF-8 but escaped: terminals obey some (U+009B is CSI). */
	CHECK_STR(esc("\xc2\x80"), "\"\\u0080\"");                 /* U+0080 */
	CHECK_STR(esc("\xc2\x9b[31m"), "\"\\u009b[31m\"");         /* U+009B */
	CHECK_STR(esc("\xc2\x9f"), "\"\\u009f\"");                 /* U+009F */
	CHECK_STR(esc("\xc2\xa0"), "\"\xc2\xa0\"");                 /* U+00A0 */
	CHECK_STR(esc("\xdf\xbf"), "\"\xdf\xbf\"");                 /* U+07FF */
	CHECK_STR(esc("\xe0\xa0\x80"), "\"\xe0\xa0\x80\"");         /* U+0800 */
	CHECK_STR(esc("\xed\x9f\xbf"), "\"\xed\x9f\xbf\"");         /* U+D7FF */
	CHECK_STR(esc("\xee\x80\x80"), "\"\xee\x80\x80\"");         /* U+E000 */
	CHECK_STR(esc("\xef\xbf\xbf"), "\"\xef\xbf\xbf\"");         /* U+FFFF */
	CHECK_STR(esc("\xf0\x90\x80\x80"), "\"\xf0\x90\x80\x80\""); /* U+10000 */
	CHECK_STR(esc("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF */
	CHECK_STR(esc("\xc3\xa9\"\n"), "\"\xc3\xa9\\\"\\n\"");
}

#define FFFD "\\ufffd"

static void test_utf8_invalid(void)
{
	/* Bytes that never start a sequence. */
	CHECK_STR(esc("\xff"), "\"" FFFD "\"");
	CHECK_STR(esc("\xfe"), "\"" FFFD "\"");
	CHECK_STR(esc("a\x80z"), "\"a" FFFD "z\"");
	CHECK_STR(esc("\xbf"), "\"" FFFD "\"");
	CHECK_STR(esc("\xf8\x88\x80\x80\x80"), "\"" FFFD FFFD FFFD FFFD FFFD "\"");
	/* Truncated sequences: the byte after it is kept. */
	CHECK_STR(esc("\xc3"), "\"" FFFD "\"");
	CHECK_STR(esc("\xc3("), "\"" FFFD "(\"");
	CHECK_STR(esc("\xe6\x97"), "\"" FFFD FFFD "\"");
	CHECK_STR(esc("\xe6\x97z"), "\"" FFFD FFFD "z\"");
	CHECK_STR(esc("\xf0\x9f\x98"), "\"" FFFD FFFD FFFD "\"");
	CHECK_STR(esc("\xf0\x9f\x98\xc3\xa9"), "\"" FFFD FFFD FFFD "\xc3\xa9\"");
	/* Overlong forms. */
	CHECK_STR(esc("\xc0\xaf"), "\"" FFFD FFFD "\"");
	CHECK_STR(esc("\xc1\xbf"), "\"" FFFD FFFD "\"");
	CHECK_STR(esc("\xe0\x80\xaf"), "\"" FFFD FFFD FFFD "\"");
	CHECK_STR(esc("\xe0\x9f\xbf"), "\"" FFFD FFFD FFFD "\"");
	CHECK_STR(esc("\xf0\x80\x80\xaf"), "\"" FFFD FFFD FFFD FFFD "\"");
	CHECK_STR(esc("\xf0\x8f\xbf\xbf"), "\"" FFFD FFFD FFFD FFFD "\"");
	/* UTF-16 surrogates. */
	CHECK_STR(esc("\xed\xa0\x80"), "\"" FFFD FFFD FFFD "\"");
	CHECK_STR(esc("\xed\xbf\xbf"), "\"" FFFD FFFD FFFD "\"");
	CHECK_STR(esc("\xed\xa0\xbd\xed\xb8\x80"), "\"" FFFD FFFD FFFD FFFD FFFD FFFD "\"");
	/* Past U+10FFFF. */
	CHECK_STR(esc("\xf4\x90\x80\x80"), "\"" FFFD FFFD FFFD FFFD "\"");
	CHECK_STR(esc("\xf5\x80\x80\x80"), "\"" FFFD FFFD FFFD FFFD "\"");
	/* Valid text around an invalid byte survives. */
	CHECK_STR(esc("\xc3\xa9\xff\xe6\x97\xa5"), "\"\xc3\xa9" FFFD "\xe6\x97\xa5\"");
}

static void test_truncation(void)
{
	char buf[16];
	size_t n;

	/* "hello" needs 7 bytes quoted, 8 with the NUL. */
	memset(buf, 'Z', sizeof(buf));
	n = json_escape(buf, 5, "hello");
	CHECK_EQ(n, 7);
	CHECK_STR(buf, "\"hel");
	CHECK_EQ(buf[5], 'Z');

	memset(buf, 'Z', sizeof(buf));
	n = json_escape(buf, 8, "hello");
	CHECK_EQ(n, 7);
	CHECK_STR(buf, "\"hello\"");
	CHECK_EQ(buf[8], 'Z');

	memset(buf, 'Z', sizeof(buf));
	n = json_escape(buf, 7, "hello");
	CHECK_EQ(n, 7);
	CHECK_STR(buf, "\"hello");
	CHECK_EQ(buf[7], 'Z');

	memset(buf, 'Z', sizeof(buf));
	n = json_escape(buf, 1, "hello");
	CHECK_EQ(n, 7);
	CHECK_STR(buf, "");
	CHECK_EQ(buf[1], 'Z');

	memset(buf, 'Z', sizeof(buf));
	n = json_escape(buf, 0, "hello");
	CHECK_EQ(n, 7);
	CHECK_EQ(buf[0], 'Z');

	/* The length counts escapes: 2 quotes + \" (2) + \u0001 (6) + \ufffd (6). */
	memset(buf, 'Z', sizeof(buf));
	n = json_escape(buf, 4, "\"\x01\xff");
	CHECK_EQ(n, 16);
	CHECK_EQ(strlen(buf), 3);
	CHECK(strncmp(buf, "\"\\\"", 3) == 0);
	CHECK_EQ(buf[4], 'Z');
	/* A long string in a small buffer, under ASan: no overrun. */
	{
		char big[300], *small = malloc(10);

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		CHECK(small != NULL);
		if (small) {
			CHECK_EQ(json_escape(small, 10, big), 301);
			CHECK_STR(small, "\"xxxxxxxx");
			free(small);
		}
	}
}

static void test_write_string(void)
{
	static const char *const cases[] = {
		"hello", "", "a\"b\\c\n\t\x01\x7f", "\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80",
		"\xff\xc0\xaf\xed\xa0\x80",
	};
	size_t i;
	char *s;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[256];

		json_escape(want, sizeof(want), cases[i]);
		s = written(cases[i]);
		CHECK_STR(s, want);
		free(s);
	}
	s = written("a\"b");
	CHECK_STR(s, "\"a\\\"b\"");
	free(s);
	s = written(NULL);
	CHECK_STR(s, "\"\"");
	free(s);
}

static void test_write_us(void)
{
	char *s;

	s = us(1234567);
	CHECK_STR(s, "1234.567");
	free(s);
	s = us(5);
	CHECK_STR(s, "0.005");
	free(s);
	s = us(0);
	CHECK_STR(s, "0.000");
	free(s);
	s = us(999);
	CHECK_STR(s, "0.999");
	free(s);
	s = us(1000);
	CHECK_STR(s, "1.000");
	free(s);
	s = us(1050);
	CHECK_STR(s, "1.050");
	free(s);
	s = us(UINT64_MAX);
	CHECK_STR(s, "18446744073709551.615");
	free(s);
	/* A plausible CLOCK_MONOTONIC value, days after boot. */
	s = us(987654321012345ULL);
	CHECK_STR(s, "987654321012.345");
	free(s);
}

int main(void)
{
	RUN(test_plain);
	RUN(test_quote_backslash);
	RUN(test_control);
	RUN(test_utf8_valid);
	RUN(test_utf8_invalid);
	RUN(test_truncation);
	RUN(test_write_string);
	RUN(test_write_us);
	UNIT_DONE();
}
