/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The one ELF reader.  Every ELF file fvbpf reads belongs to a traced
 * process, which chose its bytes: nothing in it is trusted.  Sizes come from
 * the data actually read (never from a header's count times a header's
 * entry size), every index and offset is checked against what it points
 * into, every multiplication and addition of file values is checked, and
 * what a file can make fvbpf allocate is capped (and counted when it is).
 *
 * Only what fvbpf needs: 64-bit ELF in the host's byte order (what a
 * process on this machine maps as code), program headers, .dynsym and
 * .symtab with their string tables, and the address ranges of sections.
 */
#ifndef FVBPF_ELF_FILE_H
#define FVBPF_ELF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Caps on what one file can make us read or walk. */
#define ELF_FILE_MAX_PHDRS 1024u          /* real files have about 10 */
#define ELF_FILE_MAX_SECTIONS 65536u      /* libtorch_cuda.so has about 40 */
#define ELF_FILE_MAX_SYMS (1u << 23)      /* both tables together */
#define ELF_FILE_MAX_STRTAB (1ull << 30)  /* bytes of one string table */

struct elf_file;

/* A PT_LOAD segment; the sums below do not overflow. */
struct elf_load {
	uint64_t off, filesz;   /* in the file */
	uint64_t vaddr, memsz;  /* in memory */
	uint32_t flags;         /* PF_X, PF_W, PF_R */
};

struct elf_symbol {
	const char *name;       /* NUL-terminated inside its string table, not empty */
	size_t name_len;
	uint64_t value, size;
	uint16_t shndx;
	unsigned char type, bind;  /* STT_*, STB_* */
	bool dynamic;           /* from .dynsym */
};

/* What a file made us skip or stop short of. */
struct elf_file_stats {
	uint64_t tables_skipped;  /* symbol tables malformed or over the caps */
	uint64_t bad_names;       /* st_name outside its table, or not terminated */
	uint64_t syms_capped;     /* walks stopped at ELF_FILE_MAX_SYMS */
	uint64_t not_code;        /* probe sites refused by elf_file_probe_off() */
	uint64_t tables_unnamed;  /* tables passed over: no name with the part asked */
};

/*
 * Read the ELF file open at @fd (kept open by the caller until
 * elf_file_close(); sections are read with pread, so a file truncated
 * meanwhile gives errors, not SIGBUS).  @size: the file's size.
 * Returns 0 with *@out, -ENOEXEC (not an ELF we read), or another -errno.
 */
int elf_file_open_fd(int fd, uint64_t size, struct elf_file **out);
/* The same over @len bytes at @buf, which must outlive the elf_file. */
int elf_file_open_mem(const void *buf, size_t len, struct elf_file **out);
void elf_file_close(struct elf_file *ef);

/* The PT_LOAD segments, in file order. */
size_t elf_file_loads(const struct elf_file *ef, const struct elf_load **loads);
/* Virtual address -> file offset (within p_memsz, as uprobes and the
 * mapping of .bss-adjacent variables want): 0 or -ENOENT. */
int elf_file_vaddr_to_off(const struct elf_file *ef, uint64_t vaddr, uint64_t *off);
/*
 * The one way a symbol becomes a probe (or call) site, for every family:
 * markers, CUDA/NCCL, torch.  The file offset of @sym's address, only where
 * it is executable code: inside the file bytes of a PT_LOAD with PF_X that
 * no PT_LOAD without it also maps, and so is the site a uprobe goes to past
 * leading 5-byte NOPs (uprobe_site_offset()).  A uprobe is placed by file
 * offset: the kernel writes its int3 into every read-only mapping of that
 * byte, so a function symbol the file put in .rodata would change the
 * process's data.  Returns 0, -ENOENT (in no PT_LOAD) or -ENOEXEC (not
 * code); a refusal is counted (not_code) and said with -v, naming the
 * symbol and the file.
 */
int elf_file_probe_off(struct elf_file *ef, const struct elf_symbol *sym, uint64_t *off);
/* File offset -> virtual address through @n loads (within p_filesz):
 * 0 or -ENOENT.  On copies of elf_file_loads(), once the file is closed. */
int elf_load_off_to_vaddr(const struct elf_load *loads, size_t n, uint64_t off, uint64_t *vaddr);
/* End address of allocated section @shndx: 0 or -ENOENT. */
int elf_file_section_end(const struct elf_file *ef, uint16_t shndx, uint64_t *end);

/*
 * Call @fn for every named symbol of .dynsym, then of .symtab (at most
 * ELF_FILE_MAX_SYMS over both) until it returns non-zero.  Returns 0, or
 * @fn's value that stopped the walk.  A malformed table is skipped and
 * counted, not an error: the other table may still serve.
 */
typedef int (*elf_symbol_fn)(const struct elf_symbol *sym, void *ctx);
int elf_file_symbols(struct elf_file *ef, elf_symbol_fn fn, void *ctx);
/*
 * The same, but a table whose string table does not hold @part's bytes
 * anywhere is passed over (counted in tables_unnamed): no symbol there can
 * have a name containing @part.  For a search of a few names (the
 * markers: "fvbpf_"): libtorch_cpu's .symtab is 546k symbols and 78 MiB of
 * names, which the search then scans once, in chunks, instead of reading
 * and walking it whole.  @part: 1 to 64 bytes, else no table is passed over.
 */
int elf_file_symbols_with(struct elf_file *ef, const char *part, elf_symbol_fn fn, void *ctx);

void elf_file_stats(const struct elf_file *ef, struct elf_file_stats *out);
/* A lower symbol cap than ELF_FILE_MAX_SYMS for @ef's walks (0: the default). */
void elf_file_limit_syms(struct elf_file *ef, size_t max_syms);

#endif /* FVBPF_ELF_FILE_H */
