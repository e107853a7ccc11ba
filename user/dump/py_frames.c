// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump/py_frames.h"
#include "proc/python/py_code.h"

struct slot {
	uint64_t addr;              /* 0: free */
	enum py_code_err err;
	struct py_code code;
};

struct pyf_cache {
	const struct py_runtime *r;
	struct slot slots[PYF_CACHE_SLOTS];
	unsigned int used;
};

struct pyf_cache *pyf_cache_new(const struct py_runtime *r)
{
	struct pyf_cache *c = calloc(1, sizeof(*c));

	if (c)
		c->r = r;
	return c;
}

void pyf_cache_free(struct pyf_cache *c)
{
	unsigned int i;

	if (!c)
		return;
	for (i = 0; i < PYF_CACHE_SLOTS; i++)
		if (c->slots[i].addr)
			py_code_free(&c->slots[i].code);
	free(c);
}

void dump_frames_free(struct dump_frame *f, unsigned int n)
{
	unsigned int i;

	for (i = 0; f && i < n; i++) {
		free(f[i].function);
		free(f[i].file);
	}
	free(f);
}

/* The slot of @addr (open addressing), NULL when full and not there. */
static struct slot *lookup(struct pyf_cache *c, uint64_t addr, bool *hit)
{
	unsigned int i, h = (unsigned int)((addr >> 4) * 0x9e3779b1u) % PYF_CACHE_SLOTS;

	for (i = 0; i < PYF_CACHE_SLOTS; i++) {
		struct slot *s = &c->slots[(h + i) % PYF_CACHE_SLOTS];

		if (s->addr == addr) {
			*hit = true;
			return s;
		}
		if (!s->addr) {
			*hit = false;
			/* keep a quarter free: probes stay short */
			return c->used < PYF_CACHE_SLOTS - PYF_CACHE_SLOTS / 4 ? s : NULL;
		}
	}
	*hit = false;
	return NULL;
}

static int fill(struct dump_frame *out, const struct py_runtime *r, enum py_code_err err,
		const struct py_code *code, uint64_t addr, uint64_t instr)
{
	char what[64];

	out->code = addr;
	if (err != PY_CODE_OK && err != PY_CODE_HUGE_TABLE) {
		snprintf(what, sizeof(what), "[unreadable code 0x%llx]", (unsigned long long)addr);
		out->function = strdup(what);
		out->file = strdup("");
		out->unreadable = true;
	} else {
		out->function = strdup(code->name);
		out->file = strdup(code->file);
		out->first_line = code->firstlineno;
		out->line = code->ntable ? py_code_line(r, code, instr) : 0;
	}
	return out->function && out->file ? 0 : -ENOMEM;
}

int pyf_resolve(struct pyf_cache *c, const struct pyw_stack *st, struct dump_thread *t)
{
	unsigned int i;
	int err = 0;

	t->nframes = 0;
	t->frames = st->nframes ? calloc(st->nframes, sizeof(*t->frames)) : NULL;
	if (st->nframes && !t->frames)
		return -ENOMEM;
	for (i = 0; i < st->nframes; i++) {
		const struct pyw_frame *f = &st->frames[i];
		struct py_code tmp;
		struct slot *s = NULL;
		bool hit = false;

		if (f->code)
			s = lookup(c, f->code, &hit);
		if (!f->code) {
			memset(&tmp, 0, sizeof(tmp));
			err = fill(&t->frames[i], c->r, PY_CODE_NOT_CODE, &tmp, 0, f->instr);
		} else if (s && hit) {
			err = fill(&t->frames[i], c->r, s->err, &s->code, f->code, f->instr);
		} else if (s) {
			s->addr = f->code;
			s->err = py_code_read(c->r, f->code, &s->code);
			c->used++;
			err = fill(&t->frames[i], c->r, s->err, &s->code, f->code, f->instr);
		} else {
			enum py_code_err e = py_code_read(c->r, f->code, &tmp);

			err = fill(&t->frames[i], c->r, e, &tmp, f->code, f->instr);
			py_code_free(&tmp);
		}
		if (err) { /* out of memory: the frames so far, each whole */
			free(t->frames[i].function);
			free(t->frames[i].file);
			break;
		}
		t->nframes = i + 1;
	}
	return err;
}
