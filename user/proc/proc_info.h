/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* What fvbpf learns about a target process from /proc. */
#ifndef FVBPF_PROC_INFO_H
#define FVBPF_PROC_INFO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/elf/elf_symbols.h"
#include "proc/inject/inject.h"
#include "proc/proc_maps.h"
#include "proc/proc_read.h"
#include "proc/proc_rank.h"
#include "model/marker_syms.h"

struct marker_lib {
	char path[PATH_MAX];      /* as the target maps it */
	uint64_t control_addr;    /* the fvbpf_control pointer in the target's memory */
	char open_path[PATH_MAX]; /* the same file for the kernel: /proc/PID/map_files/... */
	struct elf_sym_info syms[MARKER_NSYMS];
};

struct tid_name {
	uint32_t tid;
	char name[32];
};

/* A process without a rank in its environment traced beside others (a
 * launcher, a shell): it never takes rank 0's name. */
#define PROC_NO_RANK (-1)

struct proc_target {
	pid_t pid;
	int rank;                 /* from its environment (proc_rank.h), else 0, or
				   * PROC_NO_RANK: beside other targets, named by PID */
	bool rank_from_env;
	bool name_by_pid;         /* two targets share a rank: name files by pid */
	unsigned int restart;     /* earlier processes of this attach had this rank */
	pid_t ppid;
	pid_t ns_pid;             /* the PID inside its own PID namespace */
	struct rank_info ri;
	char comm[32];
	char cmdline[1024];
	struct marker_lib marker;
	struct inject_info inject;  /* --inject: what became of it */
	/* thread names, filled lazily by the writer thread */
	struct tid_name *threads;
	size_t nthreads;
};

/* First mapped ELF that defines the marker symbols: 0, -ENOENT, -errno. */
int proc_find_marker_lib(pid_t pid, struct marker_lib *lib);
int proc_target_init(struct proc_target *t, pid_t pid);
/* Read and write a 32-bit variable of the target. */
int proc_read_u32(pid_t pid, uint64_t addr, uint32_t *val);
int proc_write_u32(pid_t pid, uint64_t addr, uint32_t val);
/* The library's constructor has set up its control page (the
 * fvbpf_control pointer is set): it can be attached to. */
bool proc_control_ready(pid_t pid, const struct marker_lib *lib);
const char *proc_thread_name(struct proc_target *t, uint32_t tid);
void proc_target_free(struct proc_target *t);

/* A target's /proc facts, zeroed until proc_target_init() (NULL: out of
 * memory); proc_target__free() frees what it holds too (NULL is fine). */
struct proc_target *proc_target__new(void);
void proc_target__free(struct proc_target *t);

#endif /* FVBPF_PROC_INFO_H */
