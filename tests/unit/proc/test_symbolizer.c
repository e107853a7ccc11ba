// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Address -> symbol name (user/proc/elf/symbolizer.c), on this very process. */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/elf/demangle.h"
#include "elf_craft.h"
#include "proc/elf/elf_symbols.h"
#include "util/file/file_open.h"
#include "proc/elf/sym_table.h"
#include "proc/elf/symbolizer.h"
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

/* elf_find_symbols() on the file at @path. */
static int find_in_file(const char *path, const char *const *names, size_t n,
			struct elf_sym_info *info)
{
	struct elf_file *ef;
	struct stat st;
	int fd, ret;

	fd = open_regular(path, true, FILE_OPEN_MAX_SIZE, &st);
	if (fd < 0)
		return fd;
	ret = elf_file_open_fd(fd, (uint64_t)st.st_size, &ef);
	if (!ret) {
		ret = elf_find_symbols(ef, names, n, info);
		elf_file_close(ef);
	}
	close(fd);
	return ret;
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
	CHECK_EQ(find_in_file(path, names, 1, &info), 1);
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

static const struct craft_sym syn_syms[] = {
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

static void test_synthetic_elf(void)
{
	struct symbolizer *s = symbolizer_new();
	struct symbolizer_stats st;
	struct craft c = { 0 };
	char path[4096] = "";
	pid_t me = getpid();
	uint8_t *map = MAP_FAILED;
	uint64_t b;
	char buf[64];

	CHECK(s != NULL);
	if (!s || craft_build(&c, syn_syms, NSYN)) {
		CHECK(0);
		goto out;
	}
	map = craft_map(&c, path, sizeof(path));
	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		goto out;
	b = ADDR(map); /* .text's first byte: file offset pg, vaddr CRAFT_VADDR */
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
	EXPECT(s, me, b + CRAFT_TEXT, NULL);      /* mapped, in no section */
	symbolizer_stats(s, &st);
	CHECK_EQ(st.file_loads, 1);

	/* Another file, no ELF: a clean -ENOEXEC, loaded once.  It often gets
	 * the inode just freed (tmpfs reuses them): the cache must notice. */
	munmap(map, c.pg);
	unlink(path);
	memset(c.img, 'x', c.cap);
	c.len = 2 * c.pg;
	map = craft_map(&c, path, sizeof(path));
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
		munmap(map, c.pg);
	if (path[0])
		unlink(path);
	craft_free(&c);
	symbolizer_free(s);
}

/* Map @c's image and look up .text + @off: the name, or NULL for a miss.
 * Whatever the image says, the lookup must neither crash nor go out of
 * bounds (the ASan build of this test checks the second). */
static void expect_crafted(const struct craft *c, uint64_t off, const char *want, int line)
{
	struct symbolizer *s = symbolizer_new();
	char path[4096] = "";
	void *map = craft_map(c, path, sizeof(path));

	CHECK(s && map != MAP_FAILED);
	if (s && map != MAP_FAILED)
		expect(s, getpid(), ADDR(map) + off, want, line);
	if (map != MAP_FAILED)
		munmap(map, c->pg);
	if (path[0])
		unlink(path);
	symbolizer_free(s);
}
#define EXPECT_CRAFTED(c, off, want) expect_crafted(c, off, want, __LINE__)

/*
 * The heap overflow of issue 7: a second symbol table whose header claims
 * 2^61 - 10 entries of one byte.  Its data is not in the file, but the old
 * code counted sh_size / sh_entsize for every table before allocating, so
 * (2^61 - 10 + 11) * sizeof(struct sym) wrapped to one entry and the real
 * table's symbols were written past it.
 */
static void test_hostile_symtab_size(void)
{
	struct craft c;

	if (craft_build(&c, syn_syms, NSYN)) {
		CHECK(0);
		return;
	}
	CHECK(craft_add_section(&c, (Elf64_Shdr){ .sh_type = SHT_SYMTAB,
		.sh_offset = c.sh[CRAFT_SYMTAB].sh_offset,
		.sh_size = (1ull << 61) - c.nsyms + 1, .sh_link = CRAFT_STRTAB,
		.sh_entsize = 1 }) > 0);
	EXPECT_CRAFTED(&c, 0x100, "fv_sized");
	craft_free(&c);
}

/* Map a crafted image; its .text address (MAP_FAILED on failure). */
static uint8_t *map_crafted(const struct craft_sym *syms, size_t n, char *path, size_t plen,
			    size_t *pg)
{
	struct craft c;
	void *map;

	if (craft_build(&c, syms, n))
		return MAP_FAILED;
	map = craft_map(&c, path, plen);
	*pg = c.pg;
	craft_free(&c);
	return map;
}

/* The file cache is bounded: least recently used files go first, counted;
 * a mapping that pointed to an evicted file loads it again (the ASan build
 * would catch a use of the freed entry). */
static void test_file_cache_bound(void)
{
	static const struct craft_sym a[] = { { "fv_in_a", STT_FUNC, STB_GLOBAL, 0x100, 0x200, 1 } };
	static const struct craft_sym b[] = { { "fv_in_b", STT_FUNC, STB_GLOBAL, 0x100, 0x200, 1 } };
	struct symbolizer *s = symbolizer_new();
	char pa[4096] = "", pb[4096] = "";
	uint8_t *ma, *mb;
	struct symbolizer_stats st;
	pid_t me = getpid();
	size_t pg = 4096;

	ma = map_crafted(a, 1, pa, sizeof(pa), &pg);
	mb = map_crafted(b, 1, pb, sizeof(pb), &pg);
	CHECK(s && ma != MAP_FAILED && mb != MAP_FAILED);
	if (!s || ma == MAP_FAILED || mb == MAP_FAILED)
		goto out;
	symbolizer_set_limits(s, 1, 0);
	EXPECT(s, me, ADDR(ma) + 0x100, "fv_in_a");
	EXPECT(s, me, ADDR(mb) + 0x100, "fv_in_b");  /* evicts a */
	EXPECT(s, me, ADDR(ma) + 0x104, "fv_in_a");  /* loads a again, evicts b */
	EXPECT(s, me, ADDR(mb) + 0x100, "fv_in_b");  /* the address cache */
	symbolizer_stats(s, &st);
	CHECK_EQ(st.file_loads, 3);
	CHECK_EQ(st.files_evicted, 2);
	/* A byte bound: each load evicts all others, never itself. */
	symbolizer_set_limits(s, 100, 1);
	EXPECT(s, me, ADDR(mb) + 0x108, "fv_in_b");
	EXPECT(s, me, ADDR(mb) + 0x10c, "fv_in_b");
	symbolizer_stats(s, &st);
	CHECK_EQ(st.file_loads, 4);
	CHECK_EQ(st.files_evicted, 3);
out:
	if (ma != MAP_FAILED)
		munmap(ma, pg);
	if (mb != MAP_FAILED)
		munmap(mb, pg);
	if (pa[0])
		unlink(pa);
	if (pb[0])
		unlink(pb);
	symbolizer_free(s);
}

/* Demangling is bounded in and out, and counted when a bound is hit. */
static void test_demangle_caps(void)
{
	size_t n = DEMANGLE_IN_MAX + 100, i;
	char *in = malloc(n + 1), *out = malloc(2 * DEMANGLE_OUT_MAX);
	uint64_t before = demangle_capped_total();

	CHECK(in && out);
	if (!in || !out)
		goto out;
	/* Too long to demangle: as it is, cut to the output cap. */
	memcpy(in, "_Z", 2);
	memset(in + 2, '1', n - 2);
	in[n] = '\0';
	CHECK_EQ(symbolizer_demangle(in, out, 2 * DEMANGLE_OUT_MAX), 1);
	CHECK_EQ(strlen(out), DEMANGLE_OUT_MAX);
	CHECK(!strncmp(out, in, DEMANGLE_OUT_MAX));
	/* Short, but it demangles to more than the output cap: f(T, T, ...)
	 * with a 500-character T repeated through substitutions. */
	i = (size_t)sprintf(in, "_Z1fN4fvns500");
	memset(in + i, 'x', 500);
	i += 500;
	i += (size_t)sprintf(in + i, "E");
	while (i + 3 < 600)
		i += (size_t)sprintf(in + i, "S0_");
	CHECK_EQ(symbolizer_demangle(in, out, 2 * DEMANGLE_OUT_MAX), 1);
	CHECK_EQ(strlen(out), DEMANGLE_OUT_MAX);
	CHECK(!strncmp(out, "f(fvns::xxx", 11));
	CHECK_EQ(demangle_capped_total(), before + 2);
	/* A short buffer is the caller's choice, not a cap. */
	CHECK_EQ(symbolizer_demangle("_Z5scalePffi", out, 4), 0);
	CHECK_STR(out, "sca");
	CHECK_EQ(demangle_capped_total(), before + 2);
out:
	free(in);
	free(out);
}

/* A symbol name longer than the table keeps: cut, counted, still found. */
static void test_long_symbol_name(void)
{
	struct craft_sym sym = { NULL, STT_FUNC, STB_GLOBAL, 0x100, 0x40, 1 };
	struct symbolizer *s = symbolizer_new();
	char *name = malloc(SYM_TABLE_NAME_MAX + 50), *buf = malloc(2 * SYM_TABLE_NAME_MAX);
	struct symbolizer_stats st;
	char path[4096] = "";
	uint8_t *map = MAP_FAILED;
	size_t pg = 4096;

	CHECK(s && name && buf);
	if (!s || !name || !buf)
		goto out;
	memset(name, 'n', SYM_TABLE_NAME_MAX + 49);
	name[SYM_TABLE_NAME_MAX + 49] = '\0';
	sym.name = name;
	map = map_crafted(&sym, 1, path, sizeof(path), &pg);
	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		goto out;
	CHECK_EQ(symbolizer_lookup(s, getpid(), ADDR(map) + 0x110, buf, 2 * SYM_TABLE_NAME_MAX), 0);
	CHECK_EQ(strlen(buf), SYM_TABLE_NAME_MAX);
	symbolizer_stats(s, &st);
	CHECK_EQ(st.syms_capped, 1);
out:
	if (map != MAP_FAILED)
		munmap(map, pg);
	if (path[0])
		unlink(path);
	free(name);
	free(buf);
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
	RUN(test_hostile_symtab_size);
	RUN(test_file_cache_bound);
	RUN(test_demangle_caps);
	RUN(test_long_symbol_name);
	UNIT_DONE();
}
