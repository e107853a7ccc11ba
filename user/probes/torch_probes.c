// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/serial_arm.h"
#include "proc/proc_info.h"
#include "proc/proc_maps.h"
#include "probes/torch_ops.h"
#include "probes/torch_plans.h"
#include "probes/torch_probes.h"
#include "probes/uprobe_multi.h"

#include "fvbpf_events.h"

void torch_table_init(struct torch_table *tt, struct name_table *names)
{
	memset(tt, 0, sizeof(*tt));
	tt->names = names;
}

#define TORCH_FILE_MEMO_MAX 4 /* libtorch builds in one session */

struct torch_file_memo {
	struct {
		struct stat st;
		struct torch_file tf;
	} files[TORCH_FILE_MEMO_MAX];
	size_t n;
};

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The file open at @fd read into @tf: a copy of what an earlier process's
 * read of the same file found (discover_ns then the copy's time), else read
 * and kept for the next. */
static int discover_memo(struct torch_table *tt, int fd, const struct stat *st,
			 struct torch_file *tf)
{
	struct torch_file_memo *m = tt->memo;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	size_t i;
	int err;

	for (i = 0; m && i < m->n && !serial_arm(); i++)
		if (same_file(&m->files[i].st, st)) {
			err = torch_file_copy(&m->files[i].tf, tf);
			tf->discover_ns = clock_ns(CLOCK_MONOTONIC) - t0;
			return err;
		}
	err = torch_file_discover_fd(fd, st, tf);
	if (err)
		return err;
	if (!m && !(m = tt->memo = calloc(1, sizeof(*m))))
		return 0;
	if (m->n < TORCH_FILE_MEMO_MAX && !torch_file_copy(tf, &m->files[m->n].tf))
		m->files[m->n++].st = *st;
	return 0;
}

void torch_table_free(struct torch_table *tt)
{
	size_t i;

	for (i = 0; tt->memo && i < tt->memo->n; i++)
		torch_file_free(&tt->memo->files[i].tf);
	free(tt->memo);
	free(tt->ids);
	memset(tt, 0, sizeof(*tt));
}

const struct torch_id *torch_table_get(const struct torch_table *tt, uint32_t id)
{
	return id < tt->n ? &tt->ids[id] : NULL;
}

void torch_probes_init(struct torch_probes *tp, pid_t pid, unsigned int slot)
{
	memset(tp, 0, sizeof(*tp));
	tp->pid = pid;
	tp->slot = slot;
	tp->links[0] = tp->links[1] = tp->links[2] = -1;
	tp->vtables_fd = -1;
	tp->plans_fd = -1;
}

struct find_ctx {
	struct proc_map m;      /* the mapping found, its path in path */
	char path[PATH_MAX];
	bool found;
};

static int find_cb(const struct proc_map *m, void *arg)
{
	struct find_ctx *c = arg;

	if (!proc_map_is_file(m) || !torch_is_libtorch_cpu(m->path))
		return 0;
	c->m = *m;
	snprintf(c->path, sizeof(c->path), "%s", m->path);
	c->m.path = c->path;
	c->found = true;
	return 1;
}

static bool find_libtorch(pid_t pid, struct find_ctx *c)
{
	memset(c, 0, sizeof(*c));
	proc_maps_foreach(pid, find_cb, c);
	return c->found;
}

bool torch_probes_mapped(pid_t pid, char *path, size_t len)
{
	struct find_ctx *c = malloc(sizeof(*c));
	bool found;

	if (!c)
		return false;
	found = find_libtorch(pid, c);
	if (found)
		snprintf(path, len, "%s", c->path);
	free(c);
	return found;
}

/* The file's probes into the session table: cookies of ids base.. */
int torch_table_add(struct torch_table *tt, const char *name, uint8_t kind, uint32_t *idx)
{
	struct torch_id *id;

	if (grow_one(&tt->ids, tt->n, &tt->cap, sizeof(*id), 4096))
		return -ENOMEM;
	id = &tt->ids[tt->n];
	memset(id, 0, sizeof(*id));
	id->kind = kind;
	id->name = name_table_intern(tt->names, name);
	if (!id->name)
		return -ENOMEM;
	*idx = (uint32_t)tt->n++;
	return 0;
}

static int add_ids(struct torch_table *tt, const struct torch_file *tf, uint32_t *base)
{
	struct torch_id *id;
	size_t i;

	*base = (uint32_t)tt->n;
	for (i = 0; i < tf->n; i++) {
		if (grow_one(&tt->ids, tt->n, &tt->cap, sizeof(*id), 4096))
			return -ENOMEM;
		id = &tt->ids[tt->n++];
		id->kind = tf->syms[i].kind;
		id->name = name_table_intern(tt->names, tf->syms[i].name);
		id->overload = tf->syms[i].overload[0] ?
			name_table_intern(tt->names, tf->syms[i].overload) : 0;
		if (!id->name)
			return -ENOMEM;
	}
	return 0;
}

static int attach_all(struct torch_probes *tp, const struct torch_file *tf, const char *open_path,
		      uint32_t base, const struct torch_progs *pr)
{
	uint64_t *offs, *cookies, slot = (uint64_t)tp->slot << FVBPF_COOKIE_SLOT_SHIFT;
	size_t i;
	int lfd;

	offs = calloc(tf->n, sizeof(*offs));
	cookies = calloc(tf->n, sizeof(*cookies));
	if (!offs || !cookies) {
		free(offs);
		free(cookies);
		return -ENOMEM;
	}
	for (i = 0; i < tf->n; i++) {
		offs[i] = tf->syms[i].off;
		cookies[i] = slot | (base + i);
	}
	lfd = tp->ops_via_callbacks ? 0 :
	      uprobe_session_attach(pr->call_fd, open_path, tp->pid, offs, cookies, tf->n);
	free(offs);
	free(cookies);
	if (lfd < 0)
		return lfd;
	if (!tp->ops_via_callbacks)
		tp->links[0] = lfd;
	if (tf->scope_enter_off && tf->scope_end_off) {
		lfd = uprobe_session_attach(pr->enter_fd, open_path, tp->pid, &tf->scope_enter_off,
					    &slot, 1);
		if (lfd >= 0)
			tp->links[1] = lfd;
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = slot);
		/* the fast path's scope ends come from the library's probe */
		if (!tp->ops_via_callbacks)
			tp->end_link = bpf_program__attach_uprobe_opts(pr->end_prog, tp->pid,
								       open_path, tf->scope_end_off,
								       &uo);
		if (!tp->end_link && !tp->ops_via_callbacks)
			lfd = -errno;
		tp->scopes = tp->links[1] >= 0 && (tp->end_link || tp->ops_via_callbacks);
		if (!tp->scopes)
			log_warn("pid %d: record_function scopes not probed (%s)", tp->pid,
				 strerror(lfd < 0 ? -lfd : EINVAL));
	}
	return 0;
}

/* One node class: its vtable in this process -> a torch id of its name. */
static int put_vtable(struct torch_probes *tp, struct torch_table *tt, const struct torch_eval *e,
		      uint64_t base)
{
	struct fvbpf_vtable_key key = { .tgid = (uint32_t)tp->pid, .vptr = base + e->va };
	struct torch_id *id;
	uint32_t idx;

	if (grow_one(&tt->ids, tt->n, &tt->cap, sizeof(*id), 4096))
		return -ENOMEM;
	id = &tt->ids[tt->n];
	memset(id, 0, sizeof(*id));
	id->kind = TORCH_NODE;
	id->name = name_table_intern(tt->names, e->name);
	if (!id->name)
		return -ENOMEM;
	idx = (uint32_t)tt->n;
	if (bpf_map_update_elem(tp->vtables_fd, &key, &idx, BPF_ANY))
		return -errno;
	tt->n++;
	tp->vptrs[tp->nvptrs++] = key.vptr;
	return 0;
}

/*
 * Engine::evaluate_function, named by the node's vtable: the vtables go in
 * the BPF map at the addresses this process has them (the mapping of file
 * offset 0 is the load base when the first PT_LOAD is at vaddr 0), then the
 * one probe.  Optional: a failure costs these events only, and says so.
 */
static void attach_eval(struct torch_probes *tp, struct torch_table *tt, const struct torch_file *tf,
			const char *kpath, const struct torch_progs *pr, const struct proc_map *m)
{
	uint64_t slot = (uint64_t)tp->slot << FVBPF_COOKIE_SLOT_SHIFT;
	const char *why = NULL;
	size_t i;
	int err = 0, lfd;

	if (!tf->eval_off || !tf->nevals || pr->vtables_fd < 0)
		why = "no Engine::evaluate_function or node vtables in the file";
	else if (m->pgoff || !tf->vaddr_is_off)
		why = "the load base is not where this reader expects it";
	if (why) {
		log_warn("pid %d: no autograd::engine::evaluate_function events: %s", tp->pid, why);
		return;
	}
	tp->vtables_fd = pr->vtables_fd;
	tp->vptrs = calloc(tf->nevals, sizeof(*tp->vptrs));
	if (!tp->vptrs)
		err = -ENOMEM;
	for (i = 0; !err && i < tf->nevals; i++)
		err = put_vtable(tp, tt, &tf->evals[i], m->start);
	lfd = err ? err : uprobe_session_attach(pr->eval_fd, kpath, tp->pid, &tf->eval_off, &slot, 1);
	if (lfd < 0) {
		log_warn("pid %d: no autograd::engine::evaluate_function events: %s", tp->pid,
			 strerror(-lfd));
		return;
	}
	tp->links[2] = lfd;
	tp->eval_classes = (unsigned int)tp->nvptrs;
}

/* Symbols of the mapped file (never what its path holds now), attached by
 * the path the kernel reaches that same inode by. */
static int discover_attach(struct torch_probes *tp, struct torch_table *tt,
			   const struct torch_progs *pr, const struct find_ctx *c)
{
	char kpath[PATH_MAX + 64];
	struct torch_file tf;
	struct stat st;
	uint64_t t0;
	uint32_t base;
	int fd, err;

	fd = proc_map_open(tp->pid, &c->m, &st, kpath, sizeof(kpath));
	if (fd < 0) {
		log_warn("pid %d: cannot open the mapped %s%s: %s; no torch operators", tp->pid,
			 c->path, c->m.deleted ? " (deleted)" : "", strerror(-fd));
		return fd;
	}
	err = discover_memo(tt, fd, &st, &tf);
	if (err)
		close(fd);
	if (err) {
		log_warn("pid %d: cannot read %s: %s; no torch operators", tp->pid, c->path,
			 strerror(-err));
		return err;
	}
	tp->discover_ns = tf.discover_ns;
	tp->nops = (unsigned int)tf.nops;
	tp->nnodes = (unsigned int)tf.nnodes;
	if (tf.unnamed || tf.named_prefix)
		log_warn("pid %d: %zu torch operators named by prefix, %zu by their struct name "
			 "(no .symtab in %s)", tp->pid, tf.named_prefix, tf.unnamed, c->path);
	err = add_ids(tt, &tf, &base);
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (!err && tf.n)
		err = attach_all(tp, &tf, kpath, base, pr);
	if (!err && !tp->ops_via_callbacks)
		attach_eval(tp, tt, &tf, kpath, pr, &c->m);
	tp->attach_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	snprintf(tp->path, sizeof(tp->path), "%s", c->path);
	/* --record-shapes: takes tf over; ops seen before their plans are unknown */
	if (!err && pr->plans_fd >= 0)
		torch_plans_start(tp, tt, &tf, base, fd, &st, pr->plans_fd); /* says why not */
	close(fd);
	torch_file_free(&tf);
	if (err)
		log_warn("pid %d: cannot attach torch operator probes: %s", tp->pid, strerror(-err));
	return err;
}

int torch_probes_scan(struct torch_probes *tp, struct torch_table *tt, const struct torch_progs *pr)
{
	struct find_ctx *c;
	int err;

	if (tp->found)
		return 0;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (!find_libtorch(tp->pid, c)) {
		free(c);
		return 0;
	}
	tp->found = true; /* tried once, whatever comes of it */
	snprintf(tp->path, sizeof(tp->path), "%s", c->path);
	err = discover_attach(tp, tt, pr, c);
	free(c);
	if (err)
		return err;
	if (tp->ops_via_callbacks) {
		log_info("pid %d: torch scopes probed in %s (read %.0f ms, attach %.0f ms); operators "
			 "and nodes come from PyTorch's callbacks", tp->pid, tp->path,
			 tp->discover_ns / 1e6, tp->attach_ns / 1e6);
		return 1;
	}
	log_info("pid %d: %u torch operators, %u autograd nodes%s probed in %s, evaluate_function "
		 "with %zu node classes (read %.0f ms, attach %.0f ms)", tp->pid, tp->nops, tp->nnodes,
		 tp->scopes ? " and scopes" : "", tp->path, (size_t)tp->eval_classes,
		 tp->discover_ns / 1e6, tp->attach_ns / 1e6);
	return 1;
}

/* Library base names worth listing: torch's and NVIDIA's runtime pieces. */
static bool interesting(const char *path)
{
	static const char *const prefixes[] = {
		"libtorch", "libc10", "libcudart", "libcupti", "libnccl", "libcuda.so",
		"libnvToolsExt", "libnvtx", "libcublas", "libcudnn",
	};
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static int libs_cb(const struct proc_map *m, void *arg)
{
	struct torch_probes *tp = arg;
	char **v;
	size_t i;

	if (!proc_map_is_file(m) || !interesting(m->path))
		return 0;
	for (i = 0; i < tp->nlibs; i++)
		if (!strcmp(tp->libs[i], m->path))
			return 0;
	if (tp->nlibs == TORCH_LIBS_MAX)
		return 1; /* the manifest says the list is full */
	v = realloc(tp->libs, (tp->nlibs + 1) * sizeof(*v));
	if (!v)
		return 1;
	tp->libs = v;
	tp->libs[tp->nlibs] = strdup(m->path);
	if (tp->libs[tp->nlibs])
		tp->nlibs++;
	return 0;
}

void torch_probes_note_libs(struct torch_probes *tp)
{
	proc_maps_foreach(tp->pid, libs_cb, tp);
}

void torch_probes_free(struct torch_probes *tp)
{
	size_t i;

	torch_probes_detach(tp);
	for (i = 0; i < tp->nlibs; i++)
		free(tp->libs[i]);
	free(tp->libs);
	tp->libs = NULL;
	tp->nlibs = 0;
}

/* The map is the session's: this process's vtables leave with its probes. */
static void forget_vtables(struct torch_probes *tp)
{
	struct fvbpf_vtable_key key = { .tgid = (uint32_t)tp->pid };
	size_t i;

	for (i = 0; i < tp->nvptrs; i++) {
		key.vptr = tp->vptrs[i];
		bpf_map_delete_elem(tp->vtables_fd, &key);
	}
	free(tp->vptrs);
	tp->vptrs = NULL;
	tp->nvptrs = 0;
}

void torch_probes_detach(struct torch_probes *tp)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (tp->links[i] >= 0)
			close(tp->links[i]);
		tp->links[i] = -1;
	}
	forget_vtables(tp);
	torch_plans_remove(tp);
	bpf_link__destroy(tp->end_link);
	tp->end_link = NULL;
}

struct torch_probes *torch_probes__new(void)
{
	struct torch_probes *tp = malloc(sizeof(*tp));

	if (tp)
		torch_probes_init(tp, 0, 0); /* no links, no map fds */
	return tp;
}

void torch_probes__free(struct torch_probes *tp)
{
	if (!tp)
		return;
	torch_probes_free(tp);
	free(tp);
}

struct torch_table *torch_table__new(void)
{
	return calloc(1, sizeof(struct torch_table));
}

void torch_table__free(struct torch_table *tt)
{
	if (!tt)
		return;
	torch_table_free(tt);
	free(tt);
}
