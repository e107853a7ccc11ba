/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A text output buffer for the trace writer, which formats millions of
 * events a second: numbers by hand, JSON strings by a scan and one copy,
 * and one fwrite per OBUF_SIZE bytes.  stdio's per-call locking and
 * printf's format parsing cost more than the event itself (profiled: 60%
 * of the writer in _IO_fwrite and vfprintf).
 */
#ifndef FVBPF_TEXT_OUT_H
#define FVBPF_TEXT_OUT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OBUF_SIZE 65536u

struct obuf {
	FILE *f;
	size_t n;
	int err;          /* -errno of the first failed write, then nothing is written */
	char buf[OBUF_SIZE];
};

void ob_init(struct obuf *o, FILE *f);
/* Write out what is buffered: 0 or the first error. */
int ob_flush(struct obuf *o);
void ob_write_slow(struct obuf *o, const char *s, size_t n);
/* printf for what is rare (a format no event uses per record). */
void ob_printf(struct obuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* @s as a quoted JSON string, valid whatever its bytes (json_writer.h's rules). */
void ob_json_string(struct obuf *o, const char *s);
/* The same without the quotes, to build a string of parts. */
void ob_json_chars(struct obuf *o, const char *s);

static inline void ob_write(struct obuf *o, const char *s, size_t n)
{
	if (n <= OBUF_SIZE - o->n) {
		memcpy(o->buf + o->n, s, n);
		o->n += n;
	} else {
		ob_write_slow(o, s, n);
	}
}

/* A string literal, its length known at compile time. */
#define ob_lit(o, s) ob_write((o), "" s, sizeof(s) - 1)

static inline void ob_puts(struct obuf *o, const char *s)
{
	ob_write(o, s, strlen(s));
}

static inline void ob_char(struct obuf *o, char c)
{
	if (o->n == OBUF_SIZE)
		ob_flush(o);
	o->buf[o->n++] = c;
}

/* Decimal digits of @v into the end of @end's buffer: returns the first. */
static inline char *ob_digits(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

/* How many decimal digits @v has (1 for 0): the digits then go straight
 * into the buffer, not through a copy of unknown length (a memcpy call per
 * number was a tenth of the writer). */
static inline unsigned int ob_ndigits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull,
		10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
		10000000000000000000ull,
	};
	/* log10 from log2 (1233/4096 ~ log10(2)), then one compare fixes it */
	unsigned int t = (unsigned int)((64 - __builtin_clzll(v | 1)) * 1233) >> 12;

	return v ? t + 1 - (v < pow10[t]) : 1;
}

/* @v's @n digits ending at @end. */
static inline void ob_digits_n(char *end, uint64_t v, unsigned int n)
{
	while (n--) {
		*--end = (char)('0' + v % 10);
		v /= 10;
	}
}

static inline void ob_u64(struct obuf *o, uint64_t v)
{
	char tmp[24], *p;
	unsigned int n;

	if (OBUF_SIZE - o->n >= 20) {
		n = ob_ndigits(v);
		ob_digits_n(o->buf + o->n + n, v, n);
		o->n += n;
		return;
	}
	p = ob_digits(tmp + sizeof(tmp), v);
	ob_write(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

static inline void ob_i64(struct obuf *o, int64_t v)
{
	if (v < 0) {
		ob_char(o, '-');
		ob_u64(o, 0 - (uint64_t)v);
	} else {
		ob_u64(o, (uint64_t)v);
	}
}

/* Nanoseconds as microseconds with three decimals: 1234.567 */
static inline void ob_us(struct obuf *o, uint64_t ns)
{
	char tmp[32], *end = tmp + sizeof(tmp), *p;
	uint64_t frac = ns % 1000;
	unsigned int n;

	if (OBUF_SIZE - o->n >= 24) {
		n = ob_ndigits(ns / 1000);
		p = o->buf + o->n + n;
		ob_digits_n(p, ns / 1000, n);
		p[0] = '.';
		p[1] = (char)('0' + frac / 100);
		p[2] = (char)('0' + frac / 10 % 10);
		p[3] = (char)('0' + frac % 10);
		o->n += n + 4;
		return;
	}
	end[-1] = (char)('0' + frac % 10);
	end[-2] = (char)('0' + frac / 10 % 10);
	end[-3] = (char)('0' + frac / 100);
	end[-4] = '.';
	p = ob_digits(end - 4, ns / 1000);
	ob_write(o, p, (size_t)(end - p));
}

/* "0x1f" */
void ob_hex(struct obuf *o, uint64_t v);

#endif /* FVBPF_TEXT_OUT_H */
