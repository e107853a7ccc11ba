// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/stacks/pystack_fold.h"
#include "pipeline/torch/op_tree.h"
#include "pipeline/torch/torch_pairing.h"
#include "probes/cuda_api.h"
#include "util/checked_math.h"
#include "util/grow.h"
#include "util/text_sanitize.h"

const char *pystack_short_file(const char *file)
{
	static const char *const marks[] = { "/site-packages/", "/dist-packages/" };
	const char *p;
	size_t i;

	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		p = strstr(file, marks[i]);
		if (p)
			return p + strlen(marks[i]);
	}
	p = strstr(file, "/lib/python3");
	if (p && (p = strchr(p + 12, '/')))
		return p + 1; /* the standard library */
	return file;
}

/* A frame of a folded stack, in place in @s (@size bytes): the target's
 * text as every text output shows it (text_clean_terminal()), and ';',
 * which separates frames, as ':'. */
static void clean(char *s, size_t size)
{
	char small[2048], *raw = strlen(s) < sizeof(small) ? strcpy(small, s) : strdup(s);

	if (raw)
		text_clean_terminal(s, size, raw);
	else
		snprintf(s, size, "%s", TEXT_REPLACEMENT);
	if (raw != small)
		free(raw);
	for (; *s; s++)
		if (*s == ';')
			*s = ':';
}

void pystack_frame_label(struct name_table *names, const struct pystack_frame *f, char *buf,
			 size_t len)
{
	char func[512], file[1024];

	name_table_get(names, f->func, func, sizeof(func));
	name_table_get(names, f->file, file, sizeof(file));
	if (!f->file)
		snprintf(buf, len, "%s", func);
	else if (f->line > 0)
		snprintf(buf, len, "%s (%s:%d)", func, pystack_short_file(file), f->line);
	else
		snprintf(buf, len, "%s (%s:?)", func, pystack_short_file(file));
	clean(buf, len);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int rehash(struct fold_set *fs)
{
	size_t n = fs->nslots ? fs->nslots * 2 : 1024, i, j;
	size_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < fs->n; i++) {
		for (j = hash_str(fs->rows[i].path) & (n - 1); slots[j]; j = (j + 1) & (n - 1))
			;
		slots[j] = i + 1;
	}
	free(fs->slots);
	fs->slots = slots;
	fs->nslots = n;
	return 0;
}

static int add_row(struct fold_set *fs, const char *path, uint64_t ns)
{
	size_t j;

	if ((fs->n + 1) * 2 > fs->nslots && rehash(fs))
		return -ENOMEM;
	for (j = hash_str(path) & (fs->nslots - 1); fs->slots[j]; j = (j + 1) & (fs->nslots - 1))
		if (!strcmp(fs->rows[fs->slots[j] - 1].path, path)) {
			fs->rows[fs->slots[j] - 1].ns += ns;
			fs->total_ns += ns;
			return 0;
		}
	if (grow_one(&fs->rows, fs->n, &fs->cap, sizeof(*fs->rows), 256))
		return -ENOMEM;
	fs->rows[fs->n].path = strdup(path);
	if (!fs->rows[fs->n].path)
		return -ENOMEM;
	fs->rows[fs->n].ns = ns;
	fs->slots[j] = ++fs->n;
	fs->total_ns += ns;
	return 0;
}

static uint64_t op_end(const struct segment *s, const struct torch_call *op)
{
	if (op->end_ns)
		return op->end_ns > op->start_ns ? op->end_ns : op->start_ns;
	return s->end_ns > op->start_ns ? s->end_ns : op->start_ns;
}

/* Append @s as a frame; false once the path is full (marked cut). */
static bool put_frame(char *path, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + n + 2 >= FOLD_PATH_MAX)
		return false;
	if (*len)
		path[(*len)++] = ';';
	memcpy(path + *len, s, n + 1);
	*len += n;
	return true;
}

/* The folded path of call @i: its chain of torch calls from its root in
 * @t; @sids: each call's stack as pystack_op_walk gives it. */
/* A path's first frames: the Python stack @e outermost first (no stack:
 * the placeholder; a walk stopped at the depth bound: that said first). */
static bool put_pystack(const struct seg_output_ctx *c, const struct pystack_entry *e, char *path,
			size_t *len)
{
	char label[1200];
	bool ok = true;
	int k;

	if (!e)
		return put_frame(path, len, FOLD_NO_STACK);
	if (e->flags & FVBPF_PYSTACK_CUT)
		ok = put_frame(path, len, "[outer frames cut]");
	for (k = (int)e->n - 1; k >= 0 && ok; k--) {
		pystack_frame_label(c->knames, &e->f[k], label, sizeof(label));
		ok = put_frame(path, len, label);
	}
	return ok;
}

static bool op_path(const struct seg_output_ctx *c, const struct op_tree *t, size_t i,
		    const uint32_t *sids, char *path)
{
	const struct segment *s = c->seg;
	const struct pystack_entry *e = NULL;
	size_t chain[TORCH_STACK_MAX];
	uint32_t sid = sids[i];
	char label[1200];
	size_t len = 0, n = 0;
	long p = (long)i;
	int a, k;
	bool ok;

	/* innermost first; a root's depth is below TORCH_STACK_MAX, and so
	 * is the chain's length */
	for (; p >= 0 && n < TORCH_STACK_MAX; p = t->parent[p])
		chain[n++] = (size_t)p;
	/* the torch calls shown under the stack are those from the outermost
	 * one with that same stack down (a scope has none: it cannot be
	 * placed among frames) */
	a = (int)n - 1;
	if (sid) {
		for (a = 0; a + 1 < (int)n && sids[chain[a + 1]] == sid; a++)
			;
		e = pystack_get(c->pystacks, sid);
	}
	path[0] = '\0';
	ok = put_pystack(c, e, path, &len);
	for (k = a; k >= 0 && ok; k--) {
		name_table_get(c->knames, s->ops[chain[k]].name, label, sizeof(label));
		clean(label, sizeof(label));
		ok = put_frame(path, &len, label);
	}
	return ok;
}

int pystack_op_walk(const struct segment *s, const struct op_tree *t, uint64_t *self,
		    uint32_t *sid)
{
	bool *by_fwd = calloc(s->nops ? s->nops : 1, sizeof(*by_fwd));
	size_t i;
	uint64_t dur;
	long p;

	if (!by_fwd)
		return -ENOMEM;
	for (i = 0; i < s->nops; i++) {
		const struct torch_call *op = &s->ops[i];

		self[i] = 0;
		/* a backward node: its forward op's stack, not the one it ran under */
		by_fwd[i] = op->fwd_stack != 0;
		sid[i] = by_fwd[i] ? op->fwd_stack : op->stack;
		if (op->depth >= TORCH_STACK_MAX)
			continue;
		dur = op_end(s, op) - op->start_ns;
		self[i] += dur;
		p = t->parent[i];
		if (p < 0)
			continue; /* its caller, if any, began before the segment */
		self[p] = self[p] > dur ? self[p] - dur : 0;
		/* no stack of its own, or inside a backward node: its caller's */
		if (!by_fwd[i] && (!sid[i] || by_fwd[p])) {
			sid[i] = sid[p];
			by_fwd[i] = by_fwd[p];
		}
	}
	free(by_fwd);
	return 0;
}

int pystack_fold_build(const struct seg_output_ctx *c, struct fold_set *fs)
{
	const struct segment *s = c->seg;
	struct op_tree t = { 0 };
	uint64_t *self = NULL;
	uint32_t *sid = NULL;
	char *path = NULL;
	size_t i;
	int ret;

	memset(fs, 0, sizeof(*fs));
	ret = op_tree_build(s, &t);
	if (ret)
		return ret;
	ret = -ENOMEM;
	self = calloc(s->nops ? s->nops : 1, sizeof(*self));
	sid = calloc(s->nops ? s->nops : 1, sizeof(*sid));
	path = malloc(FOLD_PATH_MAX);
	if (!self || !sid || !path || pystack_op_walk(s, &t, self, sid))
		goto cleanup;
	for (i = 0; i < s->nops; i++) {
		const struct torch_call *op = &s->ops[i];

		if (op->depth >= TORCH_STACK_MAX)
			continue; /* pairing keeps none this deep (it counts them) */
		if (op->stack)
			fs->ops_with_stack++;
		else
			fs->ops_without++;
		if (!op_path(c, &t, i, sid, path))
			fs->paths_cut++;
		ret = add_row(fs, path, self[i]);
		if (ret)
			goto cleanup;
	}
	ret = 0;
cleanup:
	op_tree_free(&t);
	free(self);
	free(sid);
	free(path);
	if (ret)
		pystack_fold_free(fs);
	return ret;
}

/* A launching call's stack, its symbol and what ran: one device-time path. */
static bool device_path(const struct seg_output_ctx *c, const struct api_call *call,
			const struct gpu_activity *a, char *path)
{
	const struct pystack_entry *e = call->stack ? pystack_get(c->pystacks, call->stack) : NULL;
	char label[1200];
	size_t len = 0;
	bool ok;

	path[0] = '\0';
	ok = put_pystack(c, e, path, &len);
	if (ok)
		ok = put_frame(path, &len, cuda_api_symbol(call->api_id));
	if (a->kind == FVBPF_GPU_KERNEL && a->name)
		name_table_get(c->knames, a->name, label, sizeof(label));
	else
		snprintf(label, sizeof(label), "[%s]", a->kind == FVBPF_GPU_MEMCPY ? "memcpy" :
			 a->kind == FVBPF_GPU_MEMSET ? "memset" : "kernel");
	clean(label, sizeof(label));
	return ok && put_frame(path, &len, label);
}

int pystack_fold_device(const struct seg_output_ctx *c, struct fold_set *fs)
{
	const struct segment *s = c->seg;
	char *path = malloc(FOLD_PATH_MAX);
	size_t i;
	int ret = 0;

	memset(fs, 0, sizeof(*fs));
	if (!path)
		return -ENOMEM;
	for (i = 0; i < s->ngpu && !ret; i++) {
		const struct gpu_activity *a = &s->gpu[i];

		if (a->kind == FVBPF_GPU_SYNC || a->call < 0 || (size_t)a->call >= s->ncalls)
			continue;
		if (!device_path(c, &s->calls[a->call], a, path))
			fs->paths_cut++;
		ret = add_row(fs, path, span_u64(a->start, a->end));
	}
	free(path);
	if (ret)
		pystack_fold_free(fs);
	return ret;
}

/* Frame by frame: ';' sorts before every other byte. */
static int cmp_rows(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)((const struct fold_row *)a)->path;
	const unsigned char *y = (const unsigned char *)((const struct fold_row *)b)->path;

	for (; *x && *x == *y; x++, y++)
		;
	return (*x == ';' ? 1 : *x + 1) - (*y == ';' ? 1 : *y + 1);
}

void pystack_fold_sort(struct fold_set *fs)
{
	if (fs->n)
		qsort(fs->rows, fs->n, sizeof(*fs->rows), cmp_rows);
	free(fs->slots); /* the order changed: no more lookups */
	fs->slots = NULL;
	fs->nslots = 0;
}

int pystack_fold_write(FILE *f, const struct fold_set *fs)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		if (fs->rows[i].ns)
			fprintf(f, "%s %llu\n", fs->rows[i].path, (unsigned long long)fs->rows[i].ns);
	return ferror(f) ? -EIO : 0;
}

void pystack_fold_free(struct fold_set *fs)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		free(fs->rows[i].path);
	free(fs->rows);
	free(fs->slots);
	memset(fs, 0, sizeof(*fs));
}
