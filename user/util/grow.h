/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_GROW_H
#define FVBPF_GROW_H

#include <errno.h>
#include <stdlib.h>

/*
 * Make room for one more element in a doubling array: *@v holds *@n of
 * *@cap elements of @size bytes.  0, or -ENOMEM with the array untouched.
 */
static inline int grow_one(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	void **p = v, *nv;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : first;
	nv = realloc(*p, ncap * size);
	if (!nv)
		return -ENOMEM;
	*p = nv;
	*cap = ncap;
	return 0;
}

#endif /* FVBPF_GROW_H */
