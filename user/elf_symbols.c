// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
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

static int scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *const *names,
		       size_t n, struct elf_sym_info *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, j, count;
	const char *name;
	GElf_Sym sym;
	int found = 0;

	if (!data || !sh->sh_entsize)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		for (j = 0; j < n; j++) {
			if (out[j].found || strcmp(name, names[j]))
				continue;
			if (vaddr_to_off(elf, sym.st_value, &out[j].file_off))
				continue;
			out[j].found = true;
			out[j].vaddr = sym.st_value;
			out[j].size = sym.st_size;
			found++;
		}
	}
	return found;
}

int elf_find_symbols(const char *path, const char *const *names, size_t n,
		     struct elf_sym_info *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *elf = NULL;
	int fd, found = 0, ret;

	memset(out, 0, n * sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = -ENOEXEC;
		goto cleanup;
	}
	/* .dynsym first: it is what a stripped library still has. */
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			found += scan_symtab(elf, scn, &sh, names, n, out);
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			found += scan_symtab(elf, scn, &sh, names, n, out);
	ret = found;
cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

static int walk_functions(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, elf_sym_cb cb, void *ctx)
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
		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
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

int elf_for_each_function(const char *path, elf_sym_cb cb, void *ctx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *elf = NULL;
	int fd, ret = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = -ENOEXEC;
		goto cleanup;
	}
	while (!ret && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			ret = walk_functions(elf, scn, &sh, cb, ctx);
	scn = NULL;
	while (!ret && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			ret = walk_functions(elf, scn, &sh, cb, ctx);
	if (ret > 0)
		ret = 0;
cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}
