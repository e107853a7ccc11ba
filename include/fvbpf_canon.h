/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Region name canonicalisation, shared by the in-process library and the
 * loader so that both sides derive the same 64-bit key from a name.  The
 * library hashes the name only while attached, and BPF looks the hash up in
 * a map of enabled regions: BPF never reads or compares strings.
 */
#ifndef FVBPF_CANON_H
#define FVBPF_CANON_H

#include <stddef.h>
#include <stdint.h>

#define FVBPF_REGION_PREFIX "profiler_region_"
#define FVBPF_REGION_PREFIX_LEN 16
/* Longest canonical region name, without the terminating NUL. */
#define FVBPF_REGION_NAME_MAX 63

static inline int fvbpf_canon_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static inline char fvbpf_canon_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/*
 * Find the canonical span of @name: [*start, *start + *len) after trimming
 * and dropping the optional prefix.  Case folding is left to the caller.
 */
static inline void fvbpf_canon_span(const char *name, const char **start, size_t *len)
{
	const char *b = name, *e;
	size_t i;

	while (*b && fvbpf_canon_space(*b))
		b++;
	e = b;
	while (*e)
		e++;
	while (e > b && fvbpf_canon_space(e[-1]))
		e--;
	if ((size_t)(e - b) > FVBPF_REGION_PREFIX_LEN) {
		for (i = 0; i < FVBPF_REGION_PREFIX_LEN; i++)
			if (fvbpf_canon_lower(b[i]) != FVBPF_REGION_PREFIX[i])
				break;
		if (i == FVBPF_REGION_PREFIX_LEN)
			b += FVBPF_REGION_PREFIX_LEN;
	}
	*start = b;
	*len = (size_t)(e - b);
}

/* FNV-1a over the canonical (lower-cased) name; 0 is reserved for "none". */
static inline uint64_t fvbpf_region_hash(const char *name)
{
	const char *s;
	size_t len, i;
	uint64_t h = 0xcbf29ce484222325ULL;

	fvbpf_canon_span(name, &s, &len);
	for (i = 0; i < len; i++) {
		h ^= (unsigned char)fvbpf_canon_lower(s[i]);
		h *= 0x100000001b3ULL;
	}
	return h ? h : 1;
}

/*
 * Write the canonical form of @name into @out.  Returns its length, or -1
 * when it is empty or longer than FVBPF_REGION_NAME_MAX (then @out holds the
 * truncated form, still NUL-terminated when @outsz > 0).
 */
static inline int fvbpf_region_canon(const char *name, char *out, size_t outsz)
{
	const char *s;
	size_t len, i, n;

	fvbpf_canon_span(name, &s, &len);
	if (!outsz)
		return -1;
	n = len < outsz - 1 ? len : outsz - 1;
	for (i = 0; i < n; i++)
		out[i] = fvbpf_canon_lower(s[i]);
	out[n] = '\0';
	if (!len || len > FVBPF_REGION_NAME_MAX || n < len)
		return -1;
	return (int)len;
}

#endif /* FVBPF_CANON_H */
