// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The one ELF reader (see elf_file.h).  libelf reads the sections; the
 * headers are checked here first, against the file's real size, so that a
 * crafted section count or program header table cannot make libelf (or
 * us) allocate or read what the file does not hold.
 */
#define _GNU_SOURCE /* memmem */
#include <endian.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/elf/elf_file.h"
#include "proc/elf/uprobe_site.h"
#include "util/log.h"

/* Refused probe sites said with -v per file; the rest only counted (a
 * crafted file can hold millions). */
#define NOT_CODE_SAID 8

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define HOST_ELFDATA ELFDATA2LSB
#else
#define HOST_ELFDATA ELFDATA2MSB
#endif

/* Where the bytes come from: a descriptor (pread) or memory. */
struct src {
	int fd;
	const unsigned char *mem;
	uint64_t size;
};

struct elf_file {
	Elf *elf;
	struct src src;         /* the caller keeps it open (or alive) */
	uint64_t size;          /* of the file or image */
	size_t shnum;           /* checked against the size */
	struct elf_load *loads;
	size_t nloads;
	size_t max_syms;        /* ELF_FILE_MAX_SYMS or less */
	size_t walked;          /* symbols looked at by the current walk */
	bool capped;            /* the current walk reached ELF_FILE_MAX_SYMS */
	struct elf_file_stats st;
};

static int src_read(const struct src *s, uint64_t off, void *buf, size_t len)
{
	ssize_t n;

	if (off > s->size || s->size - off < len)
		return -ENOEXEC;
	if (s->mem) {
		memcpy(buf, s->mem + off, len);
		return 0;
	}
	do
		n = pread(s->fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -ENOEXEC; /* truncated since */
}

/* @n entries of @entsize bytes at @off lie inside the file. */
static bool table_fits(const struct src *s, uint64_t off, uint64_t n, uint64_t entsize)
{
	uint64_t bytes, end;

	return !__builtin_mul_overflow(n, entsize, &bytes) &&
	       !__builtin_add_overflow(off, bytes, &end) && end <= s->size;
}

static bool ident_ok(const Elf64_Ehdr *eh)
{
	return !memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
	       eh->e_ident[EI_DATA] == HOST_ELFDATA && eh->e_ident[EI_VERSION] == EV_CURRENT;
}

static int check_phdrs(const struct src *s, const Elf64_Ehdr *eh)
{
	if (!eh->e_phnum)
		return 0;
	/* PN_XNUM (more than 65534, counted elsewhere) is no file of ours. */
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum > ELF_FILE_MAX_PHDRS ||
	    !table_fits(s, eh->e_phoff, eh->e_phnum, sizeof(Elf64_Phdr)))
		return -ENOEXEC;
	return 0;
}

/* The section count, with the extended numbering of e_shnum == 0 (the
 * real count in section 0's sh_size). */
static int check_shdrs(const struct src *s, const Elf64_Ehdr *eh, size_t *shnum)
{
	Elf64_Shdr sh0;
	uint64_t n = eh->e_shnum;
	int ret;

	*shnum = 0;
	if (!eh->e_shoff)
		return 0;
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return -ENOEXEC;
	if (!n) {
		ret = src_read(s, eh->e_shoff, &sh0, sizeof(sh0));
		if (ret)
			return ret;
		n = sh0.sh_size;
	}
	if (n > ELF_FILE_MAX_SECTIONS || !table_fits(s, eh->e_shoff, n, sizeof(Elf64_Shdr)))
		return -ENOEXEC;
	*shnum = (size_t)n;
	return 0;
}

static int check_header(const struct src *s, size_t *shnum)
{
	Elf64_Ehdr eh;
	int ret;

	ret = src_read(s, 0, &eh, sizeof(eh));
	if (ret)
		return ret;
	if (!ident_ok(&eh))
		return -ENOEXEC;
	ret = check_phdrs(s, &eh);
	return ret ? ret : check_shdrs(s, &eh, shnum);
}

/* PT_LOAD segments whose ends do not overflow. */
static int read_loads(struct elf_file *ef)
{
	size_t i, nph;
	GElf_Phdr ph;
	uint64_t end;

	if (elf_getphdrnum(ef->elf, &nph) || nph > ELF_FILE_MAX_PHDRS)
		return -ENOEXEC;
	ef->loads = calloc(nph ? nph : 1, sizeof(*ef->loads));
	if (!ef->loads)
		return -ENOMEM;
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(ef->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (__builtin_add_overflow(ph.p_offset, ph.p_filesz, &end) ||
		    __builtin_add_overflow(ph.p_vaddr, ph.p_memsz, &end))
			continue;
		ef->loads[ef->nloads++] = (struct elf_load){ ph.p_offset, ph.p_filesz, ph.p_vaddr,
							     ph.p_memsz, ph.p_flags };
	}
	return 0;
}

static int open_elf(const struct src *s, struct elf_file **out)
{
	struct elf_file *ef;
	size_t shnum, n;
	int ret;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	ret = check_header(s, &shnum);
	if (ret)
		return ret;
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return -ENOMEM;
	ef->src = *s;
	ef->size = s->size;
	ef->shnum = shnum;
	ef->max_syms = ELF_FILE_MAX_SYMS;
	/* ELF_C_READ: sections come by pread into memory of their own, so a
	 * file truncated under us cannot raise SIGBUS as a mapping would. */
	ef->elf = s->mem ? elf_memory((char *)s->mem, (size_t)s->size)
			 : elf_begin(s->fd, ELF_C_READ, NULL);
	ret = -ENOEXEC;
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF || gelf_getclass(ef->elf) != ELFCLASS64 ||
	    elf_getshdrnum(ef->elf, &n) || n != shnum)
		goto fail;
	ret = read_loads(ef);
	if (ret)
		goto fail;
	*out = ef;
	return 0;
fail:
	elf_file_close(ef);
	return ret;
}

int elf_file_open_fd(int fd, uint64_t size, struct elf_file **out)
{
	struct src s = { .fd = fd, .size = size };

	return open_elf(&s, out);
}

int elf_file_open_mem(const void *buf, size_t len, struct elf_file **out)
{
	struct src s = { .fd = -1, .mem = buf, .size = len };

	if (!buf)
		return -EINVAL;
	return open_elf(&s, out);
}

void elf_file_close(struct elf_file *ef)
{
	if (!ef)
		return;
	if (ef->elf)
		elf_end(ef->elf);
	free(ef->loads);
	free(ef);
}

size_t elf_file_loads(const struct elf_file *ef, const struct elf_load **loads)
{
	*loads = ef->loads;
	return ef->nloads;
}

int elf_file_vaddr_to_off(const struct elf_file *ef, uint64_t vaddr, uint64_t *off)
{
	const struct elf_load *l;
	size_t i;

	for (i = 0; i < ef->nloads; i++) {
		l = &ef->loads[i];
		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->memsz &&
		    !__builtin_add_overflow(vaddr - l->vaddr, l->off, off))
			return 0;
	}
	return -ENOENT;
}

/* Whether file bytes [@off, @off + @len) meet those of a PT_LOAD without
 * PF_X (which ld never makes: only a crafted file maps code bytes twice). */
static bool meets_data(const struct elf_file *ef, uint64_t off, uint64_t len)
{
	const struct elf_load *l;
	size_t i;

	for (i = 0; i < ef->nloads; i++) {
		l = &ef->loads[i];
		if (!(l->flags & PF_X) && l->filesz &&
		    (l->off <= off ? off - l->off < l->filesz : l->off - off < len))
			return true;
	}
	return false;
}

/*
 * The file offset of @vaddr in the file bytes of an executable PT_LOAD,
 * and how many code bytes follow it there (at most @want): -ENOEXEC when
 * @vaddr is in a PT_LOAD but not such code, -ENOENT when in none.
 */
static int code_at(const struct elf_file *ef, uint64_t vaddr, uint64_t want, uint64_t *off,
		   uint64_t *room)
{
	const struct elf_load *l;
	uint64_t in;
	size_t i;

	for (i = 0; i < ef->nloads; i++) {
		l = &ef->loads[i];
		in = vaddr - l->vaddr;
		if (!(l->flags & PF_X) || vaddr < l->vaddr || in >= l->filesz)
			continue;
		*off = l->off + in; /* read_loads() checked the sum */
		*room = l->filesz - in < want ? l->filesz - in : want;
		/* a byte past the file is nothing the kernel could probe */
		if (*off >= ef->size || meets_data(ef, *off, *room))
			return -ENOEXEC;
		return 0;
	}
	return elf_file_vaddr_to_off(ef, vaddr, off) ? -ENOENT : -ENOEXEC;
}

/* Where a probe at @off would go past leading 5-byte NOPs lies inside the
 * @room code bytes there: read as uprobe_site_offset() reads them. */
static bool site_inside(const struct elf_file *ef, uint64_t off, uint64_t room)
{
	uint8_t code[UPROBE_SITE_MAX_SKIP];
	uint64_t len = ef->size - off < sizeof(code) ? ef->size - off : sizeof(code);

	if (src_read(&ef->src, off, code, (size_t)len))
		return false;
	return uprobe_site_skip(code, (size_t)len) < room;
}

/* The file's name for a message: what the descriptor we read is open on. */
static void file_name(const struct elf_file *ef, char *buf, size_t len)
{
	char link[64];
	ssize_t n = -1;

	if (!ef->src.mem) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", ef->src.fd);
		n = readlink(link, buf, len - 1);
	}
	if (n < 0)
		snprintf(buf, len, "(an ELF image in memory)");
	else
		buf[n] = '\0';
}

static void not_code(struct elf_file *ef, const struct elf_symbol *sym)
{
	char path[PATH_MAX];

	if (ef->st.not_code++ >= NOT_CODE_SAID)
		return;
	file_name(ef, path, sizeof(path));
	log_debug("%s in %s: not in executable code, not probed%s", sym->name, path,
		  ef->st.not_code == NOT_CODE_SAID ? " (further ones in this file are not listed)" : "");
}

int elf_file_probe_off(struct elf_file *ef, const struct elf_symbol *sym, uint64_t *off)
{
	uint64_t room;
	int ret;

	/* Near the end of its code, the bytes decide where the probe goes. */
	ret = code_at(ef, sym->value, UPROBE_SITE_MAX_SKIP + 1, off, &room);
	if (!ret && room <= UPROBE_SITE_MAX_SKIP && !site_inside(ef, *off, room))
		ret = -ENOEXEC;
	if (ret)
		not_code(ef, sym);
	return ret;
}

int elf_load_off_to_vaddr(const struct elf_load *loads, size_t n, uint64_t off, uint64_t *vaddr)
{
	const struct elf_load *l;
	size_t i;

	for (i = 0; i < n; i++) {
		l = &loads[i];
		if (off >= l->off && off - l->off < l->filesz &&
		    !__builtin_add_overflow(off - l->off, l->vaddr, vaddr))
			return 0;
	}
	return -ENOENT;
}

/* Section @i's header, for 0 < @i < shnum. */
static bool section(const struct elf_file *ef, size_t i, Elf_Scn **scn, GElf_Shdr *sh)
{
	if (!i || i >= ef->shnum)
		return false;
	*scn = elf_getscn(ef->elf, i);
	return *scn && gelf_getshdr(*scn, sh);
}

int elf_file_section_end(const struct elf_file *ef, uint16_t shndx, uint64_t *end)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (shndx >= SHN_LORESERVE || !section(ef, shndx, &scn, &sh) ||
	    !(sh.sh_flags & SHF_ALLOC) || __builtin_add_overflow(sh.sh_addr, sh.sh_size, end))
		return -ENOENT;
	return 0;
}

/* The bytes of a section, read now: NULL for one without any (NOBITS) or
 * one libelf finds outside the file. */
static Elf_Data *section_data(Elf_Scn *scn, Elf_Type type)
{
	Elf_Data *d = elf_getdata(scn, NULL);

	return d && d->d_buf && d->d_size && d->d_type == type ? d : NULL;
}

/* The string table a symbol table at @self links to. */
static Elf_Data *linked_strtab(const struct elf_file *ef, size_t self, const GElf_Shdr *symsh)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (symsh->sh_link == self || !section(ef, symsh->sh_link, &scn, &sh) ||
	    sh.sh_type != SHT_STRTAB || sh.sh_size > ELF_FILE_MAX_STRTAB)
		return NULL;
	return section_data(scn, ELF_T_BYTE);
}

/* The name of @sym: inside @str and NUL-terminated there, else NULL. */
static const char *sym_name(const Elf_Data *str, const GElf_Sym *sym, size_t *len)
{
	const char *name, *nul;

	if (sym->st_name >= str->d_size)
		return NULL;
	name = (const char *)str->d_buf + sym->st_name;
	nul = memchr(name, '\0', str->d_size - sym->st_name);
	if (!nul)
		return NULL;
	*len = (size_t)(nul - name);
	return name;
}

static int walk_table(struct elf_file *ef, size_t idx, Elf_Scn *scn, const GElf_Shdr *sh,
		      elf_symbol_fn fn, void *ctx)
{
	struct elf_symbol out;
	Elf_Data *data, *str;
	size_t i, count;
	GElf_Sym sym;
	int ret;

	/* The header's sizes are only checked, never multiplied: the count
	 * comes from the bytes read. */
	if (sh->sh_entsize != sizeof(Elf64_Sym) ||
	    sh->sh_size / sizeof(Elf64_Sym) > ELF_FILE_MAX_SYMS ||
	    !(str = linked_strtab(ef, idx, sh)) || !(data = section_data(scn, ELF_T_SYM))) {
		ef->st.tables_skipped++;
		return 0;
	}
	count = data->d_size / sizeof(Elf64_Sym);
	for (i = 1; i < count; i++) { /* 0: the null symbol */
		if (ef->walked >= ef->max_syms) {
			ef->st.syms_capped++;
			ef->capped = true;
			return 0;
		}
		ef->walked++;
		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		out.name = sym_name(str, &sym, &out.name_len);
		if (!out.name) {
			ef->st.bad_names++;
			continue;
		}
		if (!out.name_len)
			continue;
		out.value = sym.st_value;
		out.size = sym.st_size;
		out.shndx = sym.st_shndx;
		out.type = GELF_ST_TYPE(sym.st_info);
		out.bind = GELF_ST_BIND(sym.st_info);
		out.dynamic = sh->sh_type == SHT_DYNSYM;
		ret = fn(&out, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

/* Chunks a string table is scanned in by strtab_holds(). */
#define SCAN_CHUNK (256u << 10)
#define SCAN_PART_MAX 64

/* Whether the string table with header @sh holds @part's bytes anywhere,
 * read in chunks of our own, never kept.  A table that cannot be read
 * "may": the walk that follows decides as it would have. */
static bool strtab_holds(const struct elf_file *ef, const GElf_Shdr *sh, const char *part)
{
	size_t plen = strlen(part), have = 0, len, total;
	uint64_t off = sh->sh_offset, left = sh->sh_size;
	bool hit = false;
	char *buf;

	if (sh->sh_type != SHT_STRTAB || !plen || plen > SCAN_PART_MAX ||
	    !(buf = malloc(SCAN_CHUNK + SCAN_PART_MAX)))
		return true;
	while (left && !hit) {
		len = left < SCAN_CHUNK ? (size_t)left : SCAN_CHUNK;
		if (src_read(&ef->src, off, buf + have, len)) {
			hit = true;
			break;
		}
		off += len;
		left -= len;
		total = have + len;
		hit = memmem(buf, total, part, plen) != NULL;
		/* the last plen - 1 bytes may begin a match the next chunk ends */
		have = total < plen - 1 ? total : plen - 1;
		memmove(buf, buf + total - have, have);
	}
	free(buf);
	return hit;
}

/* Whether symbol table @sh (at @self) may name a symbol with @part. */
static bool table_may_name(struct elf_file *ef, size_t self, const GElf_Shdr *sh, const char *part)
{
	Elf_Scn *scn;
	GElf_Shdr str;

	if (!part || sh->sh_link == self || !section(ef, sh->sh_link, &scn, &str) ||
	    strtab_holds(ef, &str, part))
		return true;
	ef->st.tables_unnamed++;
	return false;
}

int elf_file_symbols_with(struct elf_file *ef, const char *part, elf_symbol_fn fn, void *ctx)
{
	static const Elf64_Word tables[] = { SHT_DYNSYM, SHT_SYMTAB };
	Elf_Scn *scn;
	GElf_Shdr sh;
	size_t t, i;
	int ret = 0;

	ef->walked = 0;
	ef->capped = false;
	for (t = 0; t < 2 && !ret && !ef->capped; t++)
		for (i = 1; i < ef->shnum && !ret && !ef->capped; i++)
			if (section(ef, i, &scn, &sh) && sh.sh_type == tables[t] &&
			    table_may_name(ef, i, &sh, part))
				ret = walk_table(ef, i, scn, &sh, fn, ctx);
	return ret;
}

int elf_file_symbols(struct elf_file *ef, elf_symbol_fn fn, void *ctx)
{
	return elf_file_symbols_with(ef, NULL, fn, ctx);
}

void elf_file_stats(const struct elf_file *ef, struct elf_file_stats *out)
{
	*out = ef->st;
}

void elf_file_limit_syms(struct elf_file *ef, size_t max_syms)
{
	ef->max_syms = max_syms && max_syms < ELF_FILE_MAX_SYMS ? max_syms : ELF_FILE_MAX_SYMS;
}
