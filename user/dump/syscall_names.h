/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* System call names, for what a thread is blocked in. */
#ifndef FVBPF_SYSCALL_NAMES_H
#define FVBPF_SYSCALL_NAMES_H

/* The name of system call @nr on this architecture, or NULL. */
const char *syscall_name(long nr);

#endif /* FVBPF_SYSCALL_NAMES_H */
