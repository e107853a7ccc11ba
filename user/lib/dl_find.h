/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The process's own loaded objects, found by file name (dl_find.c).
 * Internal to libfvbpf.so.
 */
#ifndef FVBPF_LIB_DL_FIND_H
#define FVBPF_LIB_DL_FIND_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dl_found {
	char path[4096];        /* as the dynamic linker names it */
	ElfW(Addr) base;
	const ElfW(Phdr) *phdr; /* its program headers, in memory */
	int phnum;
};

/* Whether the file name of @path (after its last '/') starts with @prefix. */
bool dl_name_is(const char *path, const char *prefix);
/* The first loaded object whose file name starts with @prefix ("libcudart.so"):
 * true and @out, or false. */
bool dl_find(const char *prefix, struct dl_found *out);
/* @n bytes at @addr of object @o as its file holds them (memory may differ:
 * a uprobe's int3): 0, or -errno (-EIO: not in a PT_LOAD's file bytes). */
int dl_file_read(const struct dl_found *o, uintptr_t addr, void *out, size_t n);

#endif /* FVBPF_LIB_DL_FIND_H */
