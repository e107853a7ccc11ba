/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A code object of a target's CPython, read from outside: file, qualified
 * name, first line and line table (3.11's location table, PEP 626/657;
 * 3.10's co_linetable, PEP 626).
 * Everything is the target's memory: each object's type is checked against
 * the interpreter's own type objects, every length is bounded, and a line
 * that cannot be decoded is reported as unknown (0), never guessed.
 */
#ifndef FVBPF_PY_CODE_H
#define FVBPF_PY_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "proc/python/py_runtime.h"

#define PY_STR_MAX 1024            /* bytes of a name or file kept */
#define PY_LINETABLE_MAX (1u << 20) /* a longer table is refused */

struct py_code {
	uint64_t addr;
	int firstlineno;
	char *file, *name;          /* malloc'd, UTF-8 */
	uint8_t *table;             /* co_linetable's bytes */
	size_t ntable;
};

enum py_code_err {
	PY_CODE_OK = 0,
	PY_CODE_UNREADABLE,         /* the memory is gone */
	PY_CODE_NOT_CODE,           /* ob_type is not PyCode_Type */
	PY_CODE_BAD_STRING,         /* file or name not a str fvbpf can read */
	PY_CODE_HUGE_TABLE,         /* co_linetable past PY_LINETABLE_MAX: names kept,
				     * no table (every line unknown) */
	PY_CODE_NOMEM,
};

/* Read the code object at @addr: PY_CODE_OK and @c filled (free with
 * py_code_free), else what was wrong. */
enum py_code_err py_code_read(const struct py_runtime *r, uint64_t addr, struct py_code *c);
void py_code_free(struct py_code *c);
/*
 * The line of the instruction at @instr (a frame's prev_instr) in @c:
 * > 0, 0 unknown (no location, or past the table).  An instruction before
 * the first (a frame not started yet) is the first line, as CPython says.
 */
int py_code_line(const struct py_runtime *r, const struct py_code *c, uint64_t instr);
/* 3.11 location table: the line of code unit @unit (-1: before the
 * first); 0 when the table has no location for it or ends before it. */
int py311_addr2line(const uint8_t *tab, size_t len, int firstlineno, int64_t unit);
/* 3.10 line table: the line of the instruction at byte @addr (-1 and
 * below: before the first); 0 when no line or past the table. */
int py310_addr2line(const uint8_t *tab, size_t len, int firstlineno, int64_t addr);

#endif /* FVBPF_PY_CODE_H */
