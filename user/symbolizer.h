/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Addresses in a traced process -> function names, without CUPTI: the
 * host-stub pointer a CUDA program gives cudaLaunchKernel is the address of
 * the host-side function nvcc emitted for the kernel, so the ELF symbol
 * table of the file mapped there names the kernel (mangled), and the C++
 * demangler makes it readable.
 *
 * Not thread-safe: one symbolizer per thread, or a lock around it.
 */
#ifndef FVBPF_SYMBOLIZER_H
#define FVBPF_SYMBOLIZER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symbolizer;                       /* caches per ELF file (dev+inode) */

struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);

/*
 * Name of the function (or object) containing @addr in process @pid,
 * demangled into @buf (truncated, always NUL-terminated when @len > 0).
 * Finds the mapping in /proc/PID/maps, opens the file through
 * /proc/PID/root/<path> (or /proc/PID/map_files/<range> when the path is
 * deleted, replaced or unreachable), turns the address into an ELF virtual
 * address through the PT_LOAD holding its file offset, and looks it up in
 * .symtab and .dynsym together (FUNC/OBJECT symbols; a symbol of size 0
 * covers up to the next symbol or the end of its section).
 * Returns 0, -ENOENT (no symbol there), -ESRCH (no such process), or another
 * -errno; on any failure @buf gets "0x<hex addr>".
 * Results are cached per (pid, addr): a repeated lookup reads no file and
 * allocates nothing.
 */
int symbolizer_lookup(struct symbolizer *s, pid_t pid, uint64_t addr, char *buf, size_t len);

/* Demangle a C++ (Itanium) name; a name that is not mangled is copied as is. */
void symbolizer_demangle(const char *name, char *buf, size_t len);

/* Counters for the report. */
struct symbolizer_stats {
	uint64_t lookups;    /* symbolizer_lookup() calls */
	uint64_t hits;       /* answered from the per-pid address cache */
	uint64_t file_loads; /* ELF symbol tables read (once per file) */
	uint64_t maps_reads; /* /proc/PID/maps parsed */
	uint64_t unknown;    /* lookups that returned an error */
};
void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *out);

/* Forget mappings and cached addresses of @pid (call when its maps change or
 * it exits, before the pid can be reused); file caches stay. */
void symbolizer_forget_pid(struct symbolizer *s, pid_t pid);

#endif /* FVBPF_SYMBOLIZER_H */
