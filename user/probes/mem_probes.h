/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --profile-memory probes of one traced process: when it maps libc10.so,
 * one session-uprobe link over the three allocator functions
 * (include/fvbpf_mem.h), entry only.  Looked for again with the CUDA
 * libraries, so a torch imported later is picked up.
 */
#ifndef FVBPF_MEM_PROBES_H
#define FVBPF_MEM_PROBES_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct mem_probes {
	pid_t pid;
	unsigned int slot;
	bool tried;             /* libc10.so found: tried once, whatever came of it */
	int link;               /* the uprobe_multi link, -1 none */
	unsigned int nprobed;   /* functions probed (of 3) */
	char path[PATH_MAX];
};

void mem_probes_init(struct mem_probes *mp, pid_t pid, unsigned int slot);
/* Attach if libc10.so is newly mapped: 1 attached, 0 nothing new, -errno. */
int mem_probes_scan(struct mem_probes *mp, int prog_fd);
void mem_probes_detach(struct mem_probes *mp);
/* Is @path a libc10.so? */
bool mem_is_libc10(const char *path);

/* A target's allocator probes, holding no link until mem_probes_init()
 * with its process (NULL: out of memory); mem_probes__free() detaches
 * them (NULL is fine). */
struct mem_probes *mem_probes__new(void);
void mem_probes__free(struct mem_probes *mp);

#endif /* FVBPF_MEM_PROBES_H */
