// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * `fvbpf report --html`'s escaping of hostile text and file names, and its
 * relative paths (user/offline/report/html_out.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offline/report/html_internal.h"
#include "util/text_sanitize.h"
#include "unit.h"

typedef void (*put_fn)(FILE *f, const char *s);

/* What @fn writes for @s, in a static buffer. */
static const char *out(put_fn fn, const char *s)
{
	static char buf[8192];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	if (!f)
		return "";
	fn(f, s);
	fclose(f);
	return buf;
}

static void cut40(FILE *f, const char *s)
{
	html_text_cut(f, s, 40);
}

static void test_text_escaped(void)
{
	CHECK_STR(out(html_text, "aten::mm"), "aten::mm");
	CHECK_STR(out(html_text, "<script>alert('x')</script>&\""),
		  "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;");
	CHECK_STR(out(html_text, "a\x1b[31m\nb\x7f"), "a\\x1b[31m\\x0ab\\x7f");
	CHECK_STR(out(html_text, "\xc2\x85"), "\\x85");
	CHECK_STR(out(html_text, "\xff<"), TEXT_REPLACEMENT "&lt;");
	CHECK_STR(out(html_text, "caf\xc3\xa9"), "caf\xc3\xa9");
}

/* Random bytes in: plain UTF-8 out, and no character that ends text or an
 * attribute value, and '&' only as an entity. */
static void test_text_anything(void)
{
	char in[64];
	const char *o, *p;
	int i, j;

	srand(24);
	for (i = 0; i < 20000; i++) {
		for (j = 0; j < (int)sizeof(in) - 1; j++)
			in[j] = (char)(1 + rand() % 255);
		in[rand() % (int)sizeof(in)] = '\0';
		in[sizeof(in) - 1] = '\0';
		o = out(html_text, in);
		CHECK(text_is_plain(o));
		CHECK(!strpbrk(o, "<>\"'"));
		for (p = strchr(o, '&'); p; p = strchr(p + 1, '&'))
			CHECK(!strncmp(p, "&lt;", 4) || !strncmp(p, "&gt;", 4) || !strncmp(p, "&amp;", 5) ||
			      !strncmp(p, "&quot;", 6) || !strncmp(p, "&#39;", 5));
		if (unit_cur_failed) {
			printf("# input %d\n", i);
			return;
		}
	}
}

static void test_cut(void)
{
	char in[200] = "", want[200] = "";
	int i;

	CHECK_STR(out(cut40, "short <b>"), "short &lt;b&gt;");
	for (i = 0; i < 50; i++)
		strcat(in, "\xc3\xa9");
	for (i = 0; i < 40; i++)
		strcat(want, "\xc3\xa9");
	strcat(want, "\xe2\x80\xa6");
	CHECK_STR(out(cut40, in), want); /* 40 characters, never half of one */
}

static void test_url(void)
{
	CHECK_STR(out(html_url_path, "../gen/node0/trace_rank0.json"), "../gen/node0/trace_rank0.json");
	CHECK_STR(out(html_url_path, "t\"'<x>& y%.json"), "t%22%27%3Cx%3E%26%20y%25.json");
	CHECK_STR(out(html_url_path, "javascript:alert(1)"), "javascript%3Aalert%281%29");
	CHECK_STR(out(html_url_path, "\xc3\xa9"), "%C3%A9");
}

static const char *rel(const char *from, const char *to)
{
	static char buf[256];

	if (jr_rel_path(from, to, buf, sizeof(buf)))
		return "(too long)";
	return buf;
}

/* The expected values are Python's os.path.relpath(to, from) ("." as ""). */
static void test_rel_path(void)
{
	char small[4];

	CHECK_STR(rel("/a/b", "/a/b"), "");
	CHECK_STR(rel("/a/b", "/a/b/c"), "c");
	CHECK_STR(rel("/a/b/c", "/a/b"), "..");
	CHECK_STR(rel("/a/bc", "/a/bd/e"), "../bd/e");
	CHECK_STR(rel("/a/b", "/a/bc"), "../bc");
	CHECK_STR(rel("/a/bc", "/a/b"), "../b");
	CHECK_STR(rel("/", "/x/y"), "x/y");
	CHECK_STR(rel("/a", "/"), "..");
	CHECK_STR(rel("/x/y/z", "/p/q"), "../../../p/q");
	CHECK_EQ(jr_rel_path("/x/y/z", "/p/q", small, sizeof(small)), -ENAMETOOLONG);
}

int main(void)
{
	RUN(test_text_escaped);
	RUN(test_text_anything);
	RUN(test_cut);
	RUN(test_url);
	RUN(test_rel_path);
	UNIT_DONE();
}
