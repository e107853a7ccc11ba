// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/python/py_code.h"

static int rd(const struct py_runtime *r, uint64_t addr, void *buf, size_t len)
{
	return py_mem_read(r->pid, addr, buf, len);
}

static uint64_t u64_at(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* One code point as UTF-8 into @out (4 bytes room): its length. */
static size_t put_utf8(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			cp = 0xfffd; /* a lone surrogate is not UTF-8 */
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x10000)
		return put_utf8(cp, out);
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A compact str (all code objects' names and files are): at most
 * PY_STR_MAX bytes of it as UTF-8, malloc'd; NULL when not a readable str. */
static char *read_str(const struct py_runtime *r, uint64_t addr)
{
	const struct py_layout *L = r->lay;
	uint8_t hdr[80], raw[PY_STR_MAX * 4];
	uint64_t len, kind, state;
	size_t i, o = 0, n, nbytes;
	char *out;

	if (rd(r, addr, hdr, L->uni_compact_data) || u64_at(hdr, L->ob_type) != r->unicode_type)
		return NULL;
	len = u64_at(hdr, L->var_size);
	state = hdr[L->uni_state];
	kind = (state >> 2) & 7;
	if (!(state & 0x20) || (kind != 1 && kind != 2 && kind != 4) || len > (1u << 30))
		return NULL; /* not compact: never for these */
	n = len < PY_STR_MAX ? (size_t)len : PY_STR_MAX;
	nbytes = n * kind;
	if (rd(r, addr + ((state & 0x40) ? L->uni_ascii_data : L->uni_compact_data), raw, nbytes))
		return NULL;
	out = malloc(n * 4 + 1);
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		uint32_t cp;

		if (kind == 1) {
			cp = raw[i];
		} else if (kind == 2) {
			uint16_t v;

			memcpy(&v, raw + 2 * i, 2);
			cp = v;
		} else {
			memcpy(&cp, raw + 4 * i, 4);
		}
		if (cp < 0x20)
			cp = '?'; /* names go into text files one per line */
		o += put_utf8(cp, out + o);
	}
	out[o] = '\0';
	return out;
}

static enum py_code_err read_table(const struct py_runtime *r, uint64_t addr, struct py_code *c)
{
	const struct py_layout *L = r->lay;
	uint8_t hdr[32];
	uint64_t len;

	if (rd(r, addr, hdr, L->bytes_data) || u64_at(hdr, L->ob_type) != r->bytes_type)
		return PY_CODE_UNREADABLE;
	len = u64_at(hdr, L->var_size);
	if (len > PY_LINETABLE_MAX)
		return PY_CODE_HUGE_TABLE;
	c->table = malloc(len ? len : 1);
	if (!c->table)
		return PY_CODE_NOMEM;
	c->ntable = (size_t)len;
	return rd(r, addr + L->bytes_data, c->table, c->ntable) ? PY_CODE_UNREADABLE : PY_CODE_OK;
}

enum py_code_err py_code_read(const struct py_runtime *r, uint64_t addr, struct py_code *c)
{
	const struct py_layout *L = r->lay;
	uint8_t obj[256];
	enum py_code_err e;
	int32_t first;

	memset(c, 0, sizeof(*c));
	c->addr = addr;
	if (!L || L->co_read > sizeof(obj) || rd(r, addr, obj, L->co_read))
		return PY_CODE_UNREADABLE;
	if (u64_at(obj, L->ob_type) != r->code_type)
		return PY_CODE_NOT_CODE;
	memcpy(&first, obj + L->co_firstlineno, sizeof(first));
	c->firstlineno = first;
	c->file = read_str(r, u64_at(obj, L->co_filename));
	c->name = read_str(r, u64_at(obj, L->co_qualname));
	if (!c->name)
		c->name = read_str(r, u64_at(obj, L->co_name));
	if (!c->file || !c->name || first < 0) {
		py_code_free(c);
		c->addr = addr;
		return PY_CODE_BAD_STRING;
	}
	e = read_table(r, u64_at(obj, L->co_linetable), c);
	if (e == PY_CODE_HUGE_TABLE) {
		/* the function is known, its lines are not: ntable 0 says so */
		free(c->table);
		c->table = NULL;
		c->ntable = 0;
	} else if (e != PY_CODE_OK) {
		py_code_free(c);
		c->addr = addr;
	}
	return e;
}

void py_code_free(struct py_code *c)
{
	free(c->file);
	free(c->name);
	free(c->table);
	memset(c, 0, sizeof(*c));
}

/* Objects/codeobject.c's varints: 6 bits a byte, bit 6 says more. */
static int varint(const uint8_t *tab, size_t len, size_t *p, uint32_t *out)
{
	uint32_t v = 0, shift = 0;
	uint8_t b;

	do {
		if (*p >= len || shift > 24)
			return -EINVAL;
		b = tab[(*p)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*out = v;
	return 0;
}

static int svarint(const uint8_t *tab, size_t len, size_t *p, int32_t *out)
{
	uint32_t u;

	if (varint(tab, len, p, &u))
		return -EINVAL;
	*out = (u & 1) ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
	return 0;
}

int py311_addr2line(const uint8_t *tab, size_t len, int firstlineno, int64_t unit)
{
	int64_t start = 0, line = firstlineno;
	size_t p = 0;

	if (unit < 0)
		return firstlineno;
	while (p < len) {
		uint8_t first = tab[p++];
		unsigned int code = (first >> 3) & 15, n = (first & 7) + 1;
		int32_t delta = 0;

		if (!(first & 0x80))
			return 0; /* not at an entry: a table fvbpf does not understand */
		if (code == 13 || code == 14) {
			if (svarint(tab, len, &p, &delta))
				return 0;
		} else if (code >= 10 && code <= 12) {
			delta = (int32_t)code - 10;
		}
		line += delta;
		if (line < 0 || line > (1 << 30))
			return 0;
		if (unit < start + n)
			return code == 15 ? 0 : (int)line;
		start += n;
		while (p < len && !(tab[p] & 0x80))
			p++; /* the entry's column data */
	}
	return 0;
}

/*
 * 3.10's co_linetable (Objects/lnotab_notes.txt, codeobject.c's advance()):
 * pairs (byte delta of the address, signed line delta), -128 a range
 * without a line; the range holding byte @addr (empty ranges hold none).
 */
int py310_addr2line(const uint8_t *tab, size_t len, int firstlineno, int64_t addr)
{
	int64_t start = 0, line = firstlineno;
	size_t p;

	if (addr < 0)
		return firstlineno;
	for (p = 0; p + 1 < len; p += 2) {
		int64_t end = start + tab[p];
		int8_t ldelta = (int8_t)tab[p + 1];
		int has_line = ldelta != -128;

		if (has_line)
			line += ldelta;
		if (line < 0 || line > (1 << 30))
			return 0;
		if (addr < end)
			return has_line ? (int)line : 0;
		start = end;
	}
	return 0;
}

int py_code_line(const struct py_runtime *r, const struct py_code *c, uint64_t instr)
{
	uint64_t base = c->addr + r->lay->co_code;
	int64_t unit;

	if (r->lay->frame_object) /* f_lasti: an int, a code unit's index */
		return py310_addr2line(c->table, c->ntable, c->firstlineno,
				       (int64_t)(int32_t)(uint32_t)instr * 2);
	if (instr < base)
		unit = -1;
	else if ((instr - base) / 2 > (uint64_t)PY_LINETABLE_MAX * 8)
		return 0;
	else
		unit = (int64_t)((instr - base) / 2);
	return py311_addr2line(c->table, c->ntable, c->firstlineno, unit);
}
