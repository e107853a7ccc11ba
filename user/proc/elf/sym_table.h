/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The symbols of one ELF file, sorted by address for lookups by file
 * offset: what the symbolizer keeps per file.  Built through the hardened
 * reader (elf_file.h); its memory is bounded by the reader's caps.
 */
#ifndef FVBPF_SYM_TABLE_H
#define FVBPF_SYM_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "proc/elf/elf_file.h"

/* Longer names are kept cut to this (and counted): a kernel stub's
 * mangled name is a few hundred bytes. */
#define SYM_TABLE_NAME_MAX 4096

struct sym_entry {
	uint64_t vaddr;
	uint64_t size;  /* st_size, or up to the end of its section when 0 */
	uint32_t name;  /* offset into sym_table.strs */
	uint32_t rank;  /* among symbols at one address, the highest is kept */
};

struct sym_table {
	struct sym_entry *syms;  /* sorted by vaddr, one per address */
	size_t nsyms, cap;
	char *strs;              /* the kept names, NUL-terminated */
	size_t strs_len, strs_cap;
	struct elf_load *loads;  /* how file offsets become addresses */
	size_t nloads;
	uint64_t names_cut;      /* names longer than SYM_TABLE_NAME_MAX */
	uint64_t dropped;        /* symbols not kept: string space exhausted */
	struct elf_file_stats elf; /* what the reader skipped or capped */
};

/* Fill @t (zeroed by the caller) from @ef: 0 or -ENOMEM; on error @t is
 * freed. */
int sym_table_load(struct sym_table *t, struct elf_file *ef);
/* The name of the symbol holding file offset @off, or NULL. */
const char *sym_table_find(const struct sym_table *t, uint64_t off);
/* Heap bytes held, for the symbolizer's cache bound. */
size_t sym_table_bytes(const struct sym_table *t);
void sym_table_free(struct sym_table *t);

#endif /* FVBPF_SYM_TABLE_H */
