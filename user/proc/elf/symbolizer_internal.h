/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The symbolizer's own state, shared by symbolizer.c (pids, maps, the
 * address cache, lookup) and sym_file_cache.c (the file cache), and by
 * nobody else.
 */
#ifndef FVBPF_SYMBOLIZER_INTERNAL_H
#define FVBPF_SYMBOLIZER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "proc/elf/sym_table.h"
#include "proc/elf/symbolizer.h"

/* Beyond this many cached addresses for one pid, start that cache afresh:
 * bounds memory when something feeds us endless distinct addresses. */
#define ADDR_CACHE_MAX (1u << 20)
/* Mappings kept per pid (the kernel's default limit is 65530). */
#define MAPS_MAX (1u << 18)

struct sym_file {
	dev_t dev;              /* as /proc/PID/maps shows them: the key */
	ino_t ino;
	off_t size;             /* with mtime: which file had that inode */
	struct timespec mtime;  /* (inode numbers are reused after unlink) */
	int err;                /* < 0: not an ELF we can read; don't retry */
	struct sym_table tab;
	size_t bytes;           /* heap held, for the cache bound */
	struct sym_file *prev, *next; /* most recently used first */
};

struct mapping {
	uint64_t start, end, pgoff;
	dev_t dev;
	ino_t ino;              /* 0: not backed by a file */
	size_t path;            /* offset into pid_cache.paths */
	bool deleted;           /* the path was deleted: only map_files reaches it */
	struct sym_file *file;  /* resolved on first use; cleared on eviction */
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
	struct sym_file *files, *files_tail; /* LRU list */
	size_t nfiles, file_bytes;
	size_t max_files, max_bytes;
	struct symbolizer_stats st;
};

/* The symbol table of @m's file, loaded on first use and made the most
 * recently used: NULL with *@err when it cannot be read. */
struct sym_file *sym_file_get(struct symbolizer *s, struct pid_cache *pc, struct mapping *m,
			      int *err);
void sym_file_drop(struct symbolizer *s, struct sym_file *f);
/* Drop least recently used files past the bounds, never @keep. */
void sym_files_trim(struct symbolizer *s, const struct sym_file *keep);

#endif /* FVBPF_SYMBOLIZER_INTERNAL_H */
