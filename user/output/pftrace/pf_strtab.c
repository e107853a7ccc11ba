// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/pftrace/pf_strtab.h"
#include "util/text_sanitize.h"

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int strtab_grow(struct strtab *t)
{
	size_t nslot = t->nslot ? t->nslot * 2 : 256, i, j;
	uint32_t *slot = calloc(nslot, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		for (j = str_hash(t->raw[i]) & (nslot - 1); slot[j]; j = (j + 1) & (nslot - 1))
			;
		slot[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

/* 0 on failure (t->err set) */
uint32_t strtab_intern(struct strtab *t, const char *raw)
{
	char clean[1100];
	size_t j, cap;
	char **s;

	if (t->err)
		return 0;
	if ((t->n + 1) * 2 > t->nslot && strtab_grow(t))
		goto oom;
	for (j = str_hash(raw) & (t->nslot - 1); t->slot[j]; j = (j + 1) & (t->nslot - 1))
		if (!strcmp(t->raw[t->slot[j] - 1], raw))
			return t->slot[j];
	if (t->n == t->cap) {
		cap = t->cap ? t->cap * 2 : 64;
		s = realloc(t->s, cap * sizeof(*s));
		if (!s)
			goto oom;
		t->s = s;
		s = realloc(t->raw, cap * sizeof(*s));
		if (!s)
			goto oom;
		t->raw = s;
		t->cap = cap;
	}
	text_clean_utf8(clean, sizeof(clean), raw);
	t->s[t->n] = strdup(clean);
	t->raw[t->n] = strdup(raw);
	if (!t->s[t->n] || !t->raw[t->n]) {
		free(t->s[t->n]);
		free(t->raw[t->n]);
		goto oom;
	}
	t->slot[j] = (uint32_t)++t->n;
	return (uint32_t)t->n;
oom:
	t->err = -ENOMEM;
	return 0;
}

void strtab_free(struct strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->s[i]);
		free(t->raw[i]);
	}
	free(t->s);
	free(t->raw);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
