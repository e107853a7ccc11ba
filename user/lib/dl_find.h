/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The process's own loaded objects, found by file name (dl_find.c).
 * Internal to libfvbpf.so.
 */
#ifndef FVBPF_LIB_DL_FIND_H
#define FVBPF_LIB_DL_FIND_H

#include <link.h>
#include <stdbool.h>

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

#endif /* FVBPF_LIB_DL_FIND_H */
