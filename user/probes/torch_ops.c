// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE /* memmem */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proc/elf/elf_file.h"
#include "util/clock.h"
#include "util/file/file_open.h"
#include "util/grow.h"
#include "probes/torch_ops.h"
#include "probes/torch_ops_internal.h"

#define HANDLE_CODE 160         /* bytes of create_<opid>_typed_handle decoded */
#define RODATA_CHUNK (1u << 20)

static const char SCOPE_ENTER[] =
	"_ZN5torch8autograd8profiler25record_function_enter_newERKNSt7__cxx1112basic_string"
	"IcSt11char_traitsIcESaIcEEERKSt8optionalIS7_E";
static const char SCOPE_END[] = "_ZN2at14RecordFunction3endEv";
static const char EVAL[] =
	"_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4Node"
	"ERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE";

struct opid_at {
	char opid[OPID_MAX];
	uint64_t addr;          /* ops: file offset; handles: vaddr */
	char *mangled;          /* ops: the symbol (torch_sym.mangled), NULL when out of memory */
};

struct walk {
	struct torch_file *tf;
	struct elf_file *ef;
	struct opid_at *ops, *handles;
	size_t nops, capops, nhandles, caphandles;
	int err;
};

static int push_opid(struct opid_at **v, size_t *n, size_t *cap, const char *opid, uint64_t addr,
		     const char *mangled)
{
	if (grow_one(v, *n, cap, sizeof(**v), 1024))
		return -ENOMEM;
	snprintf((*v)[*n].opid, OPID_MAX, "%s", opid);
	(*v)[*n].mangled = mangled ? strdup(mangled) : NULL;
	(*v)[(*n)++].addr = addr;
	return 0;
}

static struct torch_sym *new_sym(struct torch_file *tf, uint64_t off, uint8_t kind)
{
	struct torch_sym *s;
	size_t i;

	/* .dynsym and .symtab list the same function twice */
	for (i = tf->n; i > 0 && kind == TORCH_NODE && tf->syms[i - 1].kind == TORCH_NODE; i--)
		if (tf->syms[i - 1].off == off)
			return NULL;
	if (grow_one(&tf->syms, tf->n, &tf->cap, sizeof(*s), 1024))
		return NULL;
	s = &tf->syms[tf->n++];
	memset(s, 0, sizeof(*s));
	s->off = off;
	s->kind = kind;
	return s;
}

/* A node class's vtable: its address point and evaluate_function name. */
static int add_eval(struct torch_file *tf, const struct elf_symbol *sym)
{
	char name[TORCH_NAME_MAX];
	struct torch_eval *e;

	if (torch_eval_name(sym->name, name, sizeof(name)) || sym->size < 24)
		return 0; /* not a node, or no room for a virtual function */
	if (grow_one(&tf->evals, tf->nevals, &tf->capevals, sizeof(*e), 1024))
		return -ENOMEM;
	e = &tf->evals[tf->nevals++];
	e->va = sym->value + 16; /* past offset-to-top and the type_info */
	memcpy(e->name, name, sizeof(name));
	return 0;
}

enum probe_as { PROBE_NONE, PROBE_OP, PROBE_SCOPE_ENTER, PROBE_SCOPE_END, PROBE_EVAL, PROBE_NODE };

/* What @sym would be probed as; an op's id in @opid, a node's name in @node. */
static enum probe_as probe_as(const struct elf_symbol *sym, char *opid, char *node)
{
	if (sym->dynamic && !torch_op_call_id(sym->name, opid) && !torch_op_unobserved(opid))
		return PROBE_OP;
	if (!strcmp(sym->name, SCOPE_ENTER))
		return PROBE_SCOPE_ENTER;
	if (!strcmp(sym->name, SCOPE_END))
		return PROBE_SCOPE_END;
	if (!strcmp(sym->name, EVAL))
		return PROBE_EVAL;
	if (!torch_node_name(sym->name, node, TORCH_NAME_MAX))
		return PROBE_NODE;
	return PROBE_NONE;
}

static int on_symbol(const struct elf_symbol *sym, void *ctx)
{
	struct walk *w = ctx;
	char opid[OPID_MAX], node[TORCH_NAME_MAX];
	struct torch_sym *s;
	enum probe_as as;
	uint64_t off;

	if (!sym->dynamic)
		w->tf->has_symtab = true;
	if (sym->type == STT_OBJECT && sym->shndx != SHN_UNDEF && sym->value &&
	    !strncmp(sym->name, VTABLE_PREFIX, sizeof(VTABLE_PREFIX) - 1))
		return add_eval(w->tf, sym);
	if (sym->type != STT_FUNC || sym->shndx == SHN_UNDEF || !sym->value ||
	    sym->name[0] != '_' || sym->name_len < 10)
		return 0;
	if (!torch_handle_id(sym->name, opid))
		w->err = push_opid(&w->handles, &w->nhandles, &w->caphandles, opid, sym->value, NULL);
	/* Classified first: only what would be probed is checked for code. */
	as = probe_as(sym, opid, node);
	if (as == PROBE_NONE || elf_file_probe_off(w->ef, sym, &off))
		return w->err;
	if (as == PROBE_OP)
		w->err = push_opid(&w->ops, &w->nops, &w->capops, opid, off, sym->name);
	else if (as == PROBE_SCOPE_ENTER)
		w->tf->scope_enter_off = off;
	else if (as == PROBE_SCOPE_END)
		w->tf->scope_end_off = off;
	else if (as == PROBE_EVAL)
		w->tf->eval_off = off;
	else if ((s = new_sym(w->tf, off, TORCH_NODE)))
		memcpy(s->name, node, sizeof(node));
	return w->err;
}

static int cmp_opid(const void *a, const void *b)
{
	return strcmp(((const struct opid_at *)a)->opid, ((const struct opid_at *)b)->opid);
}

/* A NUL-terminated string at @va in the file, at most @len bytes with it. */
static int read_cstr(int fd, const struct elf_file *ef, uint64_t va, char *out, size_t len)
{
	uint64_t off;
	ssize_t got;

	if (elf_file_vaddr_to_off(ef, va, &off))
		return -ENOENT;
	got = pread(fd, out, len, (off_t)off);
	if (got <= 0)
		return -EIO;
	if (!memchr(out, '\0', (size_t)got))
		return -ENAMETOOLONG;
	return 0;
}

/* Exact: the strings create_<opid>_typed_handle() hands the dispatcher. */
static int name_exact(int fd, const struct walk *w, const struct opid_at *h, struct torch_sym *s)
{
	uint8_t code[HANDLE_CODE];
	uint64_t off, nva, ova;
	char name[TORCH_NAME_MAX];
	ssize_t got;

	if (elf_file_vaddr_to_off(w->ef, h->addr, &off))
		return -ENOENT;
	got = pread(fd, code, sizeof(code), (off_t)off);
	if (got <= 0 || torch_lea_decode(code, (size_t)got, h->addr, &nva, &ova))
		return -ENOENT;
	if (read_cstr(fd, w->ef, nva, name, sizeof(name)) ||
	    read_cstr(fd, w->ef, ova, s->overload, sizeof(s->overload)) ||
	    strncmp(name, "aten::", 6))
		return -ENOENT;
	memcpy(s->name, name, sizeof(name));
	s->naming = TORCH_NAMED_EXACT;
	return 0;
}

int torch_prefix_name(const char *opid, char *const *names, size_t n, char *name, size_t nlen,
		      char *overload, size_t olen)
{
	size_t i, best = 0, plen;
	bool found = false;

	/* names are "aten::P": few thousand, walked once per op without .symtab */
	for (i = 0; i < n; i++) {
		plen = strlen(names[i] + 6);
		if (plen <= best && found)
			continue;
		if (strncmp(opid, names[i] + 6, plen) || (opid[plen] && opid[plen] != '_'))
			continue;
		best = plen;
		found = true;
		if ((size_t)snprintf(name, nlen, "%s", names[i]) >= nlen)
			return -ENOENT;
		snprintf(overload, olen, "%s", opid[plen] ? opid + plen + 1 : "");
	}
	return found ? 0 : -ENOENT;
}

static void add_aten_strings(const char *buf, size_t len, char ***v, size_t *n, size_t *cap)
{
	const char *p = buf, *end = buf + len, *z;

	while ((p = memmem(p, (size_t)(end - p), "aten::", 6))) {
		z = memchr(p, '\0', (size_t)(end - p));
		if (!z)
			return;
		/* only whole strings: the byte before must end another one */
		if ((p == buf || p[-1] == '\0') && z - p > 6 && z - p < TORCH_NAME_MAX &&
		    !strpbrk(p + 6, ".( ") && !grow_one(v, *n, cap, sizeof(**v), 1024)) {
			(*v)[*n] = strdup(p);
			if ((*v)[*n])
				(*n)++;
		}
		p = z;
	}
}

/* Fallback without .symtab: the "aten::*" strings of the read-only loads. */
static int aten_strings(int fd, const struct elf_file *ef, char ***v, size_t *n)
{
	const struct elf_load *loads;
	size_t nl = elf_file_loads(ef, &loads), i, cap = 0;
	uint64_t pos, end;
	char *buf = malloc(RODATA_CHUNK + 1);
	ssize_t got;

	if (!buf)
		return -ENOMEM;
	for (i = 0; i < nl; i++) {
		end = loads[i].off + loads[i].filesz;
		/* chunks overlap by a name's length, so none is cut */
		for (pos = loads[i].off; pos < end; pos += RODATA_CHUNK - TORCH_NAME_MAX) {
			got = pread(fd, buf, end - pos < RODATA_CHUNK ? end - pos : RODATA_CHUNK, (off_t)pos);
			if (got <= 0)
				break;
			add_aten_strings(buf, (size_t)got, v, n, &cap);
			if ((uint64_t)got < RODATA_CHUNK)
				break;
		}
	}
	free(buf);
	return 0;
}

static void name_by_prefix(int fd, struct walk *w)
{
	char **names = NULL;
	size_t n = 0, i;
	char opid[TORCH_NAME_MAX];
	struct torch_sym *s;

	if (aten_strings(fd, w->ef, &names, &n))
		return;
	for (i = 0; i < w->tf->n; i++) {
		s = &w->tf->syms[i];
		if (s->kind != TORCH_OP || s->naming)
			continue;
		/* the name field holds the opid until now */
		memcpy(opid, s->name, sizeof(opid));
		if (!torch_prefix_name(opid, names, n, s->name, sizeof(s->name), s->overload,
				       sizeof(s->overload)))
			s->naming = TORCH_NAMED_PREFIX;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Ops first, in opid order; each named from its typed handle when found. */
static int add_ops(int fd, struct walk *w)
{
	struct torch_file *tf = w->tf;
	struct opid_at key, *h;
	struct torch_sym *s;
	size_t i;
	bool unnamed = false;

	/* a file without ops or without .symtab has none of one kind:
	 * qsort and bsearch must not see a NULL array */
	if (w->nops)
		qsort(w->ops, w->nops, sizeof(*w->ops), cmp_opid);
	if (w->nhandles)
		qsort(w->handles, w->nhandles, sizeof(*w->handles), cmp_opid);
	for (i = 0; i < w->nops; i++) {
		if (i && !strcmp(w->ops[i].opid, w->ops[i - 1].opid))
			continue; /* an alias of the same entry */
		s = new_sym(tf, w->ops[i].addr, TORCH_OP);
		if (!s)
			return -ENOMEM;
		s->mangled = w->ops[i].mangled;
		w->ops[i].mangled = NULL;
		key = w->ops[i];
		h = w->nhandles ? bsearch(&key, w->handles, w->nhandles, sizeof(*h), cmp_opid) : NULL;
		if (!h || name_exact(fd, w, h, s)) {
			/* the opid until a name is found */
			snprintf(s->name, sizeof(s->name), "%s", w->ops[i].opid);
			unnamed = true;
		}
		tf->nops++;
	}
	if (unnamed)
		name_by_prefix(fd, w);
	for (i = 0; i < tf->n; i++) {
		s = &tf->syms[i];
		if (s->kind != TORCH_OP)
			continue;
		if (s->naming == TORCH_NAMED_EXACT)
			tf->named_exact++;
		else if (s->naming == TORCH_NAMED_PREFIX)
			tf->named_prefix++;
		else
			tf->unnamed++;
	}
	return 0;
}

/* Nodes were added during the walk, before the ops: move them after. */
static int order_syms(struct torch_file *tf, size_t nodes)
{
	struct torch_sym *tmp;

	if (!nodes || nodes == tf->n)
		return 0;
	tmp = malloc(nodes * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, tf->syms, nodes * sizeof(*tmp));
	memmove(tf->syms, tf->syms + nodes, (tf->n - nodes) * sizeof(*tmp));
	memcpy(tf->syms + tf->n - nodes, tmp, nodes * sizeof(*tmp));
	free(tmp);
	return 0;
}

static int cmp_eval(const void *a, const void *b)
{
	uint64_t x = ((const struct torch_eval *)a)->va, y = ((const struct torch_eval *)b)->va;

	return x < y ? -1 : x > y;
}

/* .dynsym and .symtab list a vtable twice: sorted, once each. */
static void unique_evals(struct torch_file *tf)
{
	size_t i, n = 0;

	if (!tf->nevals)
		return;
	qsort(tf->evals, tf->nevals, sizeof(*tf->evals), cmp_eval);
	for (i = 0; i < tf->nevals; i++)
		if (!n || tf->evals[n - 1].va != tf->evals[i].va)
			tf->evals[n++] = tf->evals[i];
	tf->nevals = n;
}

int torch_file_discover_fd(int fd, const struct stat *st, struct torch_file *tf)
{
	struct walk w = { .tf = tf };
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int err;

	memset(tf, 0, sizeof(*tf));
	err = elf_file_open_fd(fd, (uint64_t)st->st_size, &w.ef);
	if (err)
		goto cleanup;
	err = elf_file_symbols(w.ef, on_symbol, &w);
	if (err)
		goto cleanup;
	tf->nnodes = tf->n;
	err = add_ops(fd, &w);
	if (!err)
		err = order_syms(tf, tf->nnodes);
	if (!err) {
		uint64_t o;

		unique_evals(tf);
		/* then a vtable's address is the mapping's start + its vaddr */
		tf->vaddr_is_off = !elf_file_vaddr_to_off(w.ef, 0, &o) && o == 0;
	}
	tf->discover_ns = clock_ns(CLOCK_MONOTONIC) - t0;
cleanup:
	if (w.ef)
		elf_file_close(w.ef);
	for (size_t i = 0; i < w.nops; i++)
		free(w.ops[i].mangled);
	free(w.ops);
	free(w.handles);
	if (err)
		torch_file_free(tf);
	return err;
}

int torch_file_discover(const char *path, struct torch_file *tf)
{
	struct stat st;
	int fd, err;

	memset(tf, 0, sizeof(*tf));
	fd = open_regular(path, false, FILE_OPEN_MAX_SIZE, &st);
	if (fd < 0)
		return fd;
	err = torch_file_discover_fd(fd, &st, tf);
	close(fd);
	return err;
}

int torch_file_copy(const struct torch_file *src, struct torch_file *dst)
{
	size_t i;

	*dst = *src;
	dst->syms = NULL;
	dst->evals = NULL;
	dst->cap = src->n;
	dst->capevals = src->nevals;
	dst->syms = src->n ? calloc(src->n, sizeof(*dst->syms)) : NULL;
	dst->evals = src->nevals ? malloc(src->nevals * sizeof(*dst->evals)) : NULL;
	if ((src->n && !dst->syms) || (src->nevals && !dst->evals))
		goto nomem;
	for (i = 0; i < src->n; i++) {
		dst->syms[i] = src->syms[i];
		dst->syms[i].mangled = NULL;
		if (src->syms[i].mangled && !(dst->syms[i].mangled = strdup(src->syms[i].mangled)))
			goto nomem;
	}
	if (src->nevals)
		memcpy(dst->evals, src->evals, src->nevals * sizeof(*dst->evals));
	return 0;
nomem:
	torch_file_free(dst);
	return -ENOMEM;
}

void torch_file_free(struct torch_file *tf)
{
	for (size_t i = 0; tf->syms && i < tf->n; i++)
		free(tf->syms[i].mangled);
	free(tf->syms);
	free(tf->evals);
	memset(tf, 0, sizeof(*tf));
}
