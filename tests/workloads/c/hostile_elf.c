// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A target that maps an ELF file it crafted itself and calls that file's
 * own __cudaGetKernel, as issue 7 reproduced the heap overflow: fvbpf
 * probes any mapped ELF that defines the function, and symbolises the
 * host stub it is given through the symbol table of the file holding it.
 * The file's section headers add a second symbol table whose header
 * claims 2^61 - N one-byte entries (its bytes are not in the file): a
 * reader that multiplies header counts wraps and writes the real table's
 * symbols past its buffer.
 *
 * The crafted __cudaGetKernel is x86-64 code: *handle = stub; return 0.
 *
 * Options: --dir DIR (where the file goes, default $TMPDIR or /tmp),
 * --honest (no lying table: for tests of how the file is reached).
 * Output, one line each:
 *   pid=<pid>
 *   crafted=<path> stubs=<N>
 *   (waits for SIGUSR1, 30 s at most)
 *   calls=<N> handles_ok=<0|1>
 * then one training_train_one_step region, and idles until SIGTERM/SIGINT.
 *
 * --nonexec (issue 17): function symbols whose address is not code, one per
 * probe family, for a test that reads their bytes while fvbpf is attached
 * (an int3 there would be written into the process's read-only data).  The
 * crafted file (honest) gains a read-only PT_LOAD over its header page
 * holding a function-typed cudaLaunchKernel; --torch LIB dlopens a
 * libtorch_cpu.so whose at::_ops::mul::call lies in .rodata; the markers
 * are whatever libfvbpf.so the loader found (a test puts a copy whose
 * fvbpf_probe_region_begin lies in .rodata first on LD_LIBRARY_PATH).
 * Output, after pid= and crafted=, then idles (no marker is called):
 *   markers=<path of the libfvbpf.so loaded>
 *   nonexec <cuda|torch|marker> 0x<address in this process>
 *   ready
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../unit/elf_craft.h"
#include "fvbpf/fvbpf.h"
#include "workload.h"

#define NSTUBS 300
#define STUB_OFF 0x10   /* stubs after __cudaGetKernel's code */
#define RO_VADDR 0x200000ull  /* --nonexec: the read-only segment, apart from .text */
#define TORCH_RO_OP "_ZN2at4_ops3mul4callERKNS_6TensorES4_"

/* mov %rsi,(%rdi); xor %eax,%eax; ret */
static const uint8_t get_kernel_code[] = { 0x48, 0x89, 0x37, 0x31, 0xc0, 0xc3 };
/* What the read-only cudaLaunchKernel "holds": mov %rsp,%rbp; ret */
static const uint8_t ro_code[] = { 0x48, 0x89, 0xe5, 0xc3 };

static struct craft_sym syms[NSTUBS + 2];
static char names[NSTUBS][16];

static int honest, nonexec;
static uint8_t *ro_page;

/* The image: __cudaGetKernel, NSTUBS stub symbols, the lying table. */
static int build(struct craft *c)
{
	int i;

	syms[0] = (struct craft_sym){ "__cudaGetKernel", STT_FUNC, STB_GLOBAL, 0, STUB_OFF,
				      CRAFT_TEXT_SEC };
	for (i = 0; i < NSTUBS; i++) {
		snprintf(names[i], sizeof(names[i]), "fv_stub_%d", i);
		syms[i + 1] = (struct craft_sym){ names[i], STT_FUNC, STB_GLOBAL,
						  STUB_OFF + 4 * (uint64_t)i, 4, CRAFT_TEXT_SEC };
	}
	syms[NSTUBS + 1] = (struct craft_sym){ "cudaLaunchKernel", STT_FUNC, STB_GLOBAL, 0,
					       sizeof(ro_code), CRAFT_TEXT_SEC };
	if (craft_build(c, syms, NSTUBS + 1 + (nonexec ? 1 : 0)))
		return -1;
	memcpy(c->img + c->pg, get_kernel_code, sizeof(get_kernel_code));
	if (nonexec) {
		/* typed a function, placed in a segment without PF_X */
		if (craft_add_load(c, PF_R, 0, RO_VADDR, c->pg) < 0)
			return -1;
		c->sym[NSTUBS + 2].st_value = RO_VADDR + CRAFT_FREE_OFF;
		memcpy(c->img + CRAFT_FREE_OFF, ro_code, sizeof(ro_code));
	}
	if (!honest && craft_add_section(c, (Elf64_Shdr){ .sh_type = SHT_SYMTAB,
			      .sh_offset = c->sh[CRAFT_SYMTAB].sh_offset,
			      .sh_size = (1ull << 61) - c->nsyms + 1,
			      .sh_link = CRAFT_STRTAB, .sh_entsize = 1 }) < 0)
		return -1;
	return 0;
}

/* Write the image under @dir and map its .text executable. */
static uint8_t *map_crafted(const struct craft *c, const char *dir, char *path, size_t plen)
{
	void *map;
	int fd;

	snprintf(path, plen, "%s/fvbpf-hostile-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0 || write(fd, c->img, c->len) != (ssize_t)c->len)
		return NULL;
	map = mmap(NULL, c->pg, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, (off_t)c->pg);
	/* --nonexec: the header page too, read-only, as a loader maps .rodata */
	if (map != MAP_FAILED && nonexec) {
		ro_page = mmap(NULL, c->pg, PROT_READ, MAP_PRIVATE, fd, 0);
		if (ro_page == MAP_FAILED)
			map = MAP_FAILED;
	}
	close(fd);
	return map == MAP_FAILED ? NULL : map;
}

/* --nonexec: where each family's non-code function is, then idle. */
static int show_nonexec(const char *torch)
{
	void *h, *op, *begin;
	Dl_info di;

	if (!dladdr((void *)(uintptr_t)fvbpf_region_begin, &di) || !di.dli_fname)
		return 1;
	printf("markers=%s\n", di.dli_fname);
	printf("nonexec cuda %p\n", (void *)(ro_page + CRAFT_FREE_OFF));
	h = torch ? dlopen(torch, RTLD_NOW) : NULL;
	op = h ? dlsym(h, TORCH_RO_OP) : NULL;
	if (op)
		printf("nonexec torch %p\n", op);
	begin = dlsym(RTLD_DEFAULT, "fvbpf_probe_region_begin");
	if (begin)
		printf("nonexec marker %p\n", begin);
	printf("ready\n");
	while (!wl_stop)
		wl_sleep_us(100000);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "dir", required_argument, NULL, 'd' },
					      { "honest", no_argument, &honest, 1 },
					      { "nonexec", no_argument, &nonexec, 1 },
					      { "torch", required_argument, NULL, 't' }, { 0 } };
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", *torch = NULL;
	int (*get_kernel)(void **handle, const void *stub);
	char path[4096];
	struct craft c;
	uint8_t *text;
	void *handle;
	int i, ok = 1, opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'd')
			dir = optarg;
		else if (opt == 't')
			torch = optarg;
		else if (opt)
			return 2;
	}
	honest |= nonexec;
	wl_start();
	if (build(&c) || !(text = map_crafted(&c, dir, path, sizeof(path)))) {
		printf("cannot craft: %s\n", strerror(errno));
		return 1;
	}
	printf("crafted=%s stubs=%d\n", path, NSTUBS);
	if (nonexec) {
		ok = show_nonexec(torch);
		unlink(path);
		craft_free(&c);
		return ok;
	}
	if (wl_wait_go())
		return 2;
	get_kernel = (int (*)(void **, const void *))(uintptr_t)text;
	for (i = 0; i < 8; i++) {
		ok &= get_kernel(&handle, text + STUB_OFF + 4 * i) == 0 &&
		      handle == text + STUB_OFF + 4 * i;
	}
	printf("calls=%d handles_ok=%d\n", i, ok);
	fvbpf_region_begin("training_train_one_step");
	wl_sleep_us(20000);
	fvbpf_region_end("training_train_one_step");
	while (!wl_stop)
		wl_sleep_us(100000);
	munmap(text, c.pg);
	unlink(path);
	craft_free(&c);
	return 0;
}
