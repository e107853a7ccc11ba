// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_writer.h"
#include "output/json/slice_heads.h"

void slice_heads_init(struct slice_heads *h, const struct region_registry *reg, int64_t pid)
{
	memset(h, 0, sizeof(*h));
	h->reg = reg;
	h->pid = pid;
	h->n = reg->count;
	h->v = h->n ? calloc(h->n, sizeof(*h->v)) : NULL;
}

/* @a @b @c in one malloc'd string: NULL when out of memory. */
static char *concat(size_t *len, const char *a, const char *b, const char *c)
{
	size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
	char *s = malloc(na + nb + nc + 1);

	if (!s)
		return NULL;
	memcpy(s, a, na);
	memcpy(s + na, b, nb);
	memcpy(s + na + nb, c, nc + 1);
	*len = na + nb + nc;
	return s;
}

static int make(struct slice_heads *h, struct slice_head *sh, const char *name)
{
	/* The name quoted, "NAME"; the slice's own name is "fvbpf.region::NAME",
	 * so there the opening quote is left out. */
	size_t need = json_escape(NULL, 0, name) + 1;
	char *esc = malloc(need), pid[48];

	if (!esc)
		return -1;
	json_escape(esc, need, name);
	snprintf(pid, sizeof(pid), ",\"pid\":%" PRId64 ",\"tid\":", h->pid);
	sh->head = concat(&sh->nhead, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
			  "\"fvbpf.region::", esc + 1, pid);
	sh->args = concat(&sh->nargs, ",\"args\":{\"region\":", esc, ",\"depth\":");
	free(esc);
	if (sh->head && sh->args)
		return 0;
	free(sh->head);
	free(sh->args);
	sh->head = sh->args = NULL;
	return -1;
}

const struct slice_head *slice_heads_get(struct slice_heads *h, uint32_t region)
{
	struct slice_head *sh;

	if (!h->v || region >= h->n)
		return NULL;
	sh = &h->v[region];
	if (!sh->head && make(h, sh, h->reg->defs[region].name))
		return NULL;
	return sh;
}

void slice_heads_free(struct slice_heads *h)
{
	size_t i;

	for (i = 0; h->v && i < h->n; i++) {
		free(h->v[i].head);
		free(h->v[i].args);
	}
	free(h->v);
	memset(h, 0, sizeof(*h));
}
