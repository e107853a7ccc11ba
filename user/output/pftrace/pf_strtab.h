/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The pftrace's interned names and categories (moved out of pftrace_writer.c). */
#ifndef FVBPF_PF_STRTAB_H
#define FVBPF_PF_STRTAB_H

#include <stddef.h>
#include <stdint.h>

/* Interned strings: iid = index + 1.  Looked up by the bytes as given
 * (raw), so only a new string is cleaned; two raw strings that clean to
 * the same text get two iids, which readers take as they come. */
struct strtab {
	char **s;          /* cleaned: what the trace says */
	char **raw;        /* as given: the lookup key */
	size_t n, cap;
	uint32_t *slot;    /* open addressing: index + 1, 0 empty */
	size_t nslot;
	int err;
};

/* 0 on failure (t->err set) */
uint32_t strtab_intern(struct strtab *t, const char *raw);
void strtab_free(struct strtab *t);

#endif /* FVBPF_PF_STRTAB_H */
