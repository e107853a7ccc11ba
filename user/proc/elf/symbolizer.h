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
 * Finds the mapping in /proc/PID/maps, opens the mapped file itself
 * (proc_map_open(): /proc/PID/map_files/<range>, else the path under
 * /proc/PID/root if it still holds that inode), turns the address into an ELF virtual
 * address through the PT_LOAD holding its file offset, and looks it up in
 * .symtab and .dynsym together (FUNC/OBJECT symbols; a symbol of size 0
 * covers up to the next symbol or the end of its section).
 * Returns 0, -ENOENT (no symbol there), -ESRCH (no such process), or another
 * -errno; on any failure @buf gets "0x<hex addr>".
 * Results are cached per (pid, addr): a repeated lookup reads no file and
 * allocates nothing.
 */
int symbolizer_lookup(struct symbolizer *s, pid_t pid, uint64_t addr, char *buf, size_t len);

/* Demangle a C++ (Itanium) name; a name that is not mangled is copied as
 * is.  Bounded as demangle() is (demangle.h): returns 1 when a cap was hit. */
int symbolizer_demangle(const char *name, char *buf, size_t len);

/* Bounds on the per-file symbol cache: least recently used files are
 * dropped beyond either (counted in files_evicted). */
#define SYMBOLIZER_MAX_FILES 64
#define SYMBOLIZER_MAX_BYTES (512u << 20)
/* Other bounds, for tests: 0 keeps a bound as it is. */
void symbolizer_set_limits(struct symbolizer *s, size_t max_files, size_t max_bytes);

/* Counters for the report. */
struct symbolizer_stats {
	uint64_t lookups;    /* symbolizer_lookup() calls */
	uint64_t hits;       /* answered from the per-pid address cache */
	uint64_t file_loads; /* ELF symbol tables read (once per file) */
	uint64_t maps_reads; /* /proc/PID/maps parsed */
	uint64_t unknown;    /* lookups that returned an error */
	uint64_t files_evicted;   /* dropped from the file cache by its bounds */
	uint64_t demangle_capped; /* names too long to demangle, or cut */
	uint64_t syms_capped;     /* files whose symbols hit a cap (count,
				   * name length) or had malformed tables */
	uint64_t maps_capped;     /* /proc/PID/maps reads cut at the mapping cap */
};
void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *out);

/* Forget mappings and cached addresses of @pid (call when its maps change or
 * it exits, before the pid can be reused); file caches stay. */
void symbolizer_forget_pid(struct symbolizer *s, pid_t pid);

#endif /* FVBPF_SYMBOLIZER_H */
