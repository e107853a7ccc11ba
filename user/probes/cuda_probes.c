// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probes/cuda_api.h"
#include "probes/cuda_probes.h"
#include "proc/elf/elf_symbols.h"
#include "util/file/file_memo.h"
#include "util/log.h"
#include "proc/proc_info.h"
#include "probes/uprobe_multi.h"

struct found {
	uint64_t offsets[FVBPF_MAX_APIS];
	uint64_t cookies[FVBPF_MAX_APIS];
	size_t n;
	unsigned int slot;
};

void cuda_probes_init(struct cuda_probes *cp, pid_t pid, unsigned int slot, int prog_fd)
{
	memset(cp, 0, sizeof(*cp));
	cp->pid = pid;
	cp->slot = slot;
	cp->prog_fd = prog_fd;
}

static bool probed_name(const char *name, void *ctx)
{
	(void)ctx;
	/* cheap filter first: cu*, cuda*, nccl*, __cuda* */
	return (name[0] == 'c' || name[0] == 'n' || name[0] == '_') && cuda_api_find(name) >= 0;
}

/* Keep one api id per offset: aliases and the .dynsym/.symtab twins of a
 * function must not record a call twice. */
static int on_function(const char *name, uint64_t off, uint64_t size, void *ctx)
{
	struct found *fd = ctx;
	size_t i;
	int id;

	(void)size;
	id = cuda_api_find(name);
	if (id < 0)
		return 0;
	for (i = 0; i < fd->n; i++) {
		if (fd->offsets[i] != off)
			continue;
		if (cuda_api_cookie((unsigned int)id, fd->slot) < fd->cookies[i])
			fd->cookies[i] = cuda_api_cookie((unsigned int)id, fd->slot);
		return 0;
	}
	if (fd->n == FVBPF_MAX_APIS)
		return 1;
	fd->offsets[fd->n] = off;
	fd->cookies[fd->n] = cuda_api_cookie((unsigned int)id, fd->slot);
	fd->n++;
	return 0;
}

static int keep_link(struct cuda_probes *cp, int lfd)
{
	int *l = realloc(cp->links, (cp->nlinks + 1) * sizeof(*l));

	if (!l) {
		close(lfd);
		return -ENOMEM;
	}
	cp->links = l;
	cp->links[cp->nlinks++] = lfd;
	return 0;
}

/* One link for the file; if the kernel refuses it, one per function, so
 * that a single bad offset costs only itself. */
static void attach_file(struct cuda_probes *cp, struct cuda_file *f, const char *open_path,
			const struct found *fd)
{
	size_t i;
	int lfd;

	f->nsyms = (unsigned int)fd->n;
	lfd = uprobe_session_attach(cp->prog_fd, open_path, cp->pid, fd->offsets, fd->cookies, fd->n);
	if (lfd >= 0 && !keep_link(cp, lfd)) {
		cp->attached += f->nsyms;
		return;
	}
	log_debug("pid %d: one link for %s failed (%s); attaching one by one", cp->pid, f->path,
		  strerror(lfd < 0 ? -lfd : ENOMEM));
	for (i = 0; i < fd->n; i++) {
		lfd = uprobe_session_attach(cp->prog_fd, open_path, cp->pid, &fd->offsets[i],
					    &fd->cookies[i], 1);
		if (lfd < 0 || keep_link(cp, lfd)) {
			f->failed++;
			log_debug("pid %d: cannot attach %s in %s: %s", cp->pid,
				  cuda_api_symbol((unsigned int)(fd->cookies[i] & 0xffffffffu)), f->path,
				  strerror(lfd < 0 ? -lfd : ENOMEM));
		}
	}
	cp->attached += f->nsyms - f->failed;
	cp->failed += f->failed;
}

static bool known(const struct cuda_probes *cp, unsigned long long dev, unsigned long long ino)
{
	size_t i;

	for (i = 0; i < cp->nfiles; i++)
		if (cp->files[i].dev == dev && cp->files[i].ino == ino)
			return true;
	return false;
}

static int add_file(struct cuda_probes *cp, const struct proc_map *m, struct cuda_file **out)
{
	struct cuda_file *f = realloc(cp->files, (cp->nfiles + 1) * sizeof(*f));

	if (!f)
		return -ENOMEM;
	cp->files = f;
	f = &cp->files[cp->nfiles++];
	memset(f, 0, sizeof(*f));
	f->dev = m->dev;
	f->ino = m->ino;
	snprintf(f->path, sizeof(f->path), "%s", m->path);
	*out = f;
	return 0;
}

/* A file's functions as the memo keeps them: found for slot 0 (a slot is
 * the cookie's high bits, so the choice between aliases is the same). */
struct found_memo {
	uint32_t n;
	struct {
		uint64_t offset, cookie;
	} f[FVBPF_MAX_APIS];
};

static void memo_put(const struct stat *st, const struct found *found)
{
	struct found_memo m;
	size_t i;

	m.n = (uint32_t)found->n;
	for (i = 0; i < found->n; i++) {
		m.f[i].offset = found->offsets[i];
		m.f[i].cookie = found->cookies[i];
	}
	file_memo_put(FILE_MEMO_CUDA, st, &m, offsetof(struct found_memo, f) + found->n * sizeof(m.f[0]));
}

static bool memo_get(const struct stat *st, struct found *found, unsigned int slot)
{
	struct found_memo m;
	long len = file_memo_get(FILE_MEMO_CUDA, st, &m, sizeof(m));
	size_t i;

	if (len < (long)offsetof(struct found_memo, f) || m.n > FVBPF_MAX_APIS ||
	    (size_t)len != offsetof(struct found_memo, f) + m.n * sizeof(m.f[0]))
		return false;
	found->n = m.n;
	for (i = 0; i < m.n; i++) {
		found->offsets[i] = m.f[i].offset;
		found->cookies[i] = m.f[i].cookie | ((uint64_t)slot << FVBPF_COOKIE_SLOT_SHIFT);
	}
	return true;
}

/* The probed functions of the file open at @fd: its symbol tables are read
 * once a session (the ranks of a job map the same files). */
static int find_functions(int fd, const struct stat *st, struct found *found)
{
	unsigned int slot = found->slot;
	struct elf_file *ef;
	int ret;

	if (memo_get(st, found, slot))
		return 0;
	ret = elf_file_open_fd(fd, (uint64_t)st->st_size, &ef);
	if (ret)
		return ret;
	found->slot = 0;
	ret = elf_for_each_function(ef, probed_name, on_function, found);
	elf_file_close(ef);
	if (!ret)
		memo_put(st, found);
	found->slot = slot;
	for (size_t i = 0; i < found->n; i++)
		found->cookies[i] |= (uint64_t)slot << FVBPF_COOKIE_SLOT_SHIFT;
	return ret;
}

static unsigned int gloo_count(const struct found *found)
{
	const struct api_row *r;
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < found->n; i++) {
		r = cuda_api_row((unsigned int)(found->cookies[i] & 0xffffffffu));
		n += r && r->layer == LAYER_GLOO;
	}
	return n;
}

static int examine(struct cuda_probes *cp, const struct proc_map *m)
{
	char kpath[PATH_MAX];
	struct cuda_file *f;
	struct found *found;
	unsigned int before = cp->attached, gloo_before = cp->gloo;
	struct stat st;
	int fd, ret;

	ret = add_file(cp, m, &f);
	if (ret)
		return ret;
	/* The mapped file itself (a device, a FIFO or a file swapped in
	 * since is never read); the kernel attaches to it by the same way. */
	fd = proc_map_open(cp->pid, m, &st, kpath, sizeof(kpath));
	if (fd < 0)
		return 0;
	found = calloc(1, sizeof(*found));
	if (!found) {
		close(fd);
		return -ENOMEM;
	}
	found->slot = cp->slot;
	if (find_functions(fd, &st, found) == 0 && found->n) {
		unsigned int gloo = gloo_count(found);

		attach_file(cp, f, kpath, found);
		/* gloo's are not CUDA: a CPU job's libtorch_cpu says nothing of CUDA */
		gloo = gloo < cp->attached - before ? gloo : cp->attached - before;
		cp->attached -= gloo;
		cp->gloo += gloo;
		if (cp->attached > before)
			log_info("pid %d: %u CUDA/NCCL functions probed in %s%s", cp->pid,
				 cp->attached - before, f->path,
				 cp->failed ? " (some failed: -v lists them)" : "");
		if (gloo)
			log_info("pid %d: %u gloo backend functions probed in %s (collectives)", cp->pid,
				 gloo, f->path);
	}
	close(fd);
	free(found);
	return (int)(cp->attached - before + cp->gloo - gloo_before);
}

struct scan_ctx {
	struct cuda_probes *cp;
	int added;
};

static int scan_cb(const struct proc_map *m, void *arg)
{
	struct scan_ctx *c = arg;
	int ret;

	if (!proc_map_is_file(m) || known(c->cp, m->dev, m->ino))
		return 0;
	ret = examine(c->cp, m);
	if (ret > 0)
		c->added += ret;
	return ret == -ENOMEM ? ret : 0;
}

int cuda_probes_scan(struct cuda_probes *cp)
{
	struct scan_ctx c = { .cp = cp };
	int ret = proc_maps_foreach(cp->pid, scan_cb, &c);

	return ret ? ret : c.added;
}

void cuda_probes_detach(struct cuda_probes *cp)
{
	size_t i;

	for (i = 0; i < cp->nlinks; i++)
		close(cp->links[i]);
	free(cp->links);
	cp->links = NULL;
	cp->nlinks = 0;
}

void cuda_probes_free(struct cuda_probes *cp)
{
	cuda_probes_detach(cp);
	free(cp->files);
	cp->files = NULL;
	cp->nfiles = 0;
}

struct cuda_probes *cuda_probes__new(void)
{
	return calloc(1, sizeof(struct cuda_probes));
}

void cuda_probes__free(struct cuda_probes *cp)
{
	if (!cp)
		return;
	cuda_probes_free(cp);
	free(cp);
}
