// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* DataLoader queue messages: the _pickle functions (dl_probes.h). */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fvbpf_events.h"
#include "probes/dl_probes.h"
#include "probes/uprobe_multi.h"
#include "proc/elf/elf_symbols.h"
#include "proc/proc_maps.h"
#include "util/log.h"

#define DL_FILES_SEEN 64    /* candidate files looked at once each */

/* Where each probed pair of functions lives. */
struct dl_site {
	const char *what;
	const char *prefixes[3];  /* a candidate file's name begins so */
	const char *names[2];
	uint64_t fn[2];           /* FVBPF_DL_FN_* */
};

static const struct dl_site sites[] = {
	/* the queues: CPython's _pickle, its extension module or built in */
	{ "DataLoader queues", { "_pickle.", "libpython3", "python3" },
	  { "_pickle_loads", "_pickle_Pickler_dump" }, { FVBPF_DL_FN_LOADS, FVBPF_DL_FN_DUMP } },
	/* collate's start: default_collate's shared storage in a worker */
	{ "DataLoader collate", { "libtorch_python.", NULL, NULL },
	  { "_ZL25THPStorage_pyNewFdStorageP7_objectS0_",
	    "_ZL31THPStorage_pyNewFilenameStorageP7_objectS0_" },
	  { FVBPF_DL_FN_SHARED, FVBPF_DL_FN_SHARED } },
};
#define DL_SITES (sizeof(sites) / sizeof(sites[0]))

struct dl_probes {
	int link[DL_SITES];       /* -1: none */
	char path[PATH_MAX];      /* the queues' file */
	char unprobed[PATH_MAX];  /* a queues' candidate without the symbols */
	struct { unsigned long long dev, ino; } seen[DL_FILES_SEEN];
	unsigned int nseen;
};

struct dl_probes *dl_probes__new(void)
{
	struct dl_probes *dp = calloc(1, sizeof(*dp));
	size_t i;

	for (i = 0; dp && i < DL_SITES; i++)
		dp->link[i] = -1;
	return dp;
}

void dl_probes_detach(struct dl_probes *dp)
{
	size_t i;

	for (i = 0; dp && i < DL_SITES; i++) {
		if (dp->link[i] >= 0)
			close(dp->link[i]);
		dp->link[i] = -1;
	}
}

void dl_probes__free(struct dl_probes *dp)
{
	dl_probes_detach(dp);
	free(dp);
}

bool dl_probes_attached(const struct dl_probes *dp)
{
	return dp && dp->link[0] >= 0;
}

const char *dl_probes_file(const struct dl_probes *dp)
{
	return dp ? dp->path : ""; /* kept after the detach, for the manifest */
}

const char *dl_probes_unprobed(const struct dl_probes *dp)
{
	return dp && dp->link[0] < 0 ? dp->unprobed : "";
}

/* The site whose functions @path may hold, not attached yet; -1. */
static int candidate(const struct dl_probes *dp, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t i, k;

	base = base ? base + 1 : path;
	for (i = 0; i < DL_SITES; i++)
		for (k = 0; k < 3 && sites[i].prefixes[k]; k++)
			if (dp->link[i] < 0 &&
			    !strncmp(base, sites[i].prefixes[k], strlen(sites[i].prefixes[k])))
				return (int)i;
	return -1;
}

static bool seen(struct dl_probes *dp, const struct proc_map *m)
{
	unsigned int i;

	for (i = 0; i < dp->nseen; i++)
		if (dp->seen[i].dev == m->dev && dp->seen[i].ino == m->ino)
			return true;
	if (dp->nseen < DL_FILES_SEEN) {
		dp->seen[dp->nseen].dev = m->dev;
		dp->seen[dp->nseen].ino = m->ino;
		dp->nseen++;
	}
	return false;
}

struct scan_ctx {
	struct dl_probes *dp;
	pid_t pid;
	unsigned int slot;
	int prog_fd;
	int err;
};

static int attach_file(struct scan_ctx *c, const struct proc_map *m, const struct dl_site *site,
		       int *link)
{
	static const bool code[] = { true, true };
	struct elf_sym_info info[2];
	uint64_t offs[2], cookies[2];
	char kpath[PATH_MAX];
	struct elf_file *ef;
	struct stat st;
	int fd, n, lfd;

	fd = proc_map_open(c->pid, m, &st, kpath, sizeof(kpath));
	if (fd < 0)
		return 0;
	n = elf_file_open_fd(fd, (uint64_t)st.st_size, &ef) ? 0 : 2;
	if (n) {
		n = elf_find_symbols_code(ef, site->names, code, 2, info);
		elf_file_close(ef);
	}
	close(fd);
	if (n != 2) {
		if (site == &sites[0] && !c->dp->unprobed[0])
			snprintf(c->dp->unprobed, sizeof(c->dp->unprobed), "%s", m->path);
		return 0;
	}
	offs[0] = info[0].file_off;
	offs[1] = info[1].file_off;
	cookies[0] = site->fn[0] << 32 | c->slot;
	cookies[1] = site->fn[1] << 32 | c->slot;
	/* pid 0: every process that runs the file; the program keeps the
	 * trainer's and its children's hits only */
	lfd = uprobe_session_attach(c->prog_fd, kpath, 0, offs, cookies, 2);
	if (lfd < 0) {
		log_warn("PID %d: DataLoader workers are not traced: cannot probe %s: %s", c->pid,
			 m->path, strerror(-lfd));
		return lfd;
	}
	*link = lfd;
	if (site == &sites[0])
		snprintf(c->dp->path, sizeof(c->dp->path), "%s", m->path);
	log_info("pid %d: %s probed in %s", c->pid, site->what, m->path);
	return 0;
}

static int scan_cb(const struct proc_map *m, void *arg)
{
	struct scan_ctx *c = arg;
	int i;

	if (!proc_map_is_file(m))
		return 0;
	i = candidate(c->dp, m->path);
	if (i < 0 || seen(c->dp, m))
		return 0;
	return attach_file(c, m, &sites[i], &c->dp->link[i]);
}

int dl_probes_scan(struct dl_probes *dp, pid_t pid, unsigned int slot, int prog_fd)
{
	struct scan_ctx c = { .dp = dp, .pid = pid, .slot = slot, .prog_fd = prog_fd };
	size_t i, missing = 0;
	int ret;

	for (i = 0; dp && i < DL_SITES; i++)
		missing += dp->link[i] < 0;
	if (!missing || prog_fd < 0)
		return 0;
	ret = proc_maps_foreach(pid, scan_cb, &c);
	return ret < 0 ? ret : dp->link[0] >= 0;
}
