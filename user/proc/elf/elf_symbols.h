/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Symbols by name, as uprobes want them: defined here, with file offsets. */
#ifndef FVBPF_ELF_SYMBOLS_H
#define FVBPF_ELF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc/elf/elf_file.h"

struct elf_sym_info {
	bool found;          /* defined here (not just imported) */
	uint64_t size;
	uint64_t file_off;   /* what uprobes and ref_ctr_offset want */
};

/*
 * Look up @n symbols of @ef in .dynsym and .symtab, local symbols
 * included; an undefined (imported) symbol does not count, nor one outside
 * every PT_LOAD.  Returns how many were found.
 */
int elf_find_symbols(struct elf_file *ef, const char *const *names, size_t n,
		     struct elf_sym_info *out);
/* The same where @code[i] says names[i] is a probe (or call) site: found
 * only in executable code, through elf_file_probe_off(). */
int elf_find_symbols_code(struct elf_file *ef, const char *const *names, const bool *code,
			  size_t n, struct elf_sym_info *out);

/*
 * Call @cb for every defined function symbol of @ef (.dynsym, then
 * .symtab) that @want accepts (NULL: all), with its file offset as a probe
 * site (elf_file_probe_off(): those outside executable code are left out).
 * @cb returns non-zero to stop.  Returns 0 or @cb's negative value.
 */
typedef bool (*elf_name_fn)(const char *name, void *ctx);
typedef int (*elf_sym_cb)(const char *name, uint64_t file_off, uint64_t size, void *ctx);
int elf_for_each_function(struct elf_file *ef, elf_name_fn want, elf_sym_cb cb, void *ctx);

#endif /* FVBPF_ELF_SYMBOLS_H */
