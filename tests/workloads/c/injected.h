/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * For workloads not linked with libfvbpf, traced with `fvbpf attach
 * --inject`: the injected copy, found by its loaded name as a lazy marker
 * lookup would find it.  Header-only.
 */
#ifndef FVBPF_TEST_INJECTED_H
#define FVBPF_TEST_INJECTED_H

#include <dlfcn.h>
#include <link.h>
#include <string.h>

static int wl_injected_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	void **handle = arg;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "/.fvbpf-inject-"))
		return 0;
	*handle = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
	return *handle != NULL;
}

/* The dlopen() handle of the injected libfvbpf, or NULL while there is none. */
static inline void *wl_injected_lib(void)
{
	void *handle = NULL;

	dl_iterate_phdr(wl_injected_cb, &handle);
	return handle;
}

#endif /* FVBPF_TEST_INJECTED_H */
