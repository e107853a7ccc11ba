/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Python multiprocessing's own processes, told by their command line:
 * a child started by the spawn method (`python -c 'from
 * multiprocessing.spawn import spawn_main; spawn_main(...)'
 * --multiprocessing-fork`) and the forkserver (`python -c 'from
 * multiprocessing.forkserver import main; main(...)'`), whose children
 * are the processes the forkserver method starts.
 */
#ifndef FVBPF_PROC_MP_H
#define FVBPF_PROC_MP_H

#include <sys/types.h>

enum proc_mp_kind {
	PROC_MP_NONE = 0,       /* neither, or gone */
	PROC_MP_SPAWNED,        /* started by the spawn method */
	PROC_MP_FORKSERVER,     /* the forkserver */
};

enum proc_mp_kind proc_mp_kind(pid_t pid);
/* The kind a command line (arguments joined by spaces) says. */
enum proc_mp_kind proc_mp_kind_of(const char *cmdline);

#endif /* FVBPF_PROC_MP_H */
