// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Address -> symbol name for traced processes (see symbolizer.h).
 *
 * Three caches, so that the common case (the same kernel stub launched
 * millions of times) is a hash probe and a memcpy:
 *   - per file (maps dev:inode): the symbol table, sorted by address once;
 *   - per pid: the parsed /proc/PID/maps, reread only when an address falls
 *     outside every known mapping (a library mapped since);
 *   - per pid: address -> demangled name (or "0x..." for a definite miss).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbolizer.h"

/* libstdc++'s Itanium demangler (linked with -lstdc++); declared here so
 * this file stays C. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Beyond this many cached addresses for one pid, start that cache afresh:
 * bounds memory when something feeds us endless distinct addresses. */
#define ADDR_CACHE_MAX (1u << 20)

struct sym {
	uint64_t vaddr;
	uint64_t size;  /* st_size, or up to the end of its section when 0 */
	uint32_t name;  /* offset into sym_file.strs */
	uint32_t rank;  /* among symbols at one address, the highest is kept */
};

/* A PT_LOAD: how file offsets become virtual addresses. */
struct load_seg {
	uint64_t off, filesz, vaddr;
};

struct sym_file {
	dev_t dev;              /* as /proc/PID/maps shows them: the key */
	ino_t ino;
	off_t size;             /* with mtime: which file had that inode */
	struct timespec mtime;  /* (inode numbers are reused after unlink) */
	bool stale;             /* that inode holds another file now */
	int err;                /* < 0: not an ELF we can read; don't retry */
	struct sym *syms;       /* sorted by vaddr, one per address */
	size_t nsyms;
	char *strs;             /* the string tables, concatenated */
	struct load_seg *segs;
	size_t nsegs;
	struct sym_file *next;
};

struct mapping {
	uint64_t start, end, pgoff;
	dev_t dev;
	ino_t ino;              /* 0: not backed by a file */
	size_t path;            /* offset into pid_cache.paths */
	bool deleted;           /* path ends in " (deleted)": use map_files */
	struct sym_file *file;  /* resolved on first use */
};

struct addr_slot {
	uint64_t addr;
	char *name;             /* NULL: empty slot */
	size_t len;
	int rc;
};

struct pid_cache {
	pid_t pid;
	struct mapping *maps;   /* sorted by start, as the kernel lists them */
	size_t nmaps;
	char *paths;            /* NUL-terminated paths of the last maps read */
	struct addr_slot *slots; /* open addressing, power-of-two capacity */
	size_t cap, used;
	struct pid_cache *next;
};

struct symbolizer {
	struct pid_cache *pids; /* most recently used first */
	struct sym_file *files;
	struct symbolizer_stats st;
};

/* ---- strings ---- */

/* Copy @src (@n bytes) into @buf, truncated and NUL-terminated. */
static void copy_out(char *buf, size_t len, const char *src, size_t n)
{
	if (!len)
		return;
	if (n >= len)
		n = len - 1;
	memcpy(buf, src, n);
	buf[n] = '\0';
}

/*
 * Malloc'd demangled @name, or a copy of it when it is not an Itanium
 * mangled name.  Only "_Z..." goes to the demangler: it would also read a
 * plain "f" or "i" as a type and turn it into "float" or "int".
 */
static char *demangle_alloc(const char *name)
{
	int status = -1;
	char *out = NULL;

	if (!strncmp(name, "_Z", 2))
		out = __cxa_demangle(name, NULL, NULL, &status);
	if (out && status == 0)
		return out;
	free(out);
	return strdup(name);
}

void symbolizer_demangle(const char *name, char *buf, size_t len)
{
	char *d;

	if (!name)
		name = "";
	d = demangle_alloc(name);
	copy_out(buf, len, d ? d : name, strlen(d ? d : name));
	free(d);
}

/* ---- ELF files ---- */

static int load_segs(Elf *elf, struct sym_file *f)
{
	size_t i, nph;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph))
		return -ENOEXEC;
	f->segs = calloc(nph ? nph : 1, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->segs[f->nsegs].off = ph.p_offset;
		f->segs[f->nsegs].filesz = ph.p_filesz;
		f->segs[f->nsegs].vaddr = ph.p_vaddr;
		f->nsegs++;
	}
	return 0;
}

/*
 * Preference among symbols at one address, highest first: a real size, a
 * function, fewer leading underscores (getpid over its alias __getpid),
 * global over weak over local.
 */
static uint32_t sym_rank(const GElf_Sym *sym, const char *name)
{
	unsigned int type = GELF_ST_TYPE(sym->st_info), bind = GELF_ST_BIND(sym->st_info);
	uint32_t under = 0;

	while (name[under] == '_' && under < 15)
		under++;
	return (uint32_t)(sym->st_size != 0) << 12 |
	       (uint32_t)(type == STT_FUNC || type == STT_GNU_IFUNC) << 8 |
	       (15 - under) << 4 |
	       (bind == STB_GLOBAL ? 2u : bind == STB_WEAK ? 1u : 0u);
}

/* End address of every allocated section, so that a symbol of size 0 covers
 * at most the rest of its section. */
static int section_ends(Elf *elf, uint64_t **ends, size_t *n)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrnum(elf, n))
		return -ENOEXEC;
	*ends = calloc(*n ? *n : 1, sizeof(**ends));
	if (!*ends)
		return -ENOMEM;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t i = elf_ndxscn(scn);

		if (i < *n && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC))
			(*ends)[i] = sh.sh_addr + sh.sh_size;
	}
	return 0;
}

/* Whether @sym names code or data at an address we may be asked about. */
static bool sym_wanted(const GElf_Sym *sym)
{
	unsigned int type = GELF_ST_TYPE(sym->st_info);

	if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC)
		return false;
	return sym->st_shndx != SHN_UNDEF && sym->st_value && sym->st_name;
}

/* Append the symbols of one .symtab/.dynsym section (@sh of @scn), its
 * string table going to f->strs at @base. */
static void add_syms(Elf_Scn *scn, const GElf_Shdr *sh, struct sym_file *f,
		     size_t base, size_t strsz, const uint64_t *ends, size_t nends)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count;
	GElf_Sym sym;

	if (!data || !sh->sh_entsize)
		return;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		struct sym *o = &f->syms[f->nsyms];

		if (!gelf_getsym(data, (int)i, &sym) || !sym_wanted(&sym) || sym.st_name >= strsz)
			continue;
		o->vaddr = sym.st_value;
		o->size = sym.st_size;
		if (!o->size && sym.st_shndx < nends && ends[sym.st_shndx] > sym.st_value)
			o->size = ends[sym.st_shndx] - sym.st_value;
		if (!o->size)
			continue;
		o->name = (uint32_t)(base + sym.st_name);
		o->rank = sym_rank(&sym, f->strs + o->name);
		f->nsyms++;
	}
}

static Elf_Data *strtab_of(Elf *elf, const GElf_Shdr *sh)
{
	Elf_Scn *str = elf_getscn(elf, sh->sh_link);
	Elf_Data *data = str ? elf_getdata(str, NULL) : NULL;

	/* A SHT_NOBITS "string table" (broken file) has a size, no bytes. */
	return data && data->d_buf ? data : NULL;
}

static bool is_symtab(Elf_Scn *scn, GElf_Shdr *sh)
{
	return gelf_getshdr(scn, sh) && (sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM);
}

/*
 * Both .symtab (local symbols: static functions, nvcc stubs) and .dynsym
 * (all a stripped library still has) go into one array; the string tables
 * are copied whole, so a symbol keeps just an offset.
 */
static int load_syms(Elf *elf, struct sym_file *f)
{
	size_t nsyms = 0, strsz = 0, base = 0, nends = 0;
	uint64_t *ends = NULL;
	Elf_Scn *scn = NULL;
	Elf_Data *str;
	GElf_Shdr sh;
	int ret;

	ret = section_ends(elf, &ends, &nends);
	if (ret)
		return ret;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!is_symtab(scn, &sh) || !sh.sh_entsize || !(str = strtab_of(elf, &sh)))
			continue;
		nsyms += sh.sh_size / sh.sh_entsize;
		strsz += str->d_size;
	}
	if (strsz >= UINT32_MAX) {
		ret = -EFBIG;
		goto cleanup;
	}
	f->syms = malloc((nsyms ? nsyms : 1) * sizeof(*f->syms));
	f->strs = malloc(strsz + 1);
	if (!f->syms || !f->strs) {
		ret = -ENOMEM;
		goto cleanup;
	}
	f->strs[strsz] = '\0'; /* a malformed last table still ends */
	while ((scn = elf_nextscn(elf, scn))) {
		if (!is_symtab(scn, &sh) || !sh.sh_entsize || !(str = strtab_of(elf, &sh)))
			continue;
		if (str->d_size)
			memcpy(f->strs + base, str->d_buf, str->d_size);
		add_syms(scn, &sh, f, base, str->d_size, ends, nends);
		base += str->d_size;
	}
cleanup:
	free(ends);
	return ret;
}

/* By address, then best first; the name offset last, so the order (and the
 * name chosen among equals) does not depend on qsort. */
static int sym_cmp(const void *pa, const void *pb)
{
	const struct sym *a = pa, *b = pb;

	if (a->vaddr != b->vaddr)
		return a->vaddr < b->vaddr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/* Sort once, keep the best symbol of each address: lookups binary search. */
static void sort_syms(struct sym_file *f)
{
	size_t i, n = 0;

	qsort(f->syms, f->nsyms, sizeof(*f->syms), sym_cmp);
	for (i = 0; i < f->nsyms; i++)
		if (!n || f->syms[n - 1].vaddr != f->syms[i].vaddr)
			f->syms[n++] = f->syms[i];
	f->nsyms = n;
}

static int elf_load(struct sym_file *f, int fd)
{
	Elf *elf;
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = -ENOEXEC;
		goto cleanup;
	}
	ret = load_segs(elf, f);
	if (ret)
		goto cleanup;
	ret = load_syms(elf, f);
	if (ret)
		goto cleanup;
	sort_syms(f);
cleanup:
	if (elf)
		elf_end(elf);
	return ret;
}

/* File offset -> ELF virtual address, through the PT_LOAD holding it. */
static int file_vaddr(const struct sym_file *f, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < f->nsegs; i++) {
		if (off >= f->segs[i].off && off - f->segs[i].off < f->segs[i].filesz) {
			*vaddr = off - f->segs[i].off + f->segs[i].vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* The last symbol at or below @vaddr, if it reaches @vaddr. */
static const struct sym *sym_find(const struct sym_file *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->nsyms, mid;
	const struct sym *s;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (f->syms[mid].vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &f->syms[lo - 1];
	return vaddr - s->vaddr < s->size ? s : NULL;
}

static void file_free(struct sym_file *f)
{
	free(f->syms);
	free(f->strs);
	free(f->segs);
	free(f);
}

/* ---- opening a mapped file ---- */

/* Open @p if it is a regular file (never a device someone mapped, such as
 * /dev/nvidia0: opening those can have effects); @st gets its status. */
static int open_regular(const char *p, struct stat *st)
{
	int fd;

	if (stat(p, st))
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -ENOENT;
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

/* The paths that reach @m's file: under the process's root (containers),
 * unless deleted, and the mapping itself (needs CAP_SYS_ADMIN). */
static int root_path(char *p, size_t n, pid_t pid, const struct mapping *m, const char *path)
{
	if (m->deleted || snprintf(p, n, "/proc/%d/root%s", (int)pid, path) >= (int)n)
		return -ENOENT;
	return 0;
}

static void map_files_path(char *p, size_t n, pid_t pid, const struct mapping *m)
{
	snprintf(p, n, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start, m->end);
}

/*
 * Open the file behind @m: by its path, unless that was deleted or now
 * holds another inode (a library upgraded in place), then through
 * map_files.  Overlayfs may show another inode in maps than stat does, so a
 * path with another inode is still the last resort.
 */
static int open_mapped(pid_t pid, const struct mapping *m, const char *path)
{
	int fd = -ENOENT, other = -ENOENT;
	char p[PATH_MAX + 64];
	struct stat st;

	if (!root_path(p, sizeof(p), pid, m, path)) {
		fd = open_regular(p, &st);
		if (fd >= 0 && st.st_ino == m->ino)
			return fd;
		other = fd;
	}
	map_files_path(p, sizeof(p), pid, m);
	fd = open_regular(p, &st);
	if (fd >= 0) {
		if (other >= 0)
			close(other);
		return fd;
	}
	return other >= 0 ? other : fd;
}

/* stat() of the file behind @m, by the same ways; -ENOENT when neither is
 * reachable (deleted, no CAP_SYS_ADMIN): then dev:inode is all we know. */
static int stat_mapped(pid_t pid, const struct mapping *m, const char *path, struct stat *st)
{
	char p[PATH_MAX + 64];

	if (!root_path(p, sizeof(p), pid, m, path) && !stat(p, st) && st->st_ino == m->ino)
		return 0;
	map_files_path(p, sizeof(p), pid, m);
	return stat(p, st) ? -ENOENT : 0;
}

static bool same_file(const struct sym_file *f, const struct stat *st)
{
	return f->size == st->st_size && f->mtime.tv_sec == st->st_mtim.tv_sec &&
	       f->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* A cached file with @m's dev:inode, unless that inode was reused since for
 * another file (a .so written, loaded, deleted, and another written: JIT
 * caches do that); such an entry is marked stale, never freed, as mappings
 * of other pids may still point to it. */
static struct sym_file *file_find(struct symbolizer *s, struct pid_cache *pc,
				  const struct mapping *m)
{
	struct sym_file *f;
	struct stat st;
	bool known = false;

	for (f = s->files; f; f = f->next) {
		if (f->stale || f->dev != m->dev || f->ino != m->ino)
			continue;
		if (!known && stat_mapped(pc->pid, m, pc->paths + m->path, &st))
			return f;
		known = true;
		if (same_file(f, &st))
			return f;
		f->stale = true;
	}
	return NULL;
}

/* Read the symbols of @m's file into a new cache entry. */
static struct sym_file *file_load(struct symbolizer *s, struct pid_cache *pc,
				  const struct mapping *m, int *err)
{
	struct sym_file *f;
	struct stat st;
	int fd;

	fd = open_mapped(pc->pid, m, pc->paths + m->path);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f || fstat(fd, &st)) {
		*err = f ? -errno : -ENOMEM;
		free(f);
		close(fd);
		return NULL;
	}
	f->dev = m->dev;
	f->ino = m->ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	f->err = elf_load(f, fd);
	close(fd);
	s->st.file_loads++;
	f->next = s->files;
	s->files = f;
	return f;
}

/* The symbol table of @m's file, loaded on first use; NULL with *err.  An
 * open failure may be this pid's own (gone, another root): not remembered,
 * unlike a file that is no ELF. */
static struct sym_file *file_get(struct symbolizer *s, struct pid_cache *pc,
				 struct mapping *m, int *err)
{
	if (!m->file)
		m->file = file_find(s, pc, m);
	if (!m->file)
		m->file = file_load(s, pc, m, err);
	if (!m->file)
		return NULL;
	if (m->file->err) {
		*err = m->file->err;
		return NULL;
	}
	return m->file;
}

/* ---- /proc/PID/maps ---- */

struct maps_buf {
	struct mapping *maps;
	size_t n, cap;
	char *paths;
	size_t plen, pcap;
};

static int add_path(struct maps_buf *b, const char *path, size_t n)
{
	char *p;

	if (b->plen + n + 1 > b->pcap) {
		size_t cap = b->pcap ? b->pcap * 2 : 4096;

		while (cap < b->plen + n + 1)
			cap *= 2;
		p = realloc(b->paths, cap);
		if (!p)
			return -ENOMEM;
		b->paths = p;
		b->pcap = cap;
	}
	memcpy(b->paths + b->plen, path, n);
	b->paths[b->plen + n] = '\0';
	b->plen += n + 1;
	return 0;
}

/* One line: "start-end perms pgoff major:minor inode   path". */
static int add_line(struct maps_buf *b, const char *line)
{
	static const char del[] = " (deleted)";
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	struct mapping *m;
	const char *path;
	int pos = 0;
	size_t n;

	if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &start, &end, &pgoff, &maj, &min,
		   &ino, &pos) < 6 || !pos)
		return 0;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;

		m = realloc(b->maps, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		b->maps = m;
		b->cap = cap;
	}
	m = &b->maps[b->n];
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->dev = makedev(maj, min);
	path = line + pos;
	n = strcspn(path, "\n");
	/* Files only: "[heap]", "[vdso]" and anonymous memory have no symbols. */
	if (ino && path[0] == '/') {
		m->ino = (ino_t)ino;
		if (n >= sizeof(del) - 1 && !memcmp(path + n - (sizeof(del) - 1), del, sizeof(del) - 1)) {
			m->deleted = true;
			n -= sizeof(del) - 1;
		}
		m->path = b->plen;
		if (add_path(b, path, n))
			return -ENOMEM;
	}
	b->n++;
	return 0;
}

/* (Re)read the mappings of pc->pid; -ESRCH when the process is gone. */
static int maps_read(struct symbolizer *s, struct pid_cache *pc)
{
	struct maps_buf b = { 0 };
	char path[64], *line = NULL;
	size_t cap = 0;
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pc->pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	/* Room for the path of a mapping without one, so offsets stay valid. */
	ret = add_path(&b, "", 0);
	while (!ret && getline(&line, &cap, f) > 0)
		ret = add_line(&b, line);
	free(line);
	fclose(f);
	if (ret) {
		free(b.maps);
		free(b.paths);
		return ret;
	}
	free(pc->maps);
	free(pc->paths);
	pc->maps = b.maps;
	pc->nmaps = b.n;
	pc->paths = b.paths;
	s->st.maps_reads++;
	return 0;
}

/* The mapping holding @addr (binary search: maps are sorted by start). */
static struct mapping *map_find(struct pid_cache *pc, uint64_t addr)
{
	size_t lo = 0, hi = pc->nmaps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < pc->maps[lo - 1].end ? &pc->maps[lo - 1] : NULL;
}

/* ---- per-pid address cache ---- */

static size_t addr_hash(uint64_t addr, size_t cap)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 29) & (cap - 1);
}

static struct addr_slot *slot_find(const struct pid_cache *pc, uint64_t addr)
{
	size_t i;

	if (!pc->cap)
		return NULL;
	for (i = addr_hash(addr, pc->cap); pc->slots[i].name; i = (i + 1) & (pc->cap - 1))
		if (pc->slots[i].addr == addr)
			return &pc->slots[i];
	return NULL;
}

static void slots_free(struct pid_cache *pc)
{
	size_t i;

	for (i = 0; i < pc->cap; i++)
		free(pc->slots[i].name);
	free(pc->slots);
	pc->slots = NULL;
	pc->cap = pc->used = 0;
}

/* Keep the load at most 1/2, so probes stay short. */
static int slots_grow(struct pid_cache *pc)
{
	size_t i, j, cap = pc->cap ? pc->cap * 2 : 64;
	struct addr_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < pc->cap; i++) {
		if (!pc->slots[i].name)
			continue;
		for (j = addr_hash(pc->slots[i].addr, cap); slots[j].name; j = (j + 1) & (cap - 1))
			;
		slots[j] = pc->slots[i];
	}
	free(pc->slots);
	pc->slots = slots;
	pc->cap = cap;
	return 0;
}

/* Takes @name (malloc'd) whatever happens. */
static void slot_insert(struct pid_cache *pc, uint64_t addr, char *name, int rc)
{
	size_t i;

	if (pc->used >= ADDR_CACHE_MAX)
		slots_free(pc);
	if ((pc->used + 1) * 2 > pc->cap && slots_grow(pc)) {
		free(name);
		return;
	}
	for (i = addr_hash(addr, pc->cap); pc->slots[i].name; i = (i + 1) & (pc->cap - 1))
		;
	pc->slots[i].addr = addr;
	pc->slots[i].name = name;
	pc->slots[i].len = strlen(name);
	pc->slots[i].rc = rc;
	pc->used++;
}

/* ---- pids ---- */

static void pid_free(struct pid_cache *pc)
{
	slots_free(pc);
	free(pc->maps);
	free(pc->paths);
	free(pc);
}

/* The cache of @pid, moved to the front (lookups come in runs per pid). */
static struct pid_cache *pid_get(struct symbolizer *s, pid_t pid)
{
	struct pid_cache **pp, *pc;

	for (pp = &s->pids; (pc = *pp); pp = &pc->next) {
		if (pc->pid != pid)
			continue;
		*pp = pc->next;
		break;
	}
	if (!pc) {
		pc = calloc(1, sizeof(*pc));
		if (!pc)
			return NULL;
		pc->pid = pid;
	}
	pc->next = s->pids;
	s->pids = pc;
	return pc;
}

void symbolizer_forget_pid(struct symbolizer *s, pid_t pid)
{
	struct pid_cache **pp, *pc;

	for (pp = &s->pids; (pc = *pp); pp = &pc->next) {
		if (pc->pid == pid) {
			*pp = pc->next;
			pid_free(pc);
			return;
		}
	}
}

/* ---- lookup ---- */

/*
 * Resolve @addr from scratch: *name gets the malloc'd demangled name on
 * success; *cache says whether the answer holds until the maps change (an
 * address outside every mapping may be a library mapped a moment later).
 */
static int resolve(struct symbolizer *s, struct pid_cache *pc, uint64_t addr, char **name,
		   bool *cache)
{
	const struct sym_file *f;
	const struct sym *sym;
	struct mapping *m;
	uint64_t vaddr;
	int ret = 0;

	*cache = false;
	m = map_find(pc, addr);
	if (!m) {
		ret = maps_read(s, pc);
		if (ret)
			return ret;
		m = map_find(pc, addr);
		if (!m)
			return -ENOENT;
	}
	*cache = true;
	if (!m->ino)
		return -ENOENT;
	f = file_get(s, pc, m, &ret);
	if (!f)
		return ret;
	if (file_vaddr(f, addr - m->start + m->pgoff, &vaddr))
		return -ENOENT;
	sym = sym_find(f, vaddr);
	if (!sym)
		return -ENOENT;
	*name = demangle_alloc(f->strs + sym->name);
	if (!*name) {
		*cache = false;
		return -ENOMEM;
	}
	return 0;
}

int symbolizer_lookup(struct symbolizer *s, pid_t pid, uint64_t addr, char *buf, size_t len)
{
	struct pid_cache *pc;
	struct addr_slot *sl;
	char *name = NULL, hex[24];
	bool cache = false;
	int ret = -ENOMEM;

	s->st.lookups++;
	pc = pid_get(s, pid);
	if (pc) {
		sl = slot_find(pc, addr);
		if (sl) {
			/* The hot path: no allocation, no system call. */
			s->st.hits++;
			s->st.unknown += sl->rc != 0;
			copy_out(buf, len, sl->name, sl->len);
			return sl->rc;
		}
		ret = resolve(s, pc, addr, &name, &cache);
	}
	if (ret) {
		s->st.unknown++;
		snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
		copy_out(buf, len, hex, strlen(hex));
		if (cache)
			name = strdup(hex); /* a definite miss, remembered */
	} else {
		copy_out(buf, len, name, strlen(name));
	}
	if (name)
		slot_insert(pc, addr, name, ret); /* cache is true here */
	/* A process that is gone leaves no empty cache behind. */
	if (ret == -ESRCH && !pc->nmaps && !pc->used)
		symbolizer_forget_pid(s, pid);
	return ret;
}

/* ---- the rest ---- */

struct symbolizer *symbolizer_new(void)
{
	return calloc(1, sizeof(struct symbolizer));
}

void symbolizer_free(struct symbolizer *s)
{
	struct pid_cache *pc;
	struct sym_file *f;

	if (!s)
		return;
	while ((pc = s->pids)) {
		s->pids = pc->next;
		pid_free(pc);
	}
	while ((f = s->files)) {
		s->files = f->next;
		file_free(f);
	}
	free(s);
}

void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	*out = s->st;
}
