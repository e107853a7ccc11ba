// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The ELF reader, as the probe scanner, the marker lookup and the
 * symbolizer use it, on any bytes: from a file descriptor (the production
 * path: libelf's ELF_C_READ) and from memory.  Every name handed out must
 * be terminated where its length says; every lookup must stay in bounds.
 */
#include "fuzz.h" /* first: it asks for _GNU_SOURCE */

#include <elf.h>
#include <string.h>

#include "proc/elf/demangle.h"
#include "proc/elf/elf_file.h"
#include "proc/elf/elf_symbols.h"
#include "proc/elf/sym_table.h"

static int on_symbol(const struct elf_symbol *sym, void *arg)
{
	struct elf_file *ef = arg;
	uint64_t v;

	if (strlen(sym->name) != sym->name_len || !sym->name_len)
		abort();
	elf_file_section_end(ef, sym->shndx, &v);
	elf_file_vaddr_to_off(ef, sym->value, &v);
	elf_file_probe_off(ef, sym, &v);
	return 0;
}

static int on_function(const char *name, uint64_t off, uint64_t size, void *ctx)
{
	(void)off;
	(void)size;
	(void)ctx;
	return !*name; /* never: names are not empty */
}

/* The symbolizer's table of the file, looked up at every segment's start,
 * middle and last byte, and the names found demangled. */
static void sym_table(struct elf_file *ef)
{
	const struct elf_load *loads;
	struct sym_table t = { 0 };
	char buf[DEMANGLE_OUT_MAX + 1];
	const char *name;
	size_t i, n;
	int k;

	if (sym_table_load(&t, ef))
		return;
	n = elf_file_loads(ef, &loads);
	for (i = 0; i < n; i++) {
		for (k = 0; k < 3; k++) {
			uint64_t off = loads[i].off + (k == 0 ? 0 : k == 1 ? loads[i].filesz / 2 :
						       loads[i].filesz - 1);

			name = sym_table_find(&t, off);
			if (name)
				demangle(name, buf, sizeof(buf));
		}
	}
	sym_table_free(&t);
}

static void exercise(struct elf_file *ef)
{
	static const char *const names[] = { "fvbpf_semaphore", "cudaLaunchKernel", "main" };
	/* a shared start: string tables searched for it (strtab_holds) */
	static const char *const markers[] = { "fvbpf_semaphore", "fvbpf_control" };
	struct elf_sym_info info[3];
	struct elf_file_stats st;

	elf_file_symbols(ef, on_symbol, ef);
	elf_find_symbols(ef, names, 3, info);
	elf_find_symbols(ef, markers, 2, info);
	elf_for_each_function(ef, NULL, on_function, NULL);
	sym_table(ef);
	elf_file_stats(ef, &st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file *ef;
	uint8_t *copy;
	int fd = fuzz_memfd(data, size);

	if (!elf_file_open_fd(fd, size, &ef)) {
		exercise(ef);
		elf_file_close(ef);
	}
	/* libelf wants a writable image it may keep pointers into. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (!elf_file_open_mem(copy, size, &ef)) {
		exercise(ef);
		elf_file_close(ef);
	}
	free(copy);
	return 0;
}
