/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * C++ (Itanium) demangling of names the target chose (symbol names, CUPTI
 * kernel names), bounded: the demangler's work grows with its input, and
 * its output can be far longer than the input, so both are capped.
 */
#ifndef FVBPF_DEMANGLE_H
#define FVBPF_DEMANGLE_H

#include <stddef.h>
#include <stdint.h>

/* Longer names are not demangled (shown as they are, cut to the output). */
#define DEMANGLE_IN_MAX 4096
/* Longest result kept; longer ones are cut. */
#define DEMANGLE_OUT_MAX 4096

/*
 * Demangle @name into @buf of @len bytes (at most DEMANGLE_OUT_MAX + 1 are
 * used; always NUL-terminated when @len > 0).  A name that is not mangled
 * ("_Z...") is copied as is.  Returns 1 when a cap was hit (input too long
 * to demangle, or the result cut to DEMANGLE_OUT_MAX), 0 otherwise; a cut
 * because @len is short is the caller's choice and not counted.
 */
int demangle(const char *name, char *buf, size_t len);

/* How many times a cap was hit, in this process (any thread). */
uint64_t demangle_capped_total(void);

#endif /* FVBPF_DEMANGLE_H */
