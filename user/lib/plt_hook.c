// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Moving PLT slots (plt_hook.h): the loaded objects' dynamic sections and
 * R_X86_64_JUMP_SLOT relocations, read in memory as ld.so left them,
 * every pointer bounded by the object's PT_LOAD span.  Two walks: the
 * first finds the objects with slots to move, which are then made
 * RTLD_NODELETE (a slot of an object unloaded later would be written at
 * its restore); the second, which never loads anything inside
 * dl_iterate_phdr, patches those only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dl_find.h"
#include "plt_hook.h"

#if defined(__x86_64__) /* R_X86_64_JUMP_SLOT; the only user is cuda_hook.c's x86-64 part */

#define DYN_MAX 4096              /* dynamic entries read per object */
#define RELA_MAX (1u << 20)       /* PLT relocations read per object */
#define PIN_MAX 64                /* objects with slots to move */

/* A pointer of a dynamic entry: ld.so relocates most, not every one. */
static uintptr_t dyn_ptr(ElfW(Addr) base, ElfW(Addr) v)
{
	return v < base ? base + v : v;
}

struct object {
	ElfW(Addr) base;
	uintptr_t lo, hi;                 /* what its PT_LOADs span */
	const ElfW(Phdr) *relro;
};

static bool within(const struct object *o, uintptr_t p, size_t n)
{
	return p >= o->lo && p <= o->hi && n <= o->hi - p;
}

/* Write one slot, the RELRO page made writable for the store. */
static int set_slot(void **addr, void *v, bool relro)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t page = (uintptr_t)addr & ~((uintptr_t)pg - 1);

	if (relro && mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE))
		return -errno;
	__atomic_store_n(addr, v, __ATOMIC_RELEASE);
	if (relro)
		mprotect((void *)page, (size_t)pg, PROT_READ);
	return 0;
}

/* This object's PLT slots for the symbol: how many there are, and with
 * @apply, each pointed at the replacement. */
static unsigned int patch_object(struct plt_hook *h, const struct object *o,
				 const ElfW(Dyn) *dyn, bool apply)
{
	size_t strsz = 0, pltrelsz = 0, i, n, len = strlen(h->symbol) + 1;
	uintptr_t symtab = 0, strtab = 0, jmprel = 0;
	unsigned int found = 0;
	long pltrel = -1;
	const ElfW(Rela) *r;
	const ElfW(Sym) *sym;
	void **addr, *v;
	bool relro;

	for (i = 0; i < DYN_MAX && dyn[i].d_tag != DT_NULL; i++) {
		switch (dyn[i].d_tag) {
		case DT_SYMTAB: symtab = dyn_ptr(o->base, dyn[i].d_un.d_ptr); break;
		case DT_STRTAB: strtab = dyn_ptr(o->base, dyn[i].d_un.d_ptr); break;
		case DT_STRSZ: strsz = dyn[i].d_un.d_val; break;
		case DT_JMPREL: jmprel = dyn_ptr(o->base, dyn[i].d_un.d_ptr); break;
		case DT_PLTRELSZ: pltrelsz = dyn[i].d_un.d_val; break;
		case DT_PLTREL: pltrel = (long)dyn[i].d_un.d_val; break;
		}
	}
	if (!symtab || !strtab || !jmprel || pltrel != DT_RELA || !within(o, jmprel, pltrelsz))
		return 0;
	n = pltrelsz / sizeof(*r);
	if (n > RELA_MAX)
		n = RELA_MAX;
	r = (const ElfW(Rela) *)jmprel;
	for (i = 0; i < n && h->n < h->max; i++) {
		if (ELF64_R_TYPE(r[i].r_info) != R_X86_64_JUMP_SLOT)
			continue;
		sym = (const ElfW(Sym) *)symtab + ELF64_R_SYM(r[i].r_info);
		/* an object that defines it calls its own: not ours to move */
		if (!within(o, (uintptr_t)sym, sizeof(*sym)) || sym->st_shndx != SHN_UNDEF ||
		    sym->st_name >= strsz || strsz - sym->st_name < len ||
		    memcmp((const char *)strtab + sym->st_name, h->symbol, len))
			continue;
		addr = (void **)(o->base + r[i].r_offset);
		if (!within(o, (uintptr_t)addr, sizeof(*addr)))
			continue;
		v = __atomic_load_n(addr, __ATOMIC_ACQUIRE);
		/* bound to the definition, or not yet (its PLT stub): ours;
		 * bound elsewhere (another copy, another hook): left alone */
		if (v != h->real && !within(o, (uintptr_t)v, 1))
			continue;
		found++;
		if (!apply)
			continue;
		relro = o->relro && (uintptr_t)addr >= o->base + o->relro->p_vaddr &&
			(uintptr_t)addr < o->base + o->relro->p_vaddr + o->relro->p_memsz;
		if (set_slot(addr, h->replacement, relro))
			continue;
		h->slots[h->n++] = (struct plt_slot){ addr, v, relro };
	}
	return found;
}

struct walk {
	struct plt_hook *h;
	ElfW(Addr) self;                  /* the object holding the replacement */
	bool apply;
	unsigned int nnames, npinned;
	char *names[PIN_MAX];
	ElfW(Addr) pinned[PIN_MAX];
};

static bool skip_object(const struct walk *w, const char *name, ElfW(Addr) base)
{
	unsigned int i;

	if (base == w->self || dl_name_is(name, w->h->definer) || dl_name_is(name, "linux-vdso"))
		return true;
	if (!w->apply || !name || !name[0])
		return false; /* the executable is never unloaded: no pin needed */
	for (i = 0; i < w->npinned; i++)
		if (w->pinned[i] == base)
			return false;
	return true;
}

static int patch_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct object o = { .base = info->dlpi_addr, .lo = UINTPTR_MAX };
	struct walk *w = arg;
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t end;
	int i;

	(void)size;
	if (skip_object(w, info->dlpi_name, info->dlpi_addr))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_LOAD) {
			end = o.base + p->p_vaddr + p->p_memsz;
			if (o.base + p->p_vaddr < o.lo)
				o.lo = o.base + p->p_vaddr;
			if (end > o.hi)
				o.hi = end;
		} else if (p->p_type == PT_DYNAMIC) {
			dyn = (const ElfW(Dyn) *)(o.base + p->p_vaddr);
		} else if (p->p_type == PT_GNU_RELRO) {
			o.relro = p;
		}
	}
	if (!dyn || o.lo >= o.hi)
		return 0;
	if (w->apply) {
		patch_object(w->h, &o, dyn, true);
		return w->h->n >= w->h->max;
	}
	if (info->dlpi_name && info->dlpi_name[0] && w->nnames < PIN_MAX &&
	    patch_object(w->h, &o, dyn, false))
		w->names[w->nnames++] = strdup(info->dlpi_name);
	return 0;
}

unsigned int plt_hook_apply(struct plt_hook *h)
{
	struct walk *w = calloc(1, sizeof(*w));
	struct link_map *lm;
	Dl_info self;
	unsigned int i;
	void *dh;

	if (!w)
		return h->n;
	w->h = h;
	if (dladdr(h->replacement, &self))
		w->self = (ElfW(Addr))self.dli_fbase;
	dl_iterate_phdr(patch_cb, w);
	for (i = 0; i < w->nnames; i++) {
		dh = w->names[i] ? dlopen(w->names[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE)
				 : NULL;
		if (dh && !dlinfo(dh, RTLD_DI_LINKMAP, &lm))
			w->pinned[w->npinned++] = lm->l_addr;
		free(w->names[i]);
	}
	w->apply = true;
	dl_iterate_phdr(patch_cb, w);
	free(w);
	return h->n;
}

void plt_hook_restore(struct plt_hook *h)
{
	unsigned int i;

	for (i = 0; i < h->n; i++)
		if (__atomic_load_n(h->slots[i].addr, __ATOMIC_ACQUIRE) == h->replacement)
			set_slot(h->slots[i].addr, h->slots[i].old, h->slots[i].relro);
	h->n = 0;
}

#endif
