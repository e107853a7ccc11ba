/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Temporary files left in an output directory by an fvbpf that was killed. */
#ifndef FVBPF_STALE_TMP_H
#define FVBPF_STALE_TMP_H

#include <sys/types.h>

/* The PID in the name of one of fvbpf's temporary files, else 0. */
pid_t stale_tmp_owner(const char *name);
/* Remove those of @dir whose fvbpf no longer runs, and say so: how many
 * went, or -errno when @dir cannot be read. */
int stale_tmp_clean(const char *dir);

#endif /* FVBPF_STALE_TMP_H */
