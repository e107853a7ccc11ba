// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Address -> symbol name for traced processes (see symbolizer.h).
 *
 * Three caches, so that the common case (the same kernel stub launched
 * millions of times) is a hash probe and a memcpy:
 *   - per file (maps dev:inode): the symbol table, sorted by address once;
 *     least recently used files are dropped beyond SYMBOLIZER_MAX_FILES or
 *     SYMBOLIZER_MAX_BYTES (a target can map any number of files);
 *   - per pid: the parsed /proc/PID/maps, reread only when an address falls
 *     outside every known mapping (a library mapped since);
 *   - per pid: address -> demangled name (or "0x..." for a definite miss).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/elf/demangle.h"
#include "util/grow.h"
#include "proc/proc_maps.h"
#include "proc/elf/symbolizer.h"
#include "proc/elf/symbolizer_internal.h"
#include "util/text_copy.h"

/* ---- strings ---- */

int symbolizer_demangle(const char *name, char *buf, size_t len)
{
	return demangle(name, buf, len);
}

/* ---- /proc/PID/maps ---- */

struct maps_buf {
	struct mapping *maps;
	size_t n, cap;
	char *paths;
	size_t plen, pcap;
	bool capped;
};

static int add_path(struct maps_buf *b, const char *path, size_t n)
{
	char *p;

	if (b->plen + n + 1 > b->pcap) {
		size_t cap = b->pcap ? b->pcap * 2 : 4096;

		while (cap < b->plen + n + 1)
			cap *= 2;
		p = realloc(b->paths, cap);
		if (!p)
			return -ENOMEM;
		b->paths = p;
		b->pcap = cap;
	}
	memcpy(b->paths + b->plen, path, n);
	b->paths[b->plen + n] = '\0';
	b->plen += n + 1;
	return 0;
}

static int add_map(const struct proc_map *pm, void *arg)
{
	struct maps_buf *b = arg;
	struct mapping *m;

	/* Lookups binary-search by start: keep the kernel's order, and
	 * bound what one process can make us hold. */
	if (b->n && pm->start < b->maps[b->n - 1].end)
		return 0;
	if (b->n == MAPS_MAX) {
		b->capped = true;
		return 1;
	}
	if (grow_one(&b->maps, b->n, &b->cap, sizeof(*b->maps), 64))
		return -ENOMEM;
	m = &b->maps[b->n];
	memset(m, 0, sizeof(*m));
	m->start = pm->start;
	m->end = pm->end;
	m->pgoff = pm->pgoff;
	m->dev = (dev_t)pm->dev;
	/* Files only: "[heap]", "[vdso]" and anonymous memory have no symbols. */
	if (proc_map_is_file(pm)) {
		m->ino = (ino_t)pm->ino;
		m->deleted = pm->deleted;
		m->path = b->plen;
		if (add_path(b, pm->path, strlen(pm->path)))
			return -ENOMEM;
	}
	b->n++;
	return 0;
}

/* (Re)read the mappings of pc->pid; -ESRCH when the process is gone. */
static int maps_read(struct symbolizer *s, struct pid_cache *pc)
{
	struct maps_buf b = { 0 };
	int ret;

	/* Room for the path of a mapping without one, so offsets stay valid. */
	ret = add_path(&b, "", 0);
	if (!ret)
		ret = proc_maps_foreach(pc->pid, add_map, &b);
	if (ret) {
		free(b.maps);
		free(b.paths);
		return ret;
	}
	free(pc->maps);
	free(pc->paths);
	pc->maps = b.maps;
	pc->nmaps = b.n;
	pc->paths = b.paths;
	s->st.maps_reads++;
	s->st.maps_capped += b.capped;
	return 0;
}

/* The mapping holding @addr (binary search: maps are sorted by start). */
static struct mapping *map_find(struct pid_cache *pc, uint64_t addr)
{
	size_t lo = 0, hi = pc->nmaps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < pc->maps[lo - 1].end ? &pc->maps[lo - 1] : NULL;
}

/* ---- per-pid address cache ---- */

static size_t addr_hash(uint64_t addr, size_t cap)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 29) & (cap - 1);
}

static struct addr_slot *slot_find(const struct pid_cache *pc, uint64_t addr)
{
	size_t i;

	if (!pc->cap)
		return NULL;
	for (i = addr_hash(addr, pc->cap); pc->slots[i].name; i = (i + 1) & (pc->cap - 1))
		if (pc->slots[i].addr == addr)
			return &pc->slots[i];
	return NULL;
}

static void slots_free(struct pid_cache *pc)
{
	size_t i;

	for (i = 0; i < pc->cap; i++)
		free(pc->slots[i].name);
	free(pc->slots);
	pc->slots = NULL;
	pc->cap = pc->used = 0;
}

/* Keep the load at most 1/2, so probes stay short. */
static int slots_grow(struct pid_cache *pc)
{
	size_t i, j, cap = pc->cap ? pc->cap * 2 : 64;
	struct addr_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < pc->cap; i++) {
		if (!pc->slots[i].name)
			continue;
		for (j = addr_hash(pc->slots[i].addr, cap); slots[j].name; j = (j + 1) & (cap - 1))
			;
		slots[j] = pc->slots[i];
	}
	free(pc->slots);
	pc->slots = slots;
	pc->cap = cap;
	return 0;
}

/* Takes @name (malloc'd) whatever happens. */
static void slot_insert(struct pid_cache *pc, uint64_t addr, char *name, int rc)
{
	size_t i;

	if (pc->used >= ADDR_CACHE_MAX)
		slots_free(pc);
	if ((pc->used + 1) * 2 > pc->cap && slots_grow(pc)) {
		free(name);
		return;
	}
	for (i = addr_hash(addr, pc->cap); pc->slots[i].name; i = (i + 1) & (pc->cap - 1))
		;
	pc->slots[i].addr = addr;
	pc->slots[i].name = name;
	pc->slots[i].len = strlen(name);
	pc->slots[i].rc = rc;
	pc->used++;
}

/* ---- pids ---- */

static void pid_free(struct pid_cache *pc)
{
	slots_free(pc);
	free(pc->maps);
	free(pc->paths);
	free(pc);
}

/* The cache of @pid, moved to the front (lookups come in runs per pid). */
static struct pid_cache *pid_get(struct symbolizer *s, pid_t pid)
{
	struct pid_cache **pp, *pc;

	for (pp = &s->pids; (pc = *pp); pp = &pc->next) {
		if (pc->pid != pid)
			continue;
		*pp = pc->next;
		break;
	}
	if (!pc) {
		pc = calloc(1, sizeof(*pc));
		if (!pc)
			return NULL;
		pc->pid = pid;
	}
	pc->next = s->pids;
	s->pids = pc;
	return pc;
}

void symbolizer_forget_pid(struct symbolizer *s, pid_t pid)
{
	struct pid_cache **pp, *pc;

	for (pp = &s->pids; (pc = *pp); pp = &pc->next) {
		if (pc->pid == pid) {
			*pp = pc->next;
			pid_free(pc);
			return;
		}
	}
}

/* ---- lookup ---- */

/* The demangled name, malloc'd, counting a cap hit. */
static char *demangle_dup(struct symbolizer *s, const char *name)
{
	char buf[DEMANGLE_OUT_MAX + 1];

	s->st.demangle_capped += demangle(name, buf, sizeof(buf));
	return strdup(buf);
}

/*
 * Resolve @addr from scratch: *name gets the malloc'd demangled name on
 * success; *cache says whether the answer holds until the maps change (an
 * address outside every mapping may be a library mapped a moment later).
 */
static int resolve(struct symbolizer *s, struct pid_cache *pc, uint64_t addr, char **name,
		   bool *cache)
{
	const struct sym_file *f;
	struct mapping *m;
	const char *sym;
	uint64_t off;
	int ret = 0;

	*cache = false;
	m = map_find(pc, addr);
	if (!m) {
		ret = maps_read(s, pc);
		if (ret)
			return ret;
		m = map_find(pc, addr);
		if (!m)
			return -ENOENT;
	}
	*cache = true;
	if (!m->ino)
		return -ENOENT;
	f = sym_file_get(s, pc, m, &ret);
	if (!f)
		return ret;
	if (__builtin_add_overflow(addr - m->start, m->pgoff, &off))
		return -ENOENT;
	sym = sym_table_find(&f->tab, off);
	if (!sym)
		return -ENOENT;
	*name = demangle_dup(s, sym);
	if (!*name) {
		*cache = false;
		return -ENOMEM;
	}
	return 0;
}

int symbolizer_lookup(struct symbolizer *s, pid_t pid, uint64_t addr, char *buf, size_t len)
{
	struct pid_cache *pc;
	struct addr_slot *sl;
	char *name = NULL, hex[24];
	bool cache = false;
	int ret = -ENOMEM;

	s->st.lookups++;
	pc = pid_get(s, pid);
	if (pc) {
		sl = slot_find(pc, addr);
		if (sl) {
			/* The hot path: no allocation, no system call. */
			s->st.hits++;
			s->st.unknown += sl->rc != 0;
			text_copy_out(buf, len, sl->name, sl->len);
			return sl->rc;
		}
		ret = resolve(s, pc, addr, &name, &cache);
	}
	if (ret) {
		s->st.unknown++;
		snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
		text_copy_out(buf, len, hex, strlen(hex));
		if (cache)
			name = strdup(hex); /* a definite miss, remembered */
	} else {
		text_copy_out(buf, len, name, strlen(name));
	}
	if (name)
		slot_insert(pc, addr, name, ret); /* cache is true here */
	/* A process that is gone leaves no empty cache behind. */
	if (ret == -ESRCH && !pc->nmaps && !pc->used)
		symbolizer_forget_pid(s, pid);
	return ret;
}

/* ---- the rest ---- */

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer *s = calloc(1, sizeof(struct symbolizer));

	if (s) {
		s->max_files = SYMBOLIZER_MAX_FILES;
		s->max_bytes = SYMBOLIZER_MAX_BYTES;
	}
	return s;
}

void symbolizer_set_limits(struct symbolizer *s, size_t max_files, size_t max_bytes)
{
	if (max_files)
		s->max_files = max_files;
	if (max_bytes)
		s->max_bytes = max_bytes;
	sym_files_trim(s, NULL);
}

void symbolizer_free(struct symbolizer *s)
{
	struct pid_cache *pc;

	if (!s)
		return;
	while ((pc = s->pids)) {
		s->pids = pc->next;
		pid_free(pc);
	}
	while (s->files)
		sym_file_drop(s, s->files);
	free(s);
}

void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	*out = s->st;
}
