/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Walking /proc for process trees and command lines. */
#ifndef FVBPF_PROC_SCAN_H
#define FVBPF_PROC_SCAN_H

#include <stdbool.h>
#include <sys/types.h>

struct proc_entry {
	pid_t pid, ppid;
	unsigned long long start;   /* starttime, clock ticks after boot */
};

/* Every process in /proc, in no order: the count, or -errno. *@out is
 * malloc'd; processes that vanish during the walk are left out. */
int proc_scan_all(struct proc_entry **out);
/*
 * Whether @child still runs the program image it was forked with from
 * @parent (no exec since): the 16 random bytes the kernel put at AT_RANDOM
 * for the image's exec are the same in both.  An exec'd child has new ones.
 * 1 same, 0 not, -errno unknown.
 */
int proc_same_image(pid_t parent, pid_t child);
/* The PID as the process's own namespace numbers it (NSpid's last), or 0. */
pid_t proc_ns_pid(pid_t pid);
/* fvbpf runs in the initial PID namespace, where BPF's PIDs are its own. */
bool proc_self_in_init_pidns(void);
/* A hash of /proc/PID/maps: a candidate's libraries are looked at again
 * only when it changed.  0 when unreadable. */
uint64_t proc_maps_signature(pid_t pid);
/* A clock tick count of /proc's starttime from CLOCK_BOOTTIME ns. */
unsigned long long proc_ticks_from_boot_ns(unsigned long long ns);

#endif /* FVBPF_PROC_SCAN_H */
