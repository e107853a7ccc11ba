// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_symbols.h"

/* Virtual address -> file offset, through the PT_LOAD segment holding it. */
static int vaddr_to_off(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t i, nph;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph))
		return -EINVAL;
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static int walk_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, bool functions_only,
		      elf_sym_cb cb, void *ctx)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count;
	const char *name;
	uint64_t off;
	GElf_Sym sym;
	int ret;

	if (!data || !sh->sh_entsize)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		if (functions_only && GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name || vaddr_to_off(elf, sym.st_value, &off))
			continue;
		ret = cb(name, off, sym.st_size, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

/* Every defined symbol, .dynsym first (what a stripped library still has). */
static int walk_symbols(const char *path, bool functions_only, elf_sym_cb cb, void *ctx)
{
	static const Elf64_Word tables[] = { SHT_DYNSYM, SHT_SYMTAB };
	struct stat st;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf *elf = NULL;
	int fd, ret = 0;
	size_t t;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	/* Jobs map device files (/dev/nvidia*, uverbs): never open() those,
	 * opening one is a driver call. */
	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = -ENOEXEC;
		goto cleanup;
	}
	for (t = 0; t < 2 && !ret; t++)
		for (scn = NULL; !ret && (scn = elf_nextscn(elf, scn));)
			if (gelf_getshdr(scn, &sh) && sh.sh_type == tables[t])
				ret = walk_table(elf, scn, &sh, functions_only, cb, ctx);
	if (ret > 0)
		ret = 0;
cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

int elf_for_each_function(const char *path, elf_sym_cb cb, void *ctx)
{
	return walk_symbols(path, true, cb, ctx);
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
	return 0;
}

int elf_find_symbols(const char *path, const char *const *names, size_t n,
		     struct elf_sym_info *out)
{
	struct find_ctx fc = { .names = names, .n = n, .out = out };
	int ret;

	memset(out, 0, n * sizeof(*out));
	ret = walk_symbols(path, false, find_cb, &fc);
	return ret < 0 ? ret : fc.found;
}
