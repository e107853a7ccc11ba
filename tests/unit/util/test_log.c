// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The log (user/util/log.c): target text cannot put an escape sequence or a
 * forged line on root's terminal, and a warning the target can repeat is
 * shown a bounded number of times, the rest counted.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "strict_json.h"
#include "unit.h"

static int saved_fd = -1;
static FILE *capture;

static void capture_start(void)
{
	fflush(stderr);
	capture = tmpfile();
	CHECK(capture != NULL);
	saved_fd = dup(STDERR_FILENO);
	if (capture)
		dup2(fileno(capture), STDERR_FILENO);
}

/* What went to stderr since capture_start(); the caller frees it. */
static char *capture_end(void)
{
	char *buf;
	long n;

	fflush(stderr);
	dup2(saved_fd, STDERR_FILENO);
	close(saved_fd);
	if (!capture)
		return strdup("");
	n = ftell(capture);
	buf = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
	rewind(capture);
	if (buf && n > 0 && fread(buf, 1, (size_t)n, capture) != (size_t)n)
		buf[0] = '\0';
	fclose(capture);
	return buf;
}

static int count_lines(const char *s, const char *prefix)
{
	int n = 0;
	size_t len = strlen(prefix);

	for (; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : s + strlen(s))
		n += !strncmp(s, prefix, len);
	return n;
}

#define HOSTILE "\x1b[31mred\nfvbpf: forged line\r\x07\xff\xc0\xaf\xed\xa0\x80\xc2\x9b"

static void test_no_escape_no_forged_line(void)
{
	char *out, **w;
	size_t n;

	log_reset();
	capture_start();
	log_info("attached to PID %d (%s)", 42, HOSTILE);
	log_warn("PID %d: %s", 42, HOSTILE);
	log_error("cannot attach %s", HOSTILE);
	log_verbosity = 1;
	log_debug("thread %s", HOSTILE);
	log_verbosity = 0;
	out = capture_end();
	CHECK(out != NULL);
	CHECK(strchr(out, '\x1b') == NULL);
	CHECK(strchr(out, '\r') == NULL);
	CHECK(strchr(out, '\a') == NULL);
	CHECK(!ref_has_control(out, 1));
	CHECK(ref_utf8_valid(out, strlen(out)));
	CHECK_EQ(count_lines(out, "fvbpf: forged"), 0);
	/* Four messages, four lines. */
	CHECK_EQ(count_lines(out, "fvbpf: "), 4);
	CHECK(strstr(out, "fvbpf: attached to PID 42 (\\x1b[31mred\\x0afvbpf: forged line") != NULL);
	free(out);
	/* The kept copy (the manifest's) is clean too. */
	n = log_warnings(&w);
	CHECK_EQ(n, 1);
	if (n) {
		CHECK(!ref_has_control(w[0], 0));
		CHECK(ref_utf8_valid(w[0], strlen(w[0])));
	}
	log_free_warnings(w, n);
}

static int via_libbpf(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = log_libbpf(fmt, ap);
	va_end(ap);
	return r;
}

static void test_libbpf_lines(void)
{
	char *out;

	capture_start();
	via_libbpf("libbpf: failed to attach uprobe '%s'\n", "/lib/\x1b[2Jevil\nfvbpf: x.so");
	out = capture_end();
	CHECK_STR(out, "libbpf: failed to attach uprobe '/lib/\\x1b[2Jevil\\x0afvbpf: x.so'\n");
	free(out);
}

/* One warning the target can trigger at will: shown LOG_WARN_BURST times. */
static void warn_many(int n)
{
	int i;

	for (i = 0; i < n; i++)
		log_warn("PID %d: GPU record stream out of step", i);
}

static void test_rate_limit(void)
{
	char *out, **w;
	size_t n;

	log_reset();
	capture_start();
	warn_many(1000);
	log_warn("another kind %d", 1);
	log_report_suppressed();
	out = capture_end();
	CHECK_EQ(count_lines(out, "fvbpf: warning: PID "), LOG_WARN_BURST);
	CHECK_EQ(count_lines(out, "fvbpf: warning: more warnings like this one are counted"), 1);
	/* Each kind has its own budget. */
	CHECK_EQ(count_lines(out, "fvbpf: warning: another kind 1"), 1);
	CHECK(strstr(out, "fvbpf: warning: 990 more warnings were not shown") != NULL);
	CHECK_EQ(log_warnings_suppressed(), 1000 - LOG_WARN_BURST);
	free(out);
	n = log_warnings(&w);
	CHECK_EQ(n, LOG_WARN_BURST + 1);
	log_free_warnings(w, n);
	/* Nothing suppressed: no line. */
	log_reset();
	capture_start();
	log_report_suppressed();
	out = capture_end();
	CHECK_STR(out, "");
	free(out);
}

/* A message longer than a line is cut, still one clean line. */
static void test_long_message(void)
{
	char big[3000], *out;

	memset(big, 0x1b, sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_reset();
	capture_start();
	log_warn("%s", big);
	out = capture_end();
	CHECK_EQ(count_lines(out, "fvbpf: warning: \\x1b\\x1b"), 1);
	CHECK(strchr(out, '\x1b') == NULL);
	CHECK(strchr(out, '\n') == out + strlen(out) - 1);
	free(out);
	log_reset();
}

int main(void)
{
	RUN(test_no_escape_no_forged_line);
	RUN(test_libbpf_lines);
	RUN(test_rate_limit);
	RUN(test_long_message);
	UNIT_DONE();
}
