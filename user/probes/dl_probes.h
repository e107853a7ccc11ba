/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * DataLoader workers (issue 38): a trainer's _pickle functions probed
 * for its DataLoader queues' messages (bpf/dataloader.bpf.c).  One session
 * link on the mapped file with no PID filter: the trainer's workers,
 * forked before or after the attach, run the same file and are never
 * attached to one by one (a fresh worker's first batch would be lost).
 * The program returns at once in every process that is not the slot's
 * trainer or one it forked.
 */
#ifndef FVBPF_DL_PROBES_H
#define FVBPF_DL_PROBES_H

#include <stdbool.h>
#include <sys/types.h>

struct dl_probes;

struct dl_probes *dl_probes__new(void);
/* Detaches and frees; NULL is fine. */
void dl_probes__free(struct dl_probes *dp);

/* Look at @pid's mappings for CPython's _pickle functions (its extension
 * module, or an interpreter that has it built in, with a symbol table)
 * and attach once found: 1 when attached now, 0 otherwise, -errno. */
int dl_probes_scan(struct dl_probes *dp, pid_t pid, unsigned int slot, int prog_fd);
/* Close the link. */
void dl_probes_detach(struct dl_probes *dp);
/* Attached now; the queues' file it was attached in ("" never). */
bool dl_probes_attached(const struct dl_probes *dp);
const char *dl_probes_file(const struct dl_probes *dp);
/* A file that may hold _pickle but has no symbol table for it (a
 * stripped interpreter), "" none: why the queues could not be probed. */
const char *dl_probes_unprobed(const struct dl_probes *dp);

#endif /* FVBPF_DL_PROBES_H */
