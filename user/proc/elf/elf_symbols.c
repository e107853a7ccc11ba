// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <elf.h>
#include <string.h>

#include "proc/elf/elf_symbols.h"

/* A shared start shorter than this is too common to pass a table over. */
#define COMMON_START_MIN 3

static bool defined(const struct elf_symbol *sym)
{
	return sym->shndx != SHN_UNDEF && sym->value;
}

struct fn_ctx {
	struct elf_file *ef;
	elf_name_fn want;
	elf_sym_cb cb;
	void *ctx;
};

/* Translated only once wanted: a refusal is said for a name the caller
 * would have probed, not for every function of a large library. */
static int on_function(const struct elf_symbol *sym, void *arg)
{
	struct fn_ctx *w = arg;
	uint64_t off;

	if (!defined(sym) || sym->type != STT_FUNC || (w->want && !w->want(sym->name, w->ctx)))
		return 0;
	if (elf_file_probe_off(w->ef, sym, &off))
		return 0;
	return w->cb(sym->name, off, sym->size, w->ctx);
}

int elf_for_each_function(struct elf_file *ef, elf_name_fn want, elf_sym_cb cb, void *ctx)
{
	struct fn_ctx w = { ef, want, cb, ctx };
	int ret = elf_file_symbols(ef, on_function, &w);

	return ret > 0 ? 0 : ret;
}

struct find_ctx {
	struct elf_file *ef;
	const char *const *names;
	const bool *code;
	size_t n;
	struct elf_sym_info *out;
	size_t found;
};

/* @sym's file offset as name @j wants it: a probe site, or any address. */
static int file_off(struct find_ctx *fc, size_t j, const struct elf_symbol *sym, uint64_t *off)
{
	if (fc->code && fc->code[j])
		return elf_file_probe_off(fc->ef, sym, off);
	return elf_file_vaddr_to_off(fc->ef, sym->value, off);
}

static int find_cb(const struct elf_symbol *sym, void *arg)
{
	struct find_ctx *fc = arg;
	uint64_t off;
	size_t j;

	if (!defined(sym))
		return 0;
	for (j = 0; j < fc->n; j++) {
		if (fc->out[j].found || strcmp(sym->name, fc->names[j]) ||
		    file_off(fc, j, sym, &off))
			continue;
		fc->out[j].found = true;
		fc->out[j].file_off = off;
		fc->out[j].size = sym->size;
		fc->found++;
	}
	/* All found: the rest of a large .symtab need not be read. */
	return fc->found == fc->n;
}

/* The longest start all @n names share, into @buf (at most @len - 1
 * bytes): a table none of whose names holds it holds none of @names. */
static const char *common_start(const char *const *names, size_t n, char *buf, size_t len)
{
	size_t k = 0, j;

	if (!n || !len)
		return NULL;
	for (; k + 1 < len && names[0][k]; k++) {
		for (j = 1; j < n && names[j][k] == names[0][k]; j++)
			;
		if (j < n)
			break;
	}
	memcpy(buf, names[0], k);
	buf[k] = '\0';
	return k >= COMMON_START_MIN ? buf : NULL;
}

int elf_find_symbols_code(struct elf_file *ef, const char *const *names, const bool *code,
			  size_t n, struct elf_sym_info *out)
{
	struct find_ctx fc = { .ef = ef, .names = names, .code = code, .n = n, .out = out };
	char start[64];

	memset(out, 0, n * sizeof(*out));
	elf_file_symbols_with(ef, common_start(names, n, start, sizeof(start)), find_cb, &fc);
	return (int)fc.found;
}

int elf_find_symbols(struct elf_file *ef, const char *const *names, size_t n,
		     struct elf_sym_info *out)
{
	return elf_find_symbols_code(ef, names, NULL, n, out);
}
