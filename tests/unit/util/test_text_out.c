// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The trace writer's output buffer (user/util/text_out.c): hand-made numbers
 * against printf, writes across the buffer's end, errors kept. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/text_out.h"
#include "unit.h"

/* What @fill writes through an obuf, as a string (caller frees). */
static char *capture(void (*fill)(struct obuf *o, void *arg), void *arg, size_t *len)
{
	struct obuf *o = malloc(sizeof(*o));
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!o || !f)
		abort();
	ob_init(o, f);
	fill(o, arg);
	CHECK_EQ(ob_flush(o), 0);
	fclose(f);
	free(o);
	*len = n;
	return buf;
}

static const uint64_t samples[] = {
	0, 1, 9, 10, 999, 1000, 1001, 123456789, 4294967295ull, 4294967296ull,
	999999999999ull, 1000000000000000ull, UINT64_MAX - 1, UINT64_MAX,
	/* every digit count's ends (ob_ndigits) */
	99ull, 100ull, 9999ull, 10000ull, 99999ull, 100000ull, 999999ull, 1000000ull,
	9999999ull, 10000000ull, 99999999ull, 100000000ull, 999999999ull, 1000000000ull,
	9999999999ull, 10000000000ull, 99999999999ull, 100000000000ull, 1000000000000ull,
	9999999999999ull, 10000000000000ull, 99999999999999ull, 100000000000000ull,
	999999999999999ull, 9999999999999999ull, 10000000000000000ull, 99999999999999999ull,
	100000000000000000ull, 999999999999999999ull, 1000000000000000000ull,
	9999999999999999999ull, 10000000000000000000ull, 1ull << 63, (1ull << 63) - 1,
};
#define NSAMPLES (sizeof(samples) / sizeof(samples[0]))

static void fill_numbers(struct obuf *o, void *arg)
{
	size_t i;

	(void)arg;
	for (i = 0; i < NSAMPLES; i++) {
		ob_u64(o, samples[i]);
		ob_char(o, ' ');
		ob_i64(o, (int64_t)samples[i]);
		ob_char(o, ' ');
		ob_us(o, samples[i]);
		ob_char(o, ' ');
		ob_hex(o, samples[i]);
		ob_char(o, '\n');
	}
	ob_i64(o, INT64_MIN);
}

static void test_numbers_match_printf(void)
{
	char *want = NULL, *got, line[128];
	size_t n, wn = 0, i;
	FILE *f = open_memstream(&want, &wn);

	for (i = 0; i < NSAMPLES; i++) {
		snprintf(line, sizeof(line), "%" PRIu64 " %" PRId64 " %" PRIu64 ".%03" PRIu64 " 0x%" PRIx64 "\n",
			 samples[i], (int64_t)samples[i], samples[i] / 1000, samples[i] % 1000, samples[i]);
		fputs(line, f);
	}
	fprintf(f, "%" PRId64, INT64_MIN);
	fclose(f);
	got = capture(fill_numbers, NULL, &n);
	CHECK_EQ(n, wn);
	CHECK_STR(got, want);
	free(got);
	free(want);
}

/* Writes that straddle the buffer's end, and one bigger than the buffer. */
static void fill_big(struct obuf *o, void *arg)
{
	const char *chunk = arg;
	size_t i;

	for (i = 0; i < 3 * OBUF_SIZE / 7 + 5; i++)
		ob_write(o, chunk, 7);
	for (i = 0; i < OBUF_SIZE + 3; i++)
		ob_char(o, 'c');
}

static void test_straddle(void)
{
	char *big = malloc(3 * OBUF_SIZE), *got;
	size_t n, i, k;

	CHECK(big != NULL);
	memset(big, 'b', 3 * OBUF_SIZE);
	big[3 * OBUF_SIZE - 1] = '\0';
	got = capture(fill_big, "0123456", &n);
	k = (3 * OBUF_SIZE / 7 + 5) * 7;
	CHECK_EQ(n, k + OBUF_SIZE + 3);
	for (i = 0; i < k; i++)
		if (got[i] != "0123456"[i % 7])
			break;
	CHECK_EQ(i, k);
	for (; i < n; i++)
		if (got[i] != 'c')
			break;
	CHECK_EQ(i, n);
	free(got);
	free(big);
}

/* Numbers written from each of the last 30 bytes of the buffer: the fast
 * path (digits straight into the buffer) gives way to the copy there. */
static void fill_numbers_at_end(struct obuf *o, void *arg)
{
	size_t start;

	(void)arg;
	for (start = OBUF_SIZE - 30; start <= OBUF_SIZE; start++) {
		while (o->n < start)
			ob_char(o, '.');
		ob_u64(o, UINT64_MAX);
		ob_us(o, UINT64_MAX);
		ob_i64(o, INT64_MIN);
		ob_flush(o);
	}
}

static void test_numbers_at_buffer_end(void)
{
	char *want = NULL, *got;
	size_t n, wn = 0, start;
	FILE *f = open_memstream(&want, &wn);

	for (start = OBUF_SIZE - 30; start <= OBUF_SIZE; start++) {
		for (n = 0; n < start; n++)
			fputc('.', f);
		fprintf(f, "%" PRIu64 "%" PRIu64 ".%03" PRIu64 "%" PRId64, UINT64_MAX,
			UINT64_MAX / 1000, UINT64_MAX % 1000, INT64_MIN);
	}
	fclose(f);
	got = capture(fill_numbers_at_end, NULL, &n);
	CHECK_EQ(n, wn);
	CHECK(n == wn && !memcmp(got, want, n));
	free(got);
	free(want);
}

static void fill_json(struct obuf *o, void *arg)
{
	(void)arg;
	ob_json_string(o, "plain \"q\" \\ \n\x01\x7f\xc2\x85 \xff caf\xc3\xa9");
	ob_printf(o, "|%d|%s", -5, "x");
}

static void test_json_and_printf(void)
{
	size_t n;
	char *got = capture(fill_json, NULL, &n);

	CHECK_STR(got, "\"plain \\\"q\\\" \\\\ \\n\\u0001\\u007f\\u0085 \\ufffd caf\xc3\xa9\"|-5|x");
	free(got);
}

/* A failing FILE: the first error is kept and later writes do nothing. */
static void test_error_kept(void)
{
	struct obuf *o = malloc(sizeof(*o));
	FILE *f = fopen("/dev/full", "w");
	size_t i;

	CHECK(o && f);
	setvbuf(f, NULL, _IONBF, 0);
	ob_init(o, f);
	for (i = 0; i < 2 * OBUF_SIZE; i++)
		ob_char(o, 'x');
	CHECK_EQ(ob_flush(o), -ENOSPC);
	CHECK_EQ(o->err, -ENOSPC);
	fclose(f);
	free(o);
}

int main(void)
{
	RUN(test_numbers_match_printf);
	RUN(test_straddle);
	RUN(test_numbers_at_buffer_end);
	RUN(test_json_and_printf);
	RUN(test_error_kept);
	UNIT_DONE();
}
