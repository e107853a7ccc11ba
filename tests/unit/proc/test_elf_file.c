// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The hardened ELF reader (user/proc/elf/elf_file.c) and the symbol lookups
 * on top of it (user/proc/elf/elf_symbols.c), on hand-built images with one
 * field corrupted at a time.  Every case must end in a clean answer; the ASan
 * build of this test also checks that no case reads or writes out of bounds.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_craft.h"
#include "proc/elf/elf_file.h"
#include "proc/elf/elf_symbols.h"
#include "util/file/file_open.h"
#include "unit.h"

static const struct craft_sym syms[] = {
	{ "fv_sized", STT_FUNC, STB_GLOBAL, 0x100, 0x40, CRAFT_TEXT_SEC },
	{ "fv_object", STT_OBJECT, STB_GLOBAL, 0x400, 0x20, CRAFT_TEXT_SEC },
	{ "fv_undef", STT_FUNC, STB_GLOBAL, 0, 0, SHN_UNDEF },
	{ "fv_last", STT_FUNC, STB_LOCAL, 0x700, 0, CRAFT_TEXT_SEC },
};
#define NSYMS (sizeof(syms) / sizeof(syms[0]))

/* What a walk saw. */
struct seen {
	int n;
	char names[512];
};

static int collect(const struct elf_symbol *sym, void *arg)
{
	struct seen *s = arg;
	size_t used = strlen(s->names);

	/* The name must be terminated where name_len says. */
	CHECK_EQ(strlen(sym->name), sym->name_len);
	snprintf(s->names + used, sizeof(s->names) - used, "%s%s", used ? "," : "", sym->name);
	s->n++;
	return 0;
}

/* Open @c's image from memory and walk it: the open's result; *@st and
 * *@seen describe the walk when it opened. */
static int walk_image(const struct craft *c, struct seen *seen, struct elf_file_stats *st)
{
	struct elf_file *ef;
	int ret;

	memset(seen, 0, sizeof(*seen));
	memset(st, 0, sizeof(*st));
	ret = elf_file_open_mem(c->img, c->len, &ef);
	if (ret)
		return ret;
	CHECK_EQ(elf_file_symbols(ef, collect, seen), 0);
	elf_file_stats(ef, st);
	elf_file_close(ef);
	return 0;
}

static int build(struct craft *c)
{
	int ret = craft_build(c, syms, NSYMS);

	CHECK_EQ(ret, 0);
	return ret;
}

static void test_valid(void)
{
	struct elf_file_stats st;
	const struct elf_load *loads;
	struct elf_file *ef = NULL;
	struct seen seen;
	uint64_t v;
	struct craft c;

	if (build(&c))
		return;
	CHECK_EQ(walk_image(&c, &seen, &st), 0);
	CHECK_EQ(seen.n, 4);
	CHECK_STR(seen.names, "fv_sized,fv_object,fv_undef,fv_last");
	CHECK_EQ(st.tables_skipped + st.bad_names + st.syms_capped, 0);
	CHECK_EQ(elf_file_open_mem(c.img, c.len, &ef), 0);
	if (ef) {
		CHECK_EQ(elf_file_loads(ef, &loads), 1);
		CHECK_EQ(loads[0].off, c.pg);
		CHECK_EQ(elf_file_vaddr_to_off(ef, CRAFT_VADDR + 0x100, &v), 0);
		CHECK_EQ(v, c.pg + 0x100);
		CHECK_EQ(elf_file_vaddr_to_off(ef, CRAFT_VADDR + c.pg, &v), -ENOENT);
		CHECK_EQ(elf_load_off_to_vaddr(loads, 1, c.pg + 0x10, &v), 0);
		CHECK_EQ(v, CRAFT_VADDR + 0x10);
		CHECK_EQ(elf_load_off_to_vaddr(loads, 1, 0x10, &v), -ENOENT);
		CHECK_EQ(elf_file_section_end(ef, CRAFT_TEXT_SEC, &v), 0);
		CHECK_EQ(v, CRAFT_VADDR + CRAFT_TEXT);
		CHECK_EQ(elf_file_section_end(ef, CRAFT_SYMTAB, &v), -ENOENT); /* not allocated */
		CHECK_EQ(elf_file_section_end(ef, 0, &v), -ENOENT);
		CHECK_EQ(elf_file_section_end(ef, 99, &v), -ENOENT);
		CHECK_EQ(elf_file_section_end(ef, SHN_ABS, &v), -ENOENT);
		elf_file_close(ef);
	}
	craft_free(&c);
}

/* A symbol table whose header lies about its size or entry size is read
 * by its real bytes, or skipped; never multiplied out. */
static void test_symtab_sizes(void)
{
	static const struct {
		uint64_t size, entsize;
		int walked, skipped;
	} cases[] = {
		{ 1ull << 61, 1, 0, 1 },                        /* the wrap */
		{ UINT64_MAX, sizeof(Elf64_Sym), 0, 1 },        /* over the cap */
		{ (NSYMS + 1) * sizeof(Elf64_Sym) + 4096, sizeof(Elf64_Sym), 0, 1 }, /* past the file */
		{ (NSYMS + 1) * sizeof(Elf64_Sym), 0, 0, 1 },
		{ (NSYMS + 1) * sizeof(Elf64_Sym), 1, 0, 1 },
		{ (NSYMS + 1) * sizeof(Elf64_Sym), 48, 0, 1 },
		{ 3 * sizeof(Elf64_Sym), sizeof(Elf64_Sym), 2, 0 },  /* shorter: 2 symbols */
		{ 3 * sizeof(Elf64_Sym) + 5, sizeof(Elf64_Sym), 0, 1 }, /* a partial entry: libelf refuses */
	};
	struct elf_file_stats st;
	struct seen seen;
	struct craft c;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (build(&c))
			return;
		c.sh[CRAFT_SYMTAB].sh_size = cases[i].size;
		c.sh[CRAFT_SYMTAB].sh_entsize = cases[i].entsize;
		CHECK_EQ(walk_image(&c, &seen, &st), 0);
		if (seen.n != cases[i].walked || (int)st.tables_skipped != cases[i].skipped)
			printf("# case %zu: %d walked, %d skipped\n", i, seen.n, (int)st.tables_skipped);
		CHECK_EQ(seen.n, cases[i].walked);
		CHECK_EQ(st.tables_skipped, cases[i].skipped);
		craft_free(&c);
	}
}

/* sh_link must name another section, a string table with bytes. */
static void test_sh_link(void)
{
	static const uint32_t links[] = { 0, CRAFT_SYMTAB, CRAFT_TEXT_SEC, 5, 99, UINT32_MAX };
	struct elf_file_stats st;
	struct seen seen;
	struct craft c;
	size_t i;

	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		if (build(&c))
			return;
		c.sh[CRAFT_SYMTAB].sh_link = links[i];
		CHECK_EQ(walk_image(&c, &seen, &st), 0);
		CHECK_EQ(seen.n, 0);
		CHECK_EQ(st.tables_skipped, 1);
		craft_free(&c);
	}
	/* A string table without bytes (NOBITS), one past the file's end,
	 * and one bigger than the cap. */
	for (i = 0; i < 3; i++) {
		if (build(&c))
			return;
		if (i == 0)
			c.sh[CRAFT_STRTAB].sh_type = SHT_NOBITS;
		else if (i == 1)
			c.sh[CRAFT_STRTAB].sh_offset = c.len + 4096;
		else
			c.sh[CRAFT_STRTAB].sh_size = ELF_FILE_MAX_STRTAB + 1;
		CHECK_EQ(walk_image(&c, &seen, &st), 0);
		CHECK_EQ(seen.n, 0);
		CHECK_EQ(st.tables_skipped, 1);
		craft_free(&c);
	}
}

/* st_name outside its table, or a name that does not end inside it. */
static void test_st_name(void)
{
	struct elf_file_stats st;
	struct seen seen;
	struct craft c;

	if (build(&c))
		return;
	c.sym[1].st_name = (Elf64_Word)c.sh[CRAFT_STRTAB].sh_size;
	c.sym[2].st_name = UINT32_MAX;
	CHECK_EQ(walk_image(&c, &seen, &st), 0);
	CHECK_STR(seen.names, "fv_undef,fv_last");
	CHECK_EQ(st.bad_names, 2);
	craft_free(&c);

	/* The table cut before the last name's NUL. */
	if (build(&c))
		return;
	c.sh[CRAFT_STRTAB].sh_size--;
	CHECK_EQ(walk_image(&c, &seen, &st), 0);
	CHECK_STR(seen.names, "fv_sized,fv_object,fv_undef");
	CHECK_EQ(st.bad_names, 1);
	craft_free(&c);

	/* An empty name is no symbol to report, and no error. */
	if (build(&c))
		return;
	c.sym[1].st_name = 0;
	CHECK_EQ(walk_image(&c, &seen, &st), 0);
	CHECK_STR(seen.names, "fv_object,fv_undef,fv_last");
	CHECK_EQ(st.bad_names, 0);
	craft_free(&c);
}

/* Header fields checked against the file before libelf sees it. */
static void test_headers(void)
{
	struct elf_file_stats st;
	struct seen seen;
	struct craft c;
	int i;

	for (i = 0; i < 13; i++) {
		if (build(&c))
			return;
		switch (i) {
		case 0: c.eh->e_shnum = 60000; break;           /* past the end */
		case 1: c.eh->e_shoff = UINT64_MAX - 64; break;  /* offset + size wraps */
		case 2: c.eh->e_shentsize = 32; break;
		case 3: c.eh->e_phnum = PN_XNUM; break;
		case 4: c.eh->e_phnum = ELF_FILE_MAX_PHDRS + 1; break;
		case 5: c.eh->e_phoff = c.len; break;
		case 6: c.eh->e_phentsize = 32; break;
		case 7: c.eh->e_ident[EI_CLASS] = ELFCLASS32; break;
		case 8: c.eh->e_ident[EI_DATA] = ELFDATA2MSB; break;
		case 9: c.eh->e_ident[EI_MAG1] = 'X'; break;
		case 10: /* extended numbering: the count in section 0, too big */
			c.eh->e_shnum = 0;
			c.sh[0].sh_size = 1ull << 40;
			break;
		case 11:
			c.eh->e_shnum = 0;
			c.sh[0].sh_size = ELF_FILE_MAX_SECTIONS + 1;
			break;
		case 12: c.len = sizeof(Elf64_Ehdr) - 1; break;  /* truncated */
		}
		if (walk_image(&c, &seen, &st) != -ENOEXEC)
			printf("# header case %d accepted\n", i);
		CHECK_EQ(walk_image(&c, &seen, &st), -ENOEXEC);
		craft_free(&c);
	}
	/* Extended numbering done right is accepted. */
	if (build(&c))
		return;
	c.sh[0].sh_size = c.eh->e_shnum;
	c.eh->e_shnum = 0;
	CHECK_EQ(walk_image(&c, &seen, &st), 0);
	CHECK_EQ(seen.n, 4);
	craft_free(&c);
	/* No section headers at all: an ELF without symbols. */
	if (build(&c))
		return;
	c.eh->e_shoff = 0;
	c.eh->e_shnum = 0;
	CHECK_EQ(walk_image(&c, &seen, &st), 0);
	CHECK_EQ(seen.n, 0);
	craft_free(&c);
}

/* A PT_LOAD whose end wraps is ignored: no offset comes from it. */
static void test_load_overflow(void)
{
	const struct elf_load *loads;
	struct elf_file *ef = NULL;
	struct craft c;
	uint64_t v;
	int i;

	for (i = 0; i < 2; i++) {
		if (build(&c))
			return;
		if (i == 0)
			c.ph->p_vaddr = UINT64_MAX - 16;
		else
			c.ph->p_offset = UINT64_MAX - 16;
		CHECK_EQ(elf_file_open_mem(c.img, c.len, &ef), 0);
		if (ef) {
			CHECK_EQ(elf_file_loads(ef, &loads), 0);
			CHECK_EQ(elf_file_vaddr_to_off(ef, UINT64_MAX - 8, &v), -ENOENT);
			elf_file_close(ef);
		}
		craft_free(&c);
	}
	/* p_filesz beyond p_memsz: the address sum is still checked. */
	{
		struct elf_load l = { .off = 0, .filesz = UINT64_MAX, .vaddr = 16, .memsz = 1 };

		CHECK_EQ(elf_load_off_to_vaddr(&l, 1, UINT64_MAX - 4, &v), -ENOENT);
		CHECK_EQ(elf_load_off_to_vaddr(&l, 1, 4, &v), 0);
		CHECK_EQ(v, 20);
	}
}

/* The symbol cap stops a walk and is counted. */
static void test_sym_cap(void)
{
	struct elf_file_stats st;
	struct elf_file *ef = NULL;
	struct seen seen = { 0 };
	struct craft c;

	if (build(&c))
		return;
	CHECK_EQ(elf_file_open_mem(c.img, c.len, &ef), 0);
	if (ef) {
		elf_file_limit_syms(ef, 2);
		CHECK_EQ(elf_file_symbols(ef, collect, &seen), 0);
		elf_file_stats(ef, &st);
		CHECK_EQ(seen.n, 2);
		CHECK_EQ(st.syms_capped, 1);
		elf_file_close(ef);
	}
	craft_free(&c);
}

/* From a file: a file cut short after it was opened gives errors, never a
 * crash (sections are read with pread, not mapped). */
static void test_file_truncated(void)
{
	struct elf_file_stats st;
	struct elf_file *ef = NULL;
	struct seen seen = { 0 };
	char path[4096] = "";
	struct stat sb;
	struct craft c;
	int fd = -1, wfd;

	if (build(&c))
		return;
	wfd = craft_write(&c, path, sizeof(path));
	CHECK(wfd >= 0);
	if (wfd < 0)
		goto out;
	fd = open_regular(path, true, FILE_OPEN_MAX_SIZE, &sb);
	CHECK(fd >= 0);
	if (fd >= 0 && !elf_file_open_fd(fd, (uint64_t)sb.st_size, &ef)) {
		CHECK(ftruncate(wfd, (off_t)(2 * c.pg)) == 0); /* symbols gone */
		CHECK_EQ(elf_file_symbols(ef, collect, &seen), 0);
		elf_file_stats(ef, &st);
		CHECK_EQ(seen.n, 0);
		elf_file_close(ef);
	} else {
		CHECK(0);
	}
	close(wfd);
out:
	if (fd >= 0)
		close(fd);
	if (path[0])
		unlink(path);
	craft_free(&c);
}

/* elf_symbols.c: defined symbols by name, with file offsets. */
static void test_find_symbols(void)
{
	static const char *const names[] = { "fv_last", "fv_undef", "fv_sized", "fv_nope" };
	struct elf_sym_info info[4];
	struct elf_file *ef = NULL;
	struct craft c;

	if (build(&c))
		return;
	CHECK_EQ(elf_file_open_mem(c.img, c.len, &ef), 0);
	if (ef) {
		CHECK_EQ(elf_find_symbols(ef, names, 4, info), 2);
		CHECK(info[0].found && info[0].file_off == c.pg + 0x700);
		CHECK(!info[1].found); /* imported, not defined */
		CHECK(info[2].found && info[2].file_off == c.pg + 0x100 && info[2].size == 0x40);
		CHECK(!info[3].found);
		elf_file_close(ef);
	}
	craft_free(&c);
}

static int count_fn(const char *name, uint64_t off, uint64_t size, void *arg)
{
	(void)name;
	(void)off;
	(void)size;
	return ++*(int *)arg == 100;
}

static void test_for_each_function(void)
{
	struct elf_file *ef = NULL;
	struct craft c;
	int n = 0;

	if (build(&c))
		return;
	c.sym[4].st_value = CRAFT_VADDR + 2 * c.pg; /* outside every PT_LOAD */
	CHECK_EQ(elf_file_open_mem(c.img, c.len, &ef), 0);
	if (ef) {
		/* fv_sized only: fv_object is no function, fv_undef is not
		 * defined, fv_last is not in a segment. */
		CHECK_EQ(elf_for_each_function(ef, NULL, count_fn, &n), 0);
		CHECK_EQ(n, 1);
		elf_file_close(ef);
	}
	craft_free(&c);
}

#define RO_VADDR 0x200000ull /* a read-only segment, apart from .text */

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/* elf_file_probe_off() for a function at @value in @c's image: its
 * result, the offset in *@off and the refusals counted in *@not_code. */
static int probe_off(const struct craft *c, uint64_t value, uint64_t *off, uint64_t *not_code)
{
	struct elf_symbol sym = { .name = "fv_probe", .name_len = 8, .value = value,
				  .type = STT_FUNC, .shndx = CRAFT_TEXT_SEC };
	struct elf_file_stats st;
	struct elf_file *ef;
	int ret;

	*off = *not_code = 0;
	ret = elf_file_open_mem(c->img, c->len, &ef);
	CHECK_EQ(ret, 0);
	if (ret)
		return ret;
	ret = elf_file_probe_off(ef, &sym, off);
	elf_file_stats(ef, &st);
	*not_code = st.not_code;
	elf_file_close(ef);
	return ret;
}

/* Issue 17: a probe site is executable code, whatever the symbol says. */
static void test_probe_off(void)
{
	uint64_t off, n;
	struct craft c;

	if (build(&c))
		return;
	CHECK(craft_add_load(&c, PF_R, 0, RO_VADDR, c.pg) >= 0);
	CHECK_EQ(probe_off(&c, CRAFT_VADDR + 0x100, &off, &n), 0);
	CHECK_EQ(off, c.pg + 0x100);
	CHECK_EQ(n, 0);
	/* typed a function, in the segment without PF_X (the case) */
	CHECK_EQ(probe_off(&c, RO_VADDR + CRAFT_FREE_OFF, &off, &n), -ENOEXEC);
	CHECK_EQ(n, 1);
	CHECK_EQ(probe_off(&c, RO_VADDR + 2 * c.pg, &off, &n), -ENOENT); /* in none */
	CHECK_EQ(n, 1);
	/* The segment's last bytes: a NOP that ends it leads the probe out
	 * (uprobe_site_offset() steps over it), a NOP and a ret do not. */
	memcpy(c.img + 2 * c.pg - 5, nop5, 5);
	CHECK_EQ(probe_off(&c, CRAFT_VADDR + c.pg - 5, &off, &n), -ENOEXEC);
	memcpy(c.img + 2 * c.pg - 6, nop5, 5);
	c.img[2 * c.pg - 1] = 0xc3;
	CHECK_EQ(probe_off(&c, CRAFT_VADDR + c.pg - 6, &off, &n), 0);
	CHECK_EQ(off, 2 * c.pg - 6);
	/* a NOP cut by the segment's end, completed by the bytes after it
	 * (.symtab's null symbol): read as the probe would read it */
	memcpy(c.img + 2 * c.pg - 8, nop5, 5);
	memcpy(c.img + 2 * c.pg - 3, nop5, 3);
	CHECK_EQ(probe_off(&c, CRAFT_VADDR + c.pg - 8, &off, &n), -ENOEXEC);
	craft_free(&c);
	/* code bytes a read-only segment maps too: the int3 would be there */
	if (build(&c))
		return;
	CHECK(craft_add_load(&c, PF_R, c.pg, RO_VADDR, c.pg) >= 0);
	CHECK_EQ(probe_off(&c, CRAFT_VADDR + 0x100, &off, &n), -ENOEXEC);
	craft_free(&c);
	/* an executable segment past the file's end */
	if (build(&c))
		return;
	CHECK(craft_add_load(&c, PF_R | PF_X, c.len + c.pg, RO_VADDR, c.pg) >= 0);
	CHECK_EQ(probe_off(&c, RO_VADDR, &off, &n), -ENOEXEC);
	craft_free(&c);
}

/* Every family's lookups go through it: a function moved into read-only
 * data is not a probe site, yet still an address for data lookups. */
static void test_lookups_not_code(void)
{
	static const char *const names[] = { "fv_sized", "fv_last" };
	static const bool code[] = { true, true };
	struct elf_sym_info info[2];
	struct elf_file_stats st;
	struct elf_file *ef = NULL;
	struct craft c;
	int n = 0;

	if (build(&c))
		return;
	CHECK(craft_add_load(&c, PF_R, 0, RO_VADDR, c.pg) >= 0);
	c.sym[1].st_value = RO_VADDR + CRAFT_FREE_OFF; /* fv_sized */
	CHECK_EQ(elf_file_open_mem(c.img, c.len, &ef), 0);
	if (ef) {
		CHECK_EQ(elf_for_each_function(ef, NULL, count_fn, &n), 0);
		CHECK_EQ(n, 1); /* fv_last */
		CHECK_EQ(elf_find_symbols_code(ef, names, code, 2, info), 1);
		CHECK(!info[0].found && info[1].found);
		elf_file_stats(ef, &st);
		CHECK_EQ(st.not_code, 2);
		CHECK_EQ(elf_find_symbols(ef, names, 2, info), 2);
		CHECK(info[0].found && info[0].file_off == CRAFT_FREE_OFF);
		elf_file_close(ef);
	}
	craft_free(&c);
}

/* A search of names with a shared start passes over a table whose names
 * never hold it, and never one that does, even where the only place the
 * start occurs straddles two of the chunks the string table is read in. */
static void test_find_passes_over(void)
{
	static const char *const absent[] = { "fvy_one", "fvy_two" };
	static const char *const straddled[] = { "fvx_one", "fvx_two" };
	static const char *const short_start[] = { "fv_last", "fw_last" };
	const size_t at = 256 * 1024 - 2; /* "fvx_" from here in .strtab */
	struct craft_sym sym = { .type = STT_FUNC, .bind = STB_GLOBAL, .off = 0x100,
				 .size = 8, .shndx = CRAFT_TEXT_SEC };
	struct elf_sym_info info[2];
	struct elf_file_stats st;
	struct elf_file *ef = NULL;
	struct craft c;
	char *name;

	/* .strtab: "\0", then the name from offset 1 */
	name = malloc(at + 16);
	CHECK(name != NULL);
	if (!name)
		return;
	memset(name, 'a', at - 1);
	strcpy(name + at - 1, "fvx_end");
	sym.name = name;
	if (craft_build(&c, &sym, 1) == 0 && elf_file_open_mem(c.img, c.len, &ef) == 0) {
		CHECK_EQ(elf_find_symbols(ef, straddled, 2, info), 0);
		elf_file_stats(ef, &st);
		CHECK_EQ(st.tables_unnamed, 0);
		CHECK_EQ(elf_find_symbols(ef, absent, 2, info), 0);
		elf_file_stats(ef, &st);
		CHECK_EQ(st.tables_unnamed, 1);
		/* a start of two bytes passes nothing over */
		CHECK_EQ(elf_find_symbols(ef, short_start, 2, info), 0);
		elf_file_stats(ef, &st);
		CHECK_EQ(st.tables_unnamed, 1);
		elf_file_close(ef);
	} else {
		CHECK(!"crafted");
	}
	craft_free(&c);
	free(name);
}

int main(void)
{
	RUN(test_valid);
	RUN(test_symtab_sizes);
	RUN(test_sh_link);
	RUN(test_st_name);
	RUN(test_headers);
	RUN(test_load_overflow);
	RUN(test_sym_cap);
	RUN(test_file_truncated);
	RUN(test_find_symbols);
	RUN(test_find_passes_over);
	RUN(test_for_each_function);
	RUN(test_probe_off);
	RUN(test_lookups_not_code);
	UNIT_DONE();
}
