// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The symbolizer's file cache: per mapped file (dev:inode), its symbol table,
 * least recently used files dropped past the bounds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/proc_maps.h"
#include "proc/elf/symbolizer_internal.h"

static void file_unlink(struct symbolizer *s, struct sym_file *f)
{
	if (f->prev)
		f->prev->next = f->next;
	else
		s->files = f->next;
	if (f->next)
		f->next->prev = f->prev;
	else
		s->files_tail = f->prev;
	f->prev = f->next = NULL;
}

static void file_push_front(struct symbolizer *s, struct sym_file *f)
{
	f->prev = NULL;
	f->next = s->files;
	if (s->files)
		s->files->prev = f;
	s->files = f;
	if (!s->files_tail)
		s->files_tail = f;
}

/* Forget @f: no mapping of any pid may point to it afterwards. */
void sym_file_drop(struct symbolizer *s, struct sym_file *f)
{
	struct pid_cache *pc;
	size_t i;

	for (pc = s->pids; pc; pc = pc->next)
		for (i = 0; i < pc->nmaps; i++)
			if (pc->maps[i].file == f)
				pc->maps[i].file = NULL;
	file_unlink(s, f);
	s->nfiles--;
	s->file_bytes -= f->bytes;
	sym_table_free(&f->tab);
	free(f);
}

/* Keep the cache within its bounds, sparing @keep (just loaded). */
void sym_files_trim(struct symbolizer *s, const struct sym_file *keep)
{
	while ((s->nfiles > s->max_files || s->file_bytes > s->max_bytes) &&
	       s->files_tail && s->files_tail != keep) {
		sym_file_drop(s, s->files_tail);
		s->st.files_evicted++;
	}
}

/* A struct proc_map for proc_maps.h's open and stat. */
static struct proc_map as_proc_map(const struct pid_cache *pc, const struct mapping *m)
{
	return (struct proc_map){ .start = m->start, .end = m->end, .pgoff = m->pgoff,
				  .dev = m->dev, .ino = m->ino, .path = pc->paths + m->path,
				  .deleted = m->deleted };
}

static bool same_file(const struct sym_file *f, const struct stat *st)
{
	return f->size == st->st_size && f->mtime.tv_sec == st->st_mtim.tv_sec &&
	       f->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* A cached file with @m's dev:inode, unless that inode holds another file
 * since (a .so written, loaded, deleted, and another written: JIT caches
 * do that); that entry is dropped. */
static struct sym_file *file_find(struct symbolizer *s, struct pid_cache *pc,
				  const struct mapping *m)
{
	struct proc_map pm = as_proc_map(pc, m);
	struct sym_file *f;
	struct stat st;

	for (f = s->files; f; f = f->next)
		if (f->dev == m->dev && f->ino == m->ino)
			break;
	if (!f)
		return NULL;
	/* Unreachable (no CAP_SYS_ADMIN, deleted): dev:inode is all we know. */
	if (proc_map_stat(pc->pid, &pm, &st) || same_file(f, &st))
		return f;
	sym_file_drop(s, f);
	return NULL;
}

/* Read the symbols of the file open at @fd into @f. */
static int file_read_syms(struct symbolizer *s, struct sym_file *f, int fd)
{
	struct elf_file *ef;
	int ret;

	ret = elf_file_open_fd(fd, (uint64_t)f->size, &ef);
	if (ret)
		return ret;
	ret = sym_table_load(&f->tab, ef);
	elf_file_close(ef);
	if (ret)
		return ret;
	if (f->tab.names_cut || f->tab.dropped || f->tab.elf.tables_skipped ||
	    f->tab.elf.bad_names || f->tab.elf.syms_capped)
		s->st.syms_capped++;
	f->bytes = sizeof(*f) + sym_table_bytes(&f->tab);
	return 0;
}

/* Read the symbols of @m's file into a new cache entry. */
static struct sym_file *file_load(struct symbolizer *s, struct pid_cache *pc,
				  const struct mapping *m, int *err)
{
	struct proc_map pm = as_proc_map(pc, m);
	struct sym_file *f;
	struct stat st;
	int fd;

	fd = proc_map_open(pc->pid, &pm, &st, NULL, 0);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		*err = -ENOMEM;
		close(fd);
		return NULL;
	}
	f->dev = m->dev;
	f->ino = m->ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	f->bytes = sizeof(*f);
	f->err = file_read_syms(s, f, fd);
	close(fd);
	s->st.file_loads++;
	file_push_front(s, f);
	s->nfiles++;
	s->file_bytes += f->bytes;
	sym_files_trim(s, f);
	return f;
}

/* The symbol table of @m's file, loaded on first use; NULL with *err.  An
 * open failure may be this pid's own (gone, another root): not remembered,
 * unlike a file that is no ELF. */
struct sym_file *sym_file_get(struct symbolizer *s, struct pid_cache *pc, struct mapping *m,
			      int *err)
{
	if (!m->file)
		m->file = file_find(s, pc, m);
	if (!m->file)
		m->file = file_load(s, pc, m, err);
	if (!m->file)
		return NULL;
	if (m->file != s->files) {
		file_unlink(s, m->file);
		file_push_front(s, m->file);
	}
	if (m->file->err) {
		*err = m->file->err;
		return NULL;
	}
	return m->file;
}
