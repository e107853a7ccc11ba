/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Hand-built ELF images for the unit tests: exact control over segments,
 * sections and symbols, so that a test can corrupt one field (sh_size,
 * sh_entsize, sh_link, st_name, e_shnum, ...) and see what the reader does.
 *
 * Layout (pg = the page size):
 *   0        ELF header, one PT_LOAD program header
 *   pg       .text (CRAFT_TEXT bytes); the PT_LOAD maps [pg, 2 pg) at
 *            CRAFT_VADDR, so a file offset is not its virtual address
 *   2 pg     .symtab, .strtab, .shstrtab, then room for CRAFT_SHMAX
 *            section headers: 0 null, 1 .text, 2 .symtab, 3 .strtab,
 *            4 .shstrtab, then whatever craft_add_section() appends
 *
 * craft_add_load() appends program headers after the first; bytes of the
 * first page from CRAFT_FREE_OFF on are free for a test's own content
 * (what a read-only segment over that page holds, for example).
 */
#ifndef FVBPF_ELF_CRAFT_H
#define FVBPF_ELF_CRAFT_H

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CRAFT_VADDR 0x100000ull /* .text's address: not its file offset */
#define CRAFT_TEXT 0x800        /* .text's size: the segment (a page) is larger */
#define CRAFT_SHMAX 16
#define CRAFT_PHMAX 8
#define CRAFT_FREE_OFF 0x800    /* in the header page, past CRAFT_PHMAX headers */
_Static_assert(sizeof(Elf64_Ehdr) + CRAFT_PHMAX * sizeof(Elf64_Phdr) <= CRAFT_FREE_OFF,
	       "the program headers end before the free bytes");

/* Offsets are relative to the start of .text. */
struct craft_sym {
	const char *name;
	unsigned char type, bind;
	uint64_t off, size;
	uint16_t shndx;
};

struct craft {
	uint8_t *img;
	size_t len, cap, pg;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;   /* CRAFT_SHMAX slots */
	Elf64_Sym *sym;   /* .symtab, entry 0 the null symbol */
	char *str;        /* .strtab */
	size_t nsyms;     /* with the null symbol */
};

enum { CRAFT_TEXT_SEC = 1, CRAFT_SYMTAB = 2, CRAFT_STRTAB = 3, CRAFT_SHSTRTAB = 4 };

static inline void craft_header(struct craft *c)
{
	Elf64_Ehdr *eh = c->eh;
	Elf64_Phdr *ph = c->ph;

	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_offset = c->pg;
	ph->p_vaddr = ph->p_paddr = CRAFT_VADDR;
	ph->p_filesz = ph->p_memsz = c->pg;
	ph->p_align = c->pg;
}

/* Build the image of @n symbols; 0, or -1 when out of memory. */
static inline int craft_build(struct craft *c, const struct craft_sym *syms, size_t n)
{
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	size_t symoff, stroff, shstroff, shoff, slen = 1, i;

	memset(c, 0, sizeof(*c));
	c->pg = (size_t)sysconf(_SC_PAGESIZE);
	symoff = 2 * c->pg;
	for (i = 0; i < n; i++)
		slen += strlen(syms[i].name) + 1;
	c->cap = symoff + (n + 1) * sizeof(Elf64_Sym) + slen + sizeof(shstr) + 8 +
		 CRAFT_SHMAX * sizeof(Elf64_Shdr);
	c->img = calloc(1, c->cap);
	if (!c->img)
		return -1;
	c->eh = (Elf64_Ehdr *)c->img;
	c->ph = (Elf64_Phdr *)(c->img + sizeof(*c->eh));
	craft_header(c);
	c->sym = (Elf64_Sym *)(c->img + symoff);
	stroff = symoff + (n + 1) * sizeof(Elf64_Sym);
	c->str = (char *)c->img + stroff;
	slen = 1;
	for (i = 0; i < n; i++) {
		Elf64_Sym *o = &c->sym[i + 1];

		o->st_name = (Elf64_Word)slen;
		o->st_info = ELF64_ST_INFO(syms[i].bind, syms[i].type);
		o->st_shndx = syms[i].shndx;
		o->st_value = syms[i].shndx ? CRAFT_VADDR + syms[i].off : 0;
		o->st_size = syms[i].size;
		strcpy(c->str + slen, syms[i].name);
		slen += strlen(syms[i].name) + 1;
	}
	c->nsyms = n + 1;
	shstroff = stroff + slen;
	memcpy(c->img + shstroff, shstr, sizeof(shstr));
	shoff = (shstroff + sizeof(shstr) + 7) & ~(size_t)7;
	c->sh = (Elf64_Shdr *)(c->img + shoff);
	c->sh[CRAFT_TEXT_SEC] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS,
		.sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = CRAFT_VADDR,
		.sh_offset = c->pg, .sh_size = CRAFT_TEXT, .sh_addralign = 16 };
	c->sh[CRAFT_SYMTAB] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_SYMTAB,
		.sh_offset = symoff, .sh_size = (n + 1) * sizeof(Elf64_Sym),
		.sh_link = CRAFT_STRTAB, .sh_info = 1, .sh_addralign = 8,
		.sh_entsize = sizeof(Elf64_Sym) };
	c->sh[CRAFT_STRTAB] = (Elf64_Shdr){ .sh_name = 15, .sh_type = SHT_STRTAB,
		.sh_offset = stroff, .sh_size = slen, .sh_addralign = 1 };
	c->sh[CRAFT_SHSTRTAB] = (Elf64_Shdr){ .sh_name = 23, .sh_type = SHT_STRTAB,
		.sh_offset = shstroff, .sh_size = sizeof(shstr), .sh_addralign = 1 };
	c->eh->e_shoff = shoff;
	c->eh->e_shentsize = sizeof(Elf64_Shdr);
	c->eh->e_shnum = 5;
	c->eh->e_shstrndx = CRAFT_SHSTRTAB;
	c->len = shoff + 5 * sizeof(Elf64_Shdr);
	return 0;
}

/* Append a PT_LOAD of @flags mapping file bytes [@off, @off + @size) at
 * @vaddr; its index, or -1 when there is no room. */
static inline int craft_add_load(struct craft *c, uint32_t flags, uint64_t off, uint64_t vaddr,
				 uint64_t size)
{
	int i = c->eh->e_phnum;

	if (i >= CRAFT_PHMAX)
		return -1;
	c->ph[i] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = flags, .p_offset = off,
		.p_vaddr = vaddr, .p_paddr = vaddr, .p_filesz = size, .p_memsz = size,
		.p_align = c->pg };
	c->eh->e_phnum++;
	return i;
}

/* Append a section header; its index, or -1 when there is no room. */
static inline int craft_add_section(struct craft *c, Elf64_Shdr sh)
{
	int i = c->eh->e_shnum;

	if (i >= CRAFT_SHMAX)
		return -1;
	c->sh[i] = sh;
	c->eh->e_shnum++;
	c->len += sizeof(Elf64_Shdr);
	return i;
}

static inline void craft_free(struct craft *c)
{
	free(c->img);
	c->img = NULL;
}

/* Write the image to a new temporary file: its fd (the file is named in
 * @path for unlinking), or -1. */
static inline int craft_write(const struct craft *c, char *path, size_t plen)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int fd;

	snprintf(path, plen, "%s/fvbpf-craft-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, c->img, c->len) != (ssize_t)c->len) {
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

/* Write the image and map its .text page (file offset pg, so pgoff is not
 * 0): the mapping's address, or MAP_FAILED; @path names the file. */
static inline void *craft_map(const struct craft *c, char *path, size_t plen)
{
	void *map;
	int fd = craft_write(c, path, plen);

	if (fd < 0)
		return MAP_FAILED;
	map = mmap(NULL, c->pg, PROT_READ, MAP_PRIVATE, fd, (off_t)c->pg);
	close(fd);
	return map;
}

#endif /* FVBPF_ELF_CRAFT_H */
