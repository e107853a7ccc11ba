// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "util/file/file_open.h"
#include "fvbpf_events.h"
#include "util/log.h"
#include "proc/control/control_page.h"

/* The probe functions the markers and the agent call: each must hold the
 * library's own first bytes before we put a uprobe on it. */
static const enum marker_sym probe_fns[] = {
	MARKER_BEGIN, MARKER_END, MARKER_SYNC, MARKER_CORRELATION, MARKER_GPU_BATCH,
	MARKER_AGENT_STATUS, MARKER_SCOPE_END, MARKER_PY_STACK, MARKER_BEGIN_TS, MARKER_END_TS,
};
#define PROBE_BYTES 5 /* the nop5 the kernel turns into a call */

/*
 * A killed fvbpf leaves its lock file (the lock itself died with it).
 * A file nobody holds is unlinked under our own lock, so a racing fvbpf
 * that opened it meanwhile sees its path gone and starts over.
 */
static void sweep_stale_locks(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[sizeof(((struct control_page *)0)->lock_path)];
	struct dirent *de;
	DIR *d;
	int fd;

	d = opendir(TARGET_LOCK_DIR);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "pid", 3) || !strstr(de->d_name, ".lock"))
			continue;
		if (snprintf(path, sizeof(path), TARGET_LOCK_DIR "/%s", de->d_name) >= (int)sizeof(path))
			continue;
		fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fcntl(fd, F_SETLK, &fl))
			unlink(path);
		close(fd);
	}
	closedir(d);
}

/*
 * One fvbpf per process: two would each write the other's epochs and cut
 * each other's probes.  A POSIX lock dies with its holder (SIGKILL too) and
 * names it; the file is keyed by PID and start time, so a reused PID is
 * another process.  After locking, the path must still name our file:
 * a holder unlinks it on its way out.
 */
static int lock_target(struct control_page *c)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	unsigned long long start = 0;
	struct stat fst, pst;
	char path[sizeof(c->lock_path)];
	int fd, tries, err;

	err = proc_read_stat(c->pid, NULL, &start);
	if (err)
		return err;
	if (mkdir(TARGET_LOCK_DIR, 0700) && errno != EEXIST)
		return -errno;
	sweep_stale_locks();
	snprintf(path, sizeof(path), TARGET_LOCK_DIR "/pid%d-%llu.lock", c->pid, start);
	for (tries = 0; tries < 8; tries++) {
		fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		if (fcntl(fd, F_SETLK, &fl)) {
			err = -errno;
			fl.l_type = F_WRLCK;
			if ((err == -EAGAIN || err == -EACCES) && !fcntl(fd, F_GETLK, &fl) &&
			    fl.l_type != F_UNLCK) {
				close(fd);
				log_error("PID %d is already traced by another fvbpf (PID %d): stop that "
					  "one first; two would blind each other", c->pid, fl.l_pid);
				return -EBUSY;
			}
			close(fd);
			if (err == -EAGAIN || err == -EACCES)
				continue; /* released between the two calls */
			return err;
		}
		if (!fstat(fd, &fst) && !stat(path, &pst) && fst.st_ino == pst.st_ino &&
		    fst.st_dev == pst.st_dev) {
			c->lock_fd = fd;
			memcpy(c->lock_path, path, sizeof(c->lock_path));
			return 0;
		}
		close(fd);
	}
	return -EAGAIN;
}

static void unlock_target(struct control_page *c)
{
	if (!c->lock_path[0])
		return;
	/* Unlinked while still locked: a waiter re-checks the path. */
	unlink(c->lock_path);
	close(c->lock_fd);
	c->lock_path[0] = '\0';
	c->lock_fd = -1;
}

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

int text_check_bytes(pid_t pid, uint64_t addr, const uint8_t *want, size_t len, bool repair)
{
	uint8_t have[16];
	char path[64];
	ssize_t n;
	int fd, err;

	if (len > sizeof(have))
		return -EINVAL;
	err = read_mem(pid, addr, have, len);
	if (err)
		return err;
	if (!memcmp(have, want, len))
		return 0;
	if (!repair)
		return 1;
	/* Text is read-only: /proc/PID/mem writes through that (a private copy
	 * of the page, which the fork already made). */
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pwrite(fd, want, len, (off_t)addr);
	err = n == (ssize_t)len ? 1 : n < 0 ? -errno : -EIO;
	close(fd);
	return err;
}

struct text_ctx {
	const struct marker_lib *lib;
	uint64_t off;
	uint64_t addr;
};

static int text_cb(const struct proc_map *m, void *arg)
{
	struct text_ctx *c = arg;

	if (strcmp(m->path, c->lib->path) || m->perms[2] != 'x' || c->off < m->pgoff ||
	    c->off + PROBE_BYTES > m->pgoff + (m->end - m->start))
		return 0;
	c->addr = m->start + (c->off - m->pgoff);
	return 1;
}

/* The library file's own bytes at @off, and where they are mapped. */
static int probe_site(pid_t pid, const struct marker_lib *lib, uint64_t off, uint8_t *bytes,
		      uint64_t *addr)
{
	struct text_ctx c = { .lib = lib, .off = off };
	struct stat st;
	ssize_t n;
	int fd, err;

	/* The target could map something else at that range meanwhile. */
	fd = open_regular(lib->open_path, false, FILE_OPEN_MAX_SIZE, &st);
	if (fd < 0)
		return fd;
	n = pread(fd, bytes, PROBE_BYTES, (off_t)off);
	close(fd);
	if (n != PROBE_BYTES)
		return n < 0 ? -errno : -EIO;
	err = proc_maps_foreach(pid, text_cb, &c);
	if (err)
		return err;
	if (!c.addr)
		return -ENOENT;
	*addr = c.addr;
	return 0;
}

/*
 * The parent's uprobes are the kernel's business, but a child forked while
 * they were in place keeps their patched bytes (on 6.18 a call into a
 * trampoline the child does not have) even after the parent's tracer left.
 * The child's markers never run them (its control page reads zero); before
 * we probe such a child, its code gets the library's bytes back.  In a
 * process that is no fork child, different bytes are another tracer's.
 */
static int check_probe_text(struct control_page *c, const struct marker_lib *lib)
{
	bool child = c->magic == 0;
	uint8_t want[PROBE_BYTES];
	uint64_t addr = 0;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(probe_fns) / sizeof(probe_fns[0]); i++) {
		if (!lib->syms[probe_fns[i]].found)
			continue; /* optional, and absent */
		ret = probe_site(c->pid, lib, lib->syms[probe_fns[i]].file_off, want, &addr);
		if (!ret)
			ret = text_check_bytes(c->pid, addr, want, PROBE_BYTES, child);
		if (ret < 0) {
			log_error("cannot read the fvbpf probe functions of PID %d (%s): %s",
				  c->pid, lib->path, strerror(-ret));
			return ret;
		}
		if (ret && !child) {
			log_error("the fvbpf probe functions of PID %d are patched by another tracer "
				  "(bpftrace?): stop it and retry", c->pid);
			return -EBUSY;
		}
		c->repaired += (unsigned int)ret;
	}
	return 0;
}

static int find_control_page(struct control_page *c, const struct marker_lib *lib)
{
	struct fvbpf_control ctl;
	uint64_t page = 0;
	int err;

	err = read_mem(c->pid, lib->control_addr, &page, sizeof(page));
	if (err)
		return err;
	if (!page) {
		log_error("PID %d: its fvbpf library has no control page (kernel without "
			  "MADV_WIPEONFORK, or not initialised yet): fvbpf cannot trace it safely",
			  c->pid);
		return -ENOTSUP;
	}
	err = read_mem(c->pid, page, &ctl, sizeof(ctl));
	if (err)
		return err;
	if (ctl.magic != FVBPF_CONTROL_MAGIC && ctl.magic != 0) {
		log_error("PID %d: its fvbpf library's control page is not recognised (magic %#x): "
			  "use the libfvbpf.so of this fvbpf", c->pid, ctl.magic);
		return -EPROTO;
	}
	c->page = page;
	c->magic = ctl.magic;
	return 0;
}

int control_page_open(struct control_page *c, const struct proc_target *p, bool markers)
{
	static const uint32_t magic = FVBPF_CONTROL_MAGIC;
	struct iovec local, remote;
	int err;

	memset(c, 0, sizeof(*c));
	c->pid = p->pid;
	c->lock_fd = -1;
	err = lock_target(c);
	if (err) {
		if (err != -EBUSY)
			log_error("cannot lock PID %d for tracing in " TARGET_LOCK_DIR ": %s", c->pid,
				  strerror(-err));
		return err;
	}
	if (!markers)
		return 0; /* torch or --window only: the lock is all there is */
	err = find_control_page(c, &p->marker);
	if (err == -EFAULT || err == -ESRCH) {
		log_error("cannot read the fvbpf control page of PID %d: %s", c->pid, strerror(-err));
		goto fail;
	}
	if (err)
		goto fail;
	err = check_probe_text(c, &p->marker);
	if (err)
		goto fail;
	if (c->magic == 0) {
		/* A fork child, now clean: its agent may call the probes again. */
		local = (struct iovec){ (void *)&magic, sizeof(magic) };
		remote = (struct iovec){ (void *)(uintptr_t)(c->page + offsetof(struct fvbpf_control, magic)),
					 sizeof(magic) };
		if (process_vm_writev(c->pid, &local, 1, &remote, 1, 0) != sizeof(magic)) {
			err = -errno;
			log_error("cannot write the fvbpf control page of PID %d: %s", c->pid,
				  strerror(-err));
			goto fail;
		}
		log_info("PID %d was forked from a process with fvbpf markers%s", c->pid,
			 c->repaired ? "; its stale probe patches were undone" : "");
	}
	return 0;
fail:
	unlock_target(c);
	return err;
}

int control_page_set_epoch(const struct control_page *c, uint32_t epoch)
{
	return proc_write_u32(c->pid, c->page + offsetof(struct fvbpf_control, epoch), epoch);
}

int control_page_set_marker_ts(const struct control_page *c, uint32_t epoch)
{
	return proc_write_u32(c->pid, c->page + offsetof(struct fvbpf_control, marker_ts_epoch), epoch);
}

uint32_t control_page_fresh_epoch(const struct control_page *c)
{
	struct timespec ts;
	uint32_t cur = 0, e;

	/* Microseconds, our PID mixed in: distinct from any epoch a thread of
	 * the target (or of the parent it was forked from) synced under. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	e = ((uint32_t)ts.tv_sec * 1000000u + (uint32_t)(ts.tv_nsec / 1000)) ^
	    ((uint32_t)getpid() << 21);
	e |= 1;
	if (!proc_read_u32(c->pid, c->page + offsetof(struct fvbpf_control, epoch), &cur) &&
	    (e == cur || e == cur + 1 || e + 1 == cur))
		e += 4;
	return e;
}

void control_page_close(struct control_page *c)
{
	unlock_target(c);
}

struct control_page *control_page__new(void)
{
	struct control_page *c = calloc(1, sizeof(*c));

	if (c)
		c->lock_fd = -1;
	return c;
}

void control_page__free(struct control_page *c)
{
	if (!c)
		return;
	control_page_close(c);
	free(c);
}
