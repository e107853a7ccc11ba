// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Address -> symbol name (user/symbolizer.c), on this very process. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf_symbols.h"
#include "symbolizer.h"
#include "unit.h"

#define ADDR(fn) ((uint64_t)(uintptr_t)(fn))

/* Targets: distinct bodies, so identical code folding cannot merge them,
 * and noinline so each has an address of its own in .symtab. */
static __attribute__((noinline)) int fv_static_target(int x)
{
	volatile int v = x;

	v = v * 3 + 1;
	return v;
}

static __attribute__((noinline)) int fv_static_other(int x)
{
	volatile int v = x;

	v = v * 7 - 5;
	return v ^ 0x55;
}

/* What nvcc emits for `__global__ void scale(float*, float, int)` and for
 * `template <int N> __global__ void fv::tmpl(int*)`: host functions under
 * their mangled names.  An asm label gives a C function that name. */
void fv_scale_impl(float *p, float f, int n) __asm__("_Z5scalePffi");
void fv_tmpl_impl(int *p) __asm__("_ZN2fv4tmplILi7EEEvPi");

__attribute__((noinline)) void fv_scale_impl(float *p, float f, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] *= f;
}

__attribute__((noinline)) void fv_tmpl_impl(int *p)
{
	*(volatile int *)p = 7;
	*(volatile int *)p += 11;
}

/* An object in .data: its PT_LOAD has p_vaddr != p_offset. */
int fv_data_obj[64] = { 1, 2, 3 };

#if defined(__x86_64__) || defined(__aarch64__)
/* A function without .size (st_size 0), as hand-written assembly has. */
__asm__(".text\n"
	".globl fv_nosize_fn\n"
	".type fv_nosize_fn, %function\n"
	"fv_nosize_fn:\n"
	"\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n"
	"\tret\n");
void fv_nosize_fn(void);
#define HAVE_NOSIZE 1
#endif

static void test_demangle(void)
{
	char buf[128], small[6];

	symbolizer_demangle("_Z5scalePffi", buf, sizeof(buf));
	CHECK_STR(buf, "scale(float*, float, int)");
	symbolizer_demangle("_ZN2fv4tmplILi7EEEvPi", buf, sizeof(buf));
	CHECK_STR(buf, "void fv::tmpl<7>(int*)");
	symbolizer_demangle("main", buf, sizeof(buf));
	CHECK_STR(buf, "main");
	/* Not "_Z": must not be read as a type ("f" would become "float"). */
	symbolizer_demangle("f", buf, sizeof(buf));
	CHECK_STR(buf, "f");
	symbolizer_demangle("_Zxx", buf, sizeof(buf));
	CHECK_STR(buf, "_Zxx");
	symbolizer_demangle("_Z5scalePffi.constprop.0", buf, sizeof(buf));
	CHECK_STR(buf, "scale(float*, float, int) [clone .constprop.0]");
	memset(small, 'X', sizeof(small));
	symbolizer_demangle("_Z5scalePffi", small, sizeof(small));
	CHECK_STR(small, "scale");
	buf[0] = 'Q';
	symbolizer_demangle("_Z5scalePffi", buf, 0); /* no room: untouched */
	CHECK(buf[0] == 'Q');
}

/* Lookup in this process, expecting @want (NULL: a miss printed as hex). */
static void expect(struct symbolizer *s, pid_t pid, uint64_t addr, const char *want, int line)
{
	char buf[256], hex[32];
	int rc = symbolizer_lookup(s, pid, addr, buf, sizeof(buf));

	if (want) {
		if (rc || strcmp(buf, want))
			printf("# line %d: 0x%" PRIx64 " -> %d \"%s\", want \"%s\"\n", line, addr,
			       rc, buf, want);
		CHECK(rc == 0 && !strcmp(buf, want));
	} else {
		snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
		if (rc != -ENOENT || strcmp(buf, hex))
			printf("# line %d: 0x%" PRIx64 " -> %d \"%s\", want -ENOENT\n", line, addr,
			       rc, buf);
		CHECK(rc == -ENOENT && !strcmp(buf, hex));
	}
}
#define EXPECT(s, pid, addr, want) expect(s, pid, addr, want, __LINE__)

static void test_own_functions(void)
{
	struct symbolizer *s = symbolizer_new();
	pid_t me = getpid();

	CHECK(s != NULL);
	if (!s)
		return;
	EXPECT(s, me, ADDR(fv_static_target), "fv_static_target");
	EXPECT(s, me, ADDR(fv_static_target) + 4, "fv_static_target");
	EXPECT(s, me, ADDR(fv_static_other), "fv_static_other");
	EXPECT(s, me, ADDR(fv_static_other) + 1, "fv_static_other");
	EXPECT(s, me, ADDR(fv_data_obj), "fv_data_obj");
	EXPECT(s, me, ADDR(&fv_data_obj[10]), "fv_data_obj");
#ifdef HAVE_NOSIZE
	EXPECT(s, me, ADDR(fv_nosize_fn) + 5, "fv_nosize_fn");
#endif
	symbolizer_free(s);
}

/* Kernel host stubs: mangled names come back demangled. */
static void test_mangled_stubs(void)
{
	struct symbolizer *s = symbolizer_new();
	pid_t me = getpid();

	CHECK(s != NULL);
	if (!s)
		return;
	EXPECT(s, me, ADDR(fv_scale_impl), "scale(float*, float, int)");
	EXPECT(s, me, ADDR(fv_scale_impl) + 3, "scale(float*, float, int)");
	EXPECT(s, me, ADDR(fv_tmpl_impl), "void fv::tmpl<7>(int*)");
	symbolizer_free(s);
}

/* libc's own copies (not a sanitizer's interceptor of the same name):
 * stripped, so the names come from .dynsym. */
static void test_libc(void)
{
	struct symbolizer *s = symbolizer_new();
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *qs = libc ? dlsym(libc, "qsort") : NULL;
	void *gp = libc ? dlsym(libc, "getpid") : NULL;
	pid_t me = getpid();

	CHECK(s && libc && qs && gp);
	if (s && qs && gp) {
		EXPECT(s, me, ADDR(qs), "qsort");
		EXPECT(s, me, ADDR(qs) + 4, "qsort");
		/* getpid is a weak alias of __getpid: the plainer name wins. */
		EXPECT(s, me, ADDR(gp), "getpid");
	}
	if (libc)
		dlclose(libc);
	symbolizer_free(s);
}

static void test_unknown(void)
{
	struct symbolizer *s = symbolizer_new();
	struct symbolizer_stats st;
	pid_t me = getpid();
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *anon = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char buf[8];

	CHECK(s && anon != MAP_FAILED);
	if (!s || anon == MAP_FAILED)
		goto out;
	EXPECT(s, me, 0x10, NULL);
	EXPECT(s, me, 0x10, NULL);
	/* Anonymous memory: a miss, and a cached one. */
	EXPECT(s, me, ADDR(anon) + 8, NULL);
	EXPECT(s, me, ADDR(anon) + 8, NULL);
	symbolizer_stats(s, &st);
	CHECK_EQ(st.lookups, 4);
	CHECK_EQ(st.unknown, 4);
	CHECK_EQ(st.hits, 1);      /* only the anonymous one is remembered */
	/* 0x10 twice (a library may be mapped there since); the anonymous
	 * mapping was in the maps read for 0x10 already. */
	CHECK_EQ(st.maps_reads, 2);
	CHECK_EQ(st.file_loads, 0);
	/* A short buffer still gets a terminated (cut) name. */
	CHECK_EQ(symbolizer_lookup(s, me, ADDR(fv_scale_impl), buf, sizeof(buf)), 0);
	CHECK_STR(buf, "scale(f");
	CHECK_EQ(symbolizer_lookup(s, me, ADDR(fv_scale_impl), buf, sizeof(buf)), 0);
	CHECK_STR(buf, "scale(f");
out:
	if (anon != MAP_FAILED)
		munmap(anon, pg);
	symbolizer_free(s);
}

/* One load per file however many lookups; repeats are cache hits. */
static void test_cache_stats(void)
{
	struct symbolizer *s = symbolizer_new();
	struct symbolizer_stats st;
	pid_t me = getpid();
	int i;

	CHECK(s != NULL);
	if (!s)
		return;
	for (i = 0; i < 3; i++) {
		EXPECT(s, me, ADDR(fv_static_target), "fv_static_target");
		EXPECT(s, me, ADDR(fv_static_other), "fv_static_other");
		EXPECT(s, me, ADDR(fv_tmpl_impl), "void fv::tmpl<7>(int*)");
	}
	symbolizer_stats(s, &st);
	CHECK_EQ(st.lookups, 9);
	CHECK_EQ(st.hits, 6);
	CHECK_EQ(st.file_loads, 1);
	CHECK_EQ(st.maps_reads, 1);
	CHECK_EQ(st.unknown, 0);
	/* Forgetting the pid rereads maps, but the file stays loaded. */
	symbolizer_forget_pid(s, me);
	EXPECT(s, me, ADDR(fv_static_other), "fv_static_other");
	symbolizer_stats(s, &st);
	CHECK_EQ(st.maps_reads, 2);
	CHECK_EQ(st.file_loads, 1);
	CHECK_EQ(st.hits, 6);
	symbolizer_free(s);
}

/* The cost of the hot path, for the report (a TAP comment). */
static void test_cached_cost(void)
{
	struct symbolizer *s = symbolizer_new();
	struct symbolizer_stats st;
	struct timespec a, b;
	pid_t me = getpid();
	int i, n = 1000000, bad = 0;
	char buf[128];
	double ns;

	CHECK(s != NULL);
	if (!s)
		return;
	EXPECT(s, me, ADDR(fv_scale_impl), "scale(float*, float, int)");
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		bad += symbolizer_lookup(s, me, ADDR(fv_scale_impl), buf, sizeof(buf)) != 0;
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n;
	printf("# cached lookup: %.1f ns\n", ns);
	CHECK_EQ(bad, 0);
	CHECK_STR(buf, "scale(float*, float, int)");
	symbolizer_stats(s, &st);
	CHECK_EQ(st.hits, n);
	CHECK_EQ(st.maps_reads, 1);
	CHECK(ns < 5000); /* a /proc read or an ELF load would take far longer */
	symbolizer_free(s);
}

/* Another process: a forked child has our binary at the same addresses. */
static void test_other_process(void)
{
	struct symbolizer *s = symbolizer_new();
	int ready[2], hold[2];
	char c = 0, buf[64];
	pid_t child;

	CHECK(s != NULL);
	if (!s || pipe(ready) || pipe(hold)) {
		CHECK(0);
		symbolizer_free(s);
		return;
	}
	child = fork();
	if (child == 0) {
		close(ready[0]);
		close(hold[1]);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		if (read(hold[0], &c, 1) < 0) /* until killed */
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	CHECK(child > 0);
	if (child > 0 && read(ready[0], &c, 1) == 1) {
		EXPECT(s, child, ADDR(fv_static_target), "fv_static_target");
		EXPECT(s, child, ADDR(fv_tmpl_impl), "void fv::tmpl<7>(int*)");
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		/* Gone: a lookup that needs its maps fails cleanly. */
		CHECK_EQ(symbolizer_lookup(s, child, 0x10, buf, sizeof(buf)), -ESRCH);
		CHECK_STR(buf, "0x10");
		/* After forgetting it, even a once-known address. */
		symbolizer_forget_pid(s, child);
		CHECK_EQ(symbolizer_lookup(s, child, ADDR(fv_static_target), buf, sizeof(buf)),
			 -ESRCH);
		CHECK(!strncmp(buf, "0x", 2));
		/* And no empty cache is left behind for it. */
		CHECK_EQ(symbolizer_lookup(s, child, 0x20, buf, sizeof(buf)), -ESRCH);
	}
	close(ready[0]);
	close(hold[1]);
	symbolizer_free(s);
}

/* Copy of our own binary in a temporary file, for mapping it by hand. */
static int copy_self(char *path, size_t n)
{
	char chunk[65536];
	int in, out, ok = 1;
	ssize_t r;

	snprintf(path, n, "%s/fvbpf-sym-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	out = mkstemp(path);
	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (out < 0 || in < 0) {
		if (out >= 0)
			close(out);
		if (in >= 0)
			close(in);
		return -1;
	}
	while ((r = read(in, chunk, sizeof(chunk))) > 0)
		ok &= write(out, chunk, (size_t)r) == r;
	close(in);
	if (r < 0 || !ok) {
		close(out);
		unlink(path);
		return -1;
	}
	return out;
}

/*
 * A file mapped at a page offset that is not 0 (address - start + pgoff),
 * then deleted: the path is gone, the mapping is reached through
 * /proc/PID/map_files, which needs CAP_SYS_ADMIN; without it the lookup
 * must fail cleanly.
 */
static void test_mapped_deleted(void)
{
	static const char *const names[] = { "fv_static_other" };
	struct symbolizer *s = symbolizer_new(), *s2 = symbolizer_new();
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct elf_sym_info info;
	char path[4096], buf[64], hex[32];
	uint8_t *map = MAP_FAILED;
	uint64_t start, addr;
	int fd, rc;

	fd = copy_self(path, sizeof(path));
	CHECK(s && s2 && fd >= 0);
	if (!s || !s2 || fd < 0)
		goto out;
	CHECK_EQ(elf_find_symbols(path, names, 1, &info), 1);
	if (!info.found || info.file_off < pg)
		goto out;
	start = info.file_off & ~(uint64_t)(pg - 1);
	map = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE, fd, (off_t)start);
	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		goto out;
	addr = ADDR(map) + (info.file_off - start) + 2;
	EXPECT(s, getpid(), addr, "fv_static_other");
	unlink(path);
	path[0] = '\0';
	rc = symbolizer_lookup(s2, getpid(), addr, buf, sizeof(buf));
	if (rc == 0) {
		CHECK_STR(buf, "fv_static_other");
	} else {
		printf("# deleted file through map_files: %s (needs CAP_SYS_ADMIN)\n",
		       strerror(-rc));
		snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
		CHECK_STR(buf, hex);
		CHECK(rc == -EPERM || rc == -EACCES);
	}
out:
	if (map != MAP_FAILED)
		munmap(map, 2 * pg);
	if (fd >= 0)
		close(fd);
	if (path[0] && fd >= 0)
		unlink(path);
	symbolizer_free(s);
	symbolizer_free(s2);
}

/* ---- a synthetic ELF: exact control over segments and symbols ---- */

/* Offsets are relative to the start of .text. */
struct syn_sym {
	const char *name;
	unsigned char type, bind;
	uint64_t off, size;
	uint16_t shndx;
};

static const struct syn_sym syn_syms[] = {
	{ "fv_local", STT_FUNC, STB_LOCAL, 0x200, 0x10, 1 },
	{ "_Z5scalePffi", STT_FUNC, STB_LOCAL, 0x600, 0x20, 1 },
	{ "fv_sized", STT_FUNC, STB_GLOBAL, 0x100, 0x40, 1 },
	{ "__fv_alias", STT_FUNC, STB_GLOBAL, 0x100, 0x40, 1 },
	{ "fv_weak", STT_FUNC, STB_WEAK, 0x200, 0x10, 1 },
	{ "fv_nosize", STT_FUNC, STB_GLOBAL, 0x300, 0, 1 },
	{ "fv_next", STT_OBJECT, STB_GLOBAL, 0x400, 0x20, 1 },
	{ "fv_notype", STT_NOTYPE, STB_GLOBAL, 0x500, 0x10, 1 },
	{ "fv_undef", STT_FUNC, STB_GLOBAL, 0, 0, SHN_UNDEF },
	{ "fv_last", STT_FUNC, STB_GLOBAL, 0x700, 0, 1 },
};
#define NSYN (sizeof(syn_syms) / sizeof(syn_syms[0]))
#define SYN_VADDR 0x100000ull /* .text's address: not its file offset */
#define SYN_TEXT 0x800        /* .text's size: the segment (a page) is larger */

/*
 * One PT_LOAD (file offset one page, p_vaddr SYN_VADDR) holding .text, then
 * .symtab, .strtab, .shstrtab and the section headers.  Returns the size.
 */
static size_t syn_build(uint8_t *img, size_t cap, size_t pg)
{
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));
	Elf64_Sym *sym;
	Elf64_Shdr *sh;
	size_t symoff = 2 * pg, stroff, shstroff, shoff, strlen_ = 1, i;

	memset(img, 0, cap);
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
	ph->p_offset = pg;
	ph->p_vaddr = ph->p_paddr = SYN_VADDR;
	ph->p_filesz = ph->p_memsz = pg;
	ph->p_align = pg;

	sym = (Elf64_Sym *)(img + symoff);
	stroff = symoff + (NSYN + 1) * sizeof(*sym);
	for (i = 0; i < NSYN; i++) {
		Elf64_Sym *o = &sym[i + 1];

		o->st_name = (Elf64_Word)strlen_;
		o->st_info = ELF64_ST_INFO(syn_syms[i].bind, syn_syms[i].type);
		o->st_shndx = syn_syms[i].shndx;
		o->st_value = syn_syms[i].shndx ? SYN_VADDR + syn_syms[i].off : 0;
		o->st_size = syn_syms[i].size;
		strcpy((char *)img + stroff + strlen_, syn_syms[i].name);
		strlen_ += strlen(syn_syms[i].name) + 1;
	}
	shstroff = stroff + strlen_;
	memcpy(img + shstroff, shstr, sizeof(shstr));
	shoff = (shstroff + sizeof(shstr) + 7) & ~(size_t)7;
	sh = (Elf64_Shdr *)(img + shoff);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = SYN_VADDR,
			      .sh_offset = pg, .sh_size = SYN_TEXT, .sh_addralign = 16 };
	sh[2] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_SYMTAB, .sh_offset = symoff,
			      .sh_size = (NSYN + 1) * sizeof(*sym), .sh_link = 3, .sh_info = 3,
			      .sh_addralign = 8, .sh_entsize = sizeof(*sym) };
	sh[3] = (Elf64_Shdr){ .sh_name = 15, .sh_type = SHT_STRTAB, .sh_offset = stroff,
			      .sh_size = strlen_, .sh_addralign = 1 };
	sh[4] = (Elf64_Shdr){ .sh_name = 23, .sh_type = SHT_STRTAB, .sh_offset = shstroff,
			      .sh_size = sizeof(shstr), .sh_addralign = 1 };
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 5;
	eh->e_shstrndx = 4;
	return shoff + 5 * sizeof(*sh);
}

/* Write @n bytes to a new temporary file and map the page at file offset
 * @pg (so pgoff is not 0); *path names the file, for unlinking. */
static void *map_temp(const uint8_t *img, size_t n, size_t pg, char *path, size_t plen)
{
	void *map;
	int fd;

	snprintf(path, plen, "%s/fvbpf-syn-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return MAP_FAILED;
	if (write(fd, img, n) != (ssize_t)n) {
		close(fd);
		return MAP_FAILED;
	}
	map = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd, (off_t)pg);
	close(fd);
	return map;
}

static void test_synthetic_elf(void)
{
	struct symbolizer *s = symbolizer_new();
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), cap = 3 * pg + 4096, n;
	uint8_t *img = calloc(1, cap);
	struct symbolizer_stats st;
	char path[4096] = "";
	pid_t me = getpid();
	uint8_t *map = MAP_FAILED;
	uint64_t b;
	char buf[64];

	CHECK(s && img);
	if (!s || !img)
		goto out;
	n = syn_build(img, cap, pg);
	map = map_temp(img, n, pg, path, sizeof(path));
	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		goto out;
	b = ADDR(map); /* .text's first byte: file offset pg, vaddr SYN_VADDR */
	EXPECT(s, me, b + 0x000, NULL);           /* before any symbol */
	EXPECT(s, me, b + 0x100, "fv_sized");     /* not its alias __fv_alias */
	EXPECT(s, me, b + 0x13f, "fv_sized");
	EXPECT(s, me, b + 0x140, NULL);           /* past its size */
	EXPECT(s, me, b + 0x208, "fv_weak");      /* weak over local */
	EXPECT(s, me, b + 0x300, "fv_nosize");    /* size 0: up to the next */
	EXPECT(s, me, b + 0x3ff, "fv_nosize");
	EXPECT(s, me, b + 0x410, "fv_next");      /* an object */
	EXPECT(s, me, b + 0x504, NULL);           /* NOTYPE is no function */
	EXPECT(s, me, b + 0x610, "scale(float*, float, int)");
	EXPECT(s, me, b + 0x7f0, "fv_last");      /* size 0: to section end */
	EXPECT(s, me, b + SYN_TEXT, NULL);        /* mapped, in no section */
	symbolizer_stats(s, &st);
	CHECK_EQ(st.file_loads, 1);

	/* Another file, no ELF: a clean -ENOEXEC, loaded once.  It often gets
	 * the inode just freed (tmpfs reuses them): the cache must notice. */
	munmap(map, pg);
	unlink(path);
	memset(img, 'x', cap);
	map = map_temp(img, 2 * pg, pg, path, sizeof(path));
	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		goto out;
	symbolizer_forget_pid(s, me);
	CHECK_EQ(symbolizer_lookup(s, me, ADDR(map) + 16, buf, sizeof(buf)), -ENOEXEC);
	CHECK_EQ(symbolizer_lookup(s, me, ADDR(map) + 32, buf, sizeof(buf)), -ENOEXEC);
	CHECK(!strncmp(buf, "0x", 2));
	symbolizer_stats(s, &st);
	CHECK_EQ(st.file_loads, 2);
out:
	if (map != MAP_FAILED)
		munmap(map, pg);
	if (path[0])
		unlink(path);
	free(img);
	symbolizer_free(s);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0); /* fork: no buffered output twice */
	RUN(test_demangle);
	RUN(test_own_functions);
	RUN(test_mangled_stubs);
	RUN(test_libc);
	RUN(test_unknown);
	RUN(test_cache_stats);
	RUN(test_cached_cost);
	RUN(test_other_process);
	RUN(test_mapped_deleted);
	RUN(test_synthetic_elf);
	UNIT_DONE();
}
