// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <elf.h>
#include <string.h>

#include "elf_symbols.h"

struct walk_ctx {
	const struct elf_file *ef;
	bool functions_only;
	elf_sym_cb cb;
	void *ctx;
};

static int on_symbol(const struct elf_symbol *sym, void *arg)
{
	struct walk_ctx *w = arg;
	uint64_t off;

	if (sym->shndx == SHN_UNDEF || !sym->value)
		return 0;
	if (w->functions_only && sym->type != STT_FUNC)
		return 0;
	if (elf_file_vaddr_to_off(w->ef, sym->value, &off))
		return 0;
	return w->cb(sym->name, off, sym->size, w->ctx);
}

/* Every defined symbol, .dynsym first (what a stripped library still has). */
static int walk_symbols(struct elf_file *ef, bool functions_only, elf_sym_cb cb, void *ctx)
{
	struct walk_ctx w = { ef, functions_only, cb, ctx };
	int ret = elf_file_symbols(ef, on_symbol, &w);

	return ret > 0 ? 0 : ret;
}

int elf_for_each_function(struct elf_file *ef, elf_sym_cb cb, void *ctx)
{
	return walk_symbols(ef, true, cb, ctx);
}

struct find_ctx {
	const char *const *names;
	size_t n;
	struct elf_sym_info *out;
	int found;
};

static int find_cb(const char *name, uint64_t off, uint64_t size, void *arg)
{
	struct find_ctx *fc = arg;
	size_t j;

	for (j = 0; j < fc->n; j++) {
		if (fc->out[j].found || strcmp(name, fc->names[j]))
			continue;
		fc->out[j].found = true;
		fc->out[j].file_off = off;
		fc->out[j].size = size;
		fc->found++;
	}
	/* All found: the rest of a large .symtab need not be read. */
	return (size_t)fc->found == fc->n;
}

int elf_find_symbols(struct elf_file *ef, const char *const *names, size_t n,
		     struct elf_sym_info *out)
{
	struct find_ctx fc = { .names = names, .n = n, .out = out };

	memset(out, 0, n * sizeof(*out));
	walk_symbols(ef, false, find_cb, &fc);
	return fc.found;
}
