// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Gloo collectives joined from their three calls (collectives.h).
 *
 * Everything here is the target's: the work pointer only keys a table
 * (a made work is looked up, never read), the title is read as at most
 * COLL_TEXT bytes and cleaned, and a process group's fields are taken from
 * its memory only where they look like c10d::Backend's: rank_, size_ and
 * the debug level, then pg_uid_ and pg_desc_ as two libstdc++ strings
 * (torch 2.13 and 2.14 put them at the same place; the scan finds them
 * wherever a later build moves them, and a group that matches nowhere is
 * counted, its collectives kept without a name).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "pipeline/comm/collectives.h"
#include "util/text_sanitize.h"

#define COLL_WORKS 512     /* works made and not yet run */
#define COLL_GROUPS 64
#define COLL_TITLES 64
#define COLL_TEXT 128      /* longest title or group name kept */
#define PG_WINDOW 256      /* bytes of a process group read to find its fields */
#define PG_SIZE_MAX (1 << 20)

struct coll_work {
	uint64_t work, pg, seq, arrive_ns, title;
	uint64_t nelems, bytes;
	uint32_t tensors;
	uint8_t dtype;
	bool sized;
	uint64_t run_start, run_end;  /* ran before its queueing call returned */
	uint32_t tid, op, run_tid;
	bool live, ran;
};

struct coll_group {
	uint64_t ptr;
	uint32_t name, desc;
	int32_t rank, size;
};

struct coll_state {
	pid_t pid;
	struct name_table *names;
	struct coll_work works[COLL_WORKS];
	unsigned int next;
	struct coll_group groups[COLL_GROUPS];
	unsigned int ngroups;
	struct {
		uint64_t ptr;
		uint32_t id;
	} titles[COLL_TITLES];
	unsigned int ntitles;
	struct coll_counts n;
};

struct coll_state *coll_state__new(void)
{
	return calloc(1, sizeof(struct coll_state));
}

void coll_state__free(struct coll_state *st)
{
	free(st);
}

const struct coll_counts *coll_counts(const struct coll_state *st)
{
	return &st->n;
}

/* Up to @len bytes at @addr: how many were read (a page end stops it). */
static size_t read_target(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!addr)
		return 0;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0 && errno == EFAULT && len > 16) {
		/* a literal near the end of its mapping: up to the page end */
		size_t room = 4096 - (addr & 4095);

		if (room < len) {
			local.iov_len = remote.iov_len = room;
			n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		}
	}
	return n > 0 ? (size_t)n : 0;
}

/* The target's text, cleaned and interned: 0 when unreadable. */
static uint32_t intern_text(struct coll_state *st, const char *raw, size_t len)
{
	char copy[COLL_TEXT + 1], clean[COLL_TEXT * 4 + 1];
	size_t n = strnlen(raw, len);

	if (n > COLL_TEXT) {
		n = COLL_TEXT;
		st->n.name_cut++;
	}
	memcpy(copy, raw, n);
	copy[n] = '\0';
	if (!n)
		return 0;
	text_clean_terminal(clean, sizeof(clean), copy);
	if (strcmp(clean, copy))
		st->n.name_cut++;
	return name_table_intern(st->names, clean);
}

static uint32_t title_of(struct coll_state *st, uint64_t ptr)
{
	char buf[COLL_TEXT + 1];
	unsigned int i;
	size_t n;
	uint32_t id;

	for (i = 0; i < st->ntitles; i++)
		if (st->titles[i].ptr == ptr)
			return st->titles[i].id;
	n = read_target(st->pid, ptr, buf, COLL_TEXT);
	buf[n] = '\0';
	id = n ? intern_text(st, buf, n) : 0;
	if (id && st->ntitles < COLL_TITLES) {
		st->titles[st->ntitles].ptr = ptr;
		st->titles[st->ntitles++].id = id;
	}
	return id;
}

static uint64_t u64_at(const unsigned char *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static int32_t i32_at(const unsigned char *b, size_t off)
{
	int32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* A libstdc++ string at @off of the window read from @base: its text in
 * @out (heap strings read apart).  false when it is not one. */
static bool string_at(struct coll_state *st, const unsigned char *w, uint64_t base, size_t off,
		      char *out, size_t outlen)
{
	uint64_t p = u64_at(w, off), len = u64_at(w, off + 8);

	if (p == base + off + 16) { /* short: in place */
		if (len > 15 || w[off + 16 + len] != '\0')
			return false;
		memcpy(out, w + off + 16, len);
		out[len] = '\0';
		return true;
	}
	if (len <= 15 || len >= outlen || p < 4096 || (p >> 47))
		return false;
	if (read_target(st->pid, p, out, len) != len)
		return false;
	out[len] = '\0';
	return strlen(out) == len;
}

static bool group_fields(struct coll_state *st, struct coll_group *g)
{
	unsigned char w[PG_WINDOW];
	char name[COLL_TEXT + 1], desc[COLL_TEXT + 1];
	int32_t rank, size, debug;
	size_t off;

	if (read_target(st->pid, g->ptr, w, sizeof(w)) != sizeof(w))
		return false;
	for (off = 24; off + 64 <= sizeof(w); off += 8) {
		rank = i32_at(w, off - 16);
		size = i32_at(w, off - 12);
		debug = i32_at(w, off - 8);
		if (size < 1 || size > PG_SIZE_MAX || rank < 0 || rank >= size || debug < 0 ||
		    debug > 2)
			continue;
		if (!string_at(st, w, g->ptr, off, name, sizeof(name)) ||
		    !string_at(st, w, g->ptr, off + 32, desc, sizeof(desc)))
			continue;
		g->rank = rank;
		g->size = size;
		g->name = intern_text(st, name, sizeof(name));
		g->desc = intern_text(st, desc, sizeof(desc));
		return g->name != 0;
	}
	return false;
}

static const struct coll_group *group_of(struct coll_state *st, uint64_t ptr)
{
	static const struct coll_group unknown = { 0, 0, 0, -1, -1 };
	struct coll_group *g;
	unsigned int i;

	for (i = 0; i < st->ngroups; i++)
		if (st->groups[i].ptr == ptr)
			return &st->groups[i];
	if (!ptr || st->ngroups == COLL_GROUPS)
		return &unknown;
	g = &st->groups[st->ngroups];
	memset(g, 0, sizeof(*g));
	g->ptr = ptr;
	g->rank = g->size = -1;
	if (!group_fields(st, g)) {
		st->n.pg_unread++;
		g->name = g->desc = 0;
		g->rank = g->size = -1;
	}
	st->ngroups++;
	return g;
}

unsigned int coll_ngroups(const struct coll_state *st)
{
	return st->ngroups;
}

bool coll_group(const struct coll_state *st, unsigned int i, uint32_t *name, uint32_t *desc,
		int32_t *rank, int32_t *size)
{
	if (i >= st->ngroups || !st->groups[i].name)
		return false;
	*name = st->groups[i].name;
	*desc = st->groups[i].desc;
	*rank = st->groups[i].rank;
	*size = st->groups[i].size;
	return true;
}

static struct coll_work *work_find(struct coll_state *st, uint64_t work)
{
	unsigned int i, k;

	/* newest first: a freed work's address is reused by the next one */
	for (i = 0; i < COLL_WORKS; i++) {
		k = (st->next + COLL_WORKS - 1 - i) % COLL_WORKS;
		if (st->works[k].live && st->works[k].work == work)
			return &st->works[k];
	}
	return NULL;
}

/* What BPF read of the work's input tensors (struct fvbpf_coll_tensors):
 * believed whole only when every tensor was read, all of one known dtype. */
static void sizes_of(struct coll_work *w, const struct api_call *c)
{
	struct fvbpf_coll_tensors ct;
	uint64_t sum = 0, bytes;
	unsigned int i, size;

	w->tensors = 0;
	w->nelems = w->bytes = 0;
	w->dtype = COLL_DTYPE_UNKNOWN;
	w->sized = false;
	if (c->deref_len != sizeof(ct))
		return;
	memcpy(&ct, c->deref, sizeof(ct));
	w->tensors = ct.count;
	if (!ct.count || ct.read != ct.count || ct.read > FVBPF_COLL_TENSORS)
		return;
	for (i = 0; i < ct.read; i++) {
		if (ct.dtype[i] != ct.dtype[0])
			w->dtype = COLL_DTYPE_MIXED;
		if (__builtin_add_overflow(sum, ct.numel[i], &sum) || ct.numel[i] > (1ull << 48))
			return;
	}
	if (w->dtype != COLL_DTYPE_MIXED)
		w->dtype = ct.dtype[0];
	size = coll_dtype_size(w->dtype);
	if (!size || __builtin_mul_overflow(sum, (uint64_t)size, &bytes))
		return;
	w->nelems = sum;
	w->bytes = bytes;
	w->sized = true;
}

static void on_made(struct coll_state *st, const struct api_call *c)
{
	struct coll_work *w = &st->works[st->next];

	if (w->live)
		st->n.evicted++;
	st->next = (st->next + 1) % COLL_WORKS;
	w->work = c->args[0];
	w->op = (uint32_t)(c->args[3] & 0xff);
	w->seq = c->args[4];
	w->title = c->args[6];
	w->arrive_ns = c->start_ns;
	w->tid = c->tid;
	w->pg = 0;
	w->ran = false;
	w->live = true;
	sizes_of(w, c);
}

static uint64_t deref_ptr(const struct api_call *c)
{
	return c->deref_len >= 8 ? u64_at(c->deref, 0) : 0;
}

static int finish(struct coll_state *st, struct coll_work *w, struct collective *out)
{
	const struct coll_group *g;

	w->live = false;
	g = group_of(st, w->pg);
	memset(out, 0, sizeof(*out));
	out->arrive_ns = w->arrive_ns;
	out->arrive_tid = w->tid;
	out->start_ns = w->run_start;
	out->end_ns = w->run_end;
	out->tid = w->run_tid;
	out->seq = w->seq;
	out->op_type = w->op;
	out->name = title_of(st, w->title);
	out->pg_name = g->name;
	out->pg_desc = g->desc;
	out->group_rank = g->rank;
	out->group_size = g->size;
	out->tensors = w->tensors;
	out->nelems = w->nelems;
	out->bytes = w->bytes;
	out->dtype = w->dtype;
	out->sized = w->sized;
	st->n.joined++;
	st->n.sized += w->sized;
	return 1;
}

/* Calls are whole at their return: a backend thread may run the work and
 * return before the queueing call on the caller's thread does. */
static int on_queued(struct coll_state *st, const struct api_call *c, struct collective *out)
{
	struct coll_work *w = work_find(st, deref_ptr(c));

	if (!w)
		return 0;
	w->pg = c->args[0];
	return w->ran ? finish(st, w, out) : 0;
}

static int on_run(struct coll_state *st, const struct api_call *c, struct collective *out)
{
	struct coll_work *w = work_find(st, deref_ptr(c));

	if (!w) {
		st->n.no_work++;
		return 0;
	}
	w->run_start = c->start_ns;
	w->run_end = c->end_ns;
	w->run_tid = c->tid;
	w->ran = true;
	return w->pg ? finish(st, w, out) : 0;
}

int coll_on_call(struct coll_state *st, pid_t pid, struct name_table *names,
		 const struct api_call *c, struct collective *out)
{
	const struct api_row *r = cuda_api_row(c->api_id);

	if (!st || !r || r->layer != LAYER_GLOO)
		return 0;
	st->pid = pid;
	st->names = names;
	switch (r->decoder) {
	case DEC_GLOO_WORK:
		on_made(st, c);
		return 0;
	case DEC_GLOO_ENQUEUE:
		return on_queued(st, c, out);
	case DEC_GLOO_EXEC:
		return c->no_return ? 0 : on_run(st, c, out);
	default:
		return 0;
	}
}

const char *coll_short_name(const char *title)
{
	const char *colon = strchr(title, ':');

	return colon ? colon + 1 : title;
}

/* c10::ScalarType, as torch numbers them (the TypeMeta index of the
 * standard types) and as Kineto names them. */
static const struct {
	const char *name;
	unsigned char size;
} dtypes[] = {
	{ "Byte", 1 }, { "Char", 1 }, { "Short", 2 }, { "Int", 4 }, { "Long", 8 },
	{ "Half", 2 }, { "Float", 4 }, { "Double", 8 }, { "ComplexHalf", 4 },
	{ "ComplexFloat", 8 }, { "ComplexDouble", 16 }, { "Bool", 1 }, { "QInt8", 1 },
	{ "QUInt8", 1 }, { "QInt32", 4 }, { "BFloat16", 2 },
};

const char *coll_dtype_name(uint8_t dtype)
{
	if (dtype == COLL_DTYPE_MIXED)
		return "mixed";
	return dtype < sizeof(dtypes) / sizeof(dtypes[0]) ? dtypes[dtype].name : "unknown";
}

unsigned int coll_dtype_size(uint8_t dtype)
{
	return dtype < sizeof(dtypes) / sizeof(dtypes[0]) ? dtypes[dtype].size : 0;
}
