// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "proc/elf/sym_table.h"

/* Whether @sym names code or data at an address we may be asked about. */
static bool sym_wanted(const struct elf_symbol *sym)
{
	if (sym->type != STT_FUNC && sym->type != STT_OBJECT && sym->type != STT_GNU_IFUNC)
		return false;
	return sym->shndx != SHN_UNDEF && sym->value;
}

/*
 * Preference among symbols at one address, highest first: a real size, a
 * function, fewer leading underscores (getpid over its alias __getpid),
 * global over weak over local.
 */
static uint32_t sym_rank(const struct elf_symbol *sym)
{
	uint32_t under = 0;

	while (sym->name[under] == '_' && under < 15)
		under++;
	return (uint32_t)(sym->size != 0) << 12 |
	       (uint32_t)(sym->type == STT_FUNC || sym->type == STT_GNU_IFUNC) << 8 |
	       (15 - under) << 4 |
	       (sym->bind == STB_GLOBAL ? 2u : sym->bind == STB_WEAK ? 1u : 0u);
}

/* Append @n bytes of @name and a NUL: its offset, or -1 when the table
 * would pass what a uint32_t offset reaches. */
static int64_t add_name(struct sym_table *t, const char *name, size_t n)
{
	size_t need, cap;
	char *p;

	if (t->strs_len > UINT32_MAX - n - 1)
		return -1;
	need = t->strs_len + n + 1;
	if (need > t->strs_cap) {
		cap = t->strs_cap ? t->strs_cap : 4096;
		while (cap < need)
			cap *= 2;
		p = realloc(t->strs, cap);
		if (!p)
			return -1;
		t->strs = p;
		t->strs_cap = cap;
	}
	memcpy(t->strs + t->strs_len, name, n);
	t->strs[t->strs_len + n] = '\0';
	t->strs_len = need;
	return (int64_t)(need - n - 1);
}

struct load_ctx {
	struct sym_table *t;
	const struct elf_file *ef;
	int err;
};

static int on_symbol(const struct elf_symbol *sym, void *arg)
{
	struct load_ctx *c = arg;
	struct sym_table *t = c->t;
	struct sym_entry e = { .vaddr = sym->value, .size = sym->size };
	size_t n = sym->name_len;
	uint64_t end;
	int64_t off;

	if (!sym_wanted(sym))
		return 0;
	/* Size 0 (hand-written assembly): up to the end of its section. */
	if (!e.size && !elf_file_section_end(c->ef, sym->shndx, &end) && end > e.vaddr)
		e.size = end - e.vaddr;
	if (!e.size)
		return 0;
	if (n > SYM_TABLE_NAME_MAX) {
		n = SYM_TABLE_NAME_MAX;
		t->names_cut++;
	}
	if (grow_one(&t->syms, t->nsyms, &t->cap, sizeof(*t->syms), 256)) {
		c->err = -ENOMEM;
		return 1;
	}
	off = add_name(t, sym->name, n);
	if (off < 0) {
		t->dropped++;
		return 0;
	}
	e.name = (uint32_t)off;
	e.rank = sym_rank(sym);
	t->syms[t->nsyms++] = e;
	return 0;
}

/* By address, then best first; the name offset last, so the order (and the
 * name chosen among equals) does not depend on qsort. */
static int sym_cmp(const void *pa, const void *pb)
{
	const struct sym_entry *a = pa, *b = pb;

	if (a->vaddr != b->vaddr)
		return a->vaddr < b->vaddr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/* Keep the best symbol of each address, and only the names those use
 * (.dynsym and .symtab repeat most names). */
static int keep_best(struct sym_table *t)
{
	struct sym_table kept = { 0 };
	size_t i, n = 0;
	int64_t off;

	if (!t->nsyms)
		return 0; /* qsort() wants an array, even of none */
	qsort(t->syms, t->nsyms, sizeof(*t->syms), sym_cmp);
	for (i = 0; i < t->nsyms; i++) {
		if (n && t->syms[n - 1].vaddr == t->syms[i].vaddr)
			continue;
		off = add_name(&kept, t->strs + t->syms[i].name, strlen(t->strs + t->syms[i].name));
		if (off < 0) {
			free(kept.strs);
			return -ENOMEM;
		}
		t->syms[n] = t->syms[i];
		t->syms[n++].name = (uint32_t)off;
	}
	free(t->strs);
	t->strs = kept.strs;
	t->strs_len = kept.strs_len;
	t->strs_cap = kept.strs_cap;
	t->nsyms = n;
	return 0;
}

static int copy_loads(struct sym_table *t, const struct elf_file *ef)
{
	const struct elf_load *loads;
	size_t n = elf_file_loads(ef, &loads);

	t->loads = calloc(n ? n : 1, sizeof(*t->loads));
	if (!t->loads)
		return -ENOMEM;
	if (n)
		memcpy(t->loads, loads, n * sizeof(*loads));
	t->nloads = n;
	return 0;
}

int sym_table_load(struct sym_table *t, struct elf_file *ef)
{
	struct load_ctx c = { .t = t, .ef = ef };
	int ret;

	ret = copy_loads(t, ef);
	if (ret)
		goto fail;
	elf_file_symbols(ef, on_symbol, &c);
	elf_file_stats(ef, &t->elf);
	ret = c.err ? c.err : keep_best(t);
	if (ret)
		goto fail;
	return 0;
fail:
	sym_table_free(t);
	return ret;
}

const char *sym_table_find(const struct sym_table *t, uint64_t off)
{
	size_t lo = 0, hi = t->nsyms, mid;
	const struct sym_entry *s;
	uint64_t vaddr;

	if (elf_load_off_to_vaddr(t->loads, t->nloads, off, &vaddr))
		return NULL;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->syms[mid].vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &t->syms[lo - 1];
	return vaddr - s->vaddr < s->size ? t->strs + s->name : NULL;
}

size_t sym_table_bytes(const struct sym_table *t)
{
	return t->cap * sizeof(*t->syms) + t->strs_cap + t->nloads * sizeof(*t->loads);
}

void sym_table_free(struct sym_table *t)
{
	free(t->syms);
	free(t->strs);
	free(t->loads);
	memset(t, 0, sizeof(*t));
}
