/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What `fvbpf report`, `merge` and `export` share on the command line:
 * --max-memory's share for their tables, the descriptors they hold, the
 * warnings about what a directory holds that is not believed, and the
 * option that brings back the segments that do not count.
 */
#ifndef FVBPF_CLI_OFFLINE_H
#define FVBPF_CLI_OFFLINE_H

#include <stddef.h>
#include <stdint.h>

#include "offline/manifest/manifest_read.h"

/*
 * --max-memory is the bound on the process's RSS.  Besides the tables
 * charged to it (mf_budget), the commands hold at most one JSON value being
 * parsed (JS_VALUE_MAX or TM_EVENT_MAX bytes of text with at most
 * JS_ITEMS_MAX values and JS_CONTAINERS_MAX containers: about 12 MiB of
 * json-c tree measured at worst, see tests/bats/report.bats), the zlib and
 * stdio buffers, and the allocator's slack: this reserve.
 */
#define OFFLINE_RESERVE (32ULL << 20)
#define OFFLINE_TABLES_MIN (1ULL << 20) /* below this not even a small job fits */

#define OFFLINE_UNCOUNTED_DOC \
	"Also take the segments that do not count (counted false in their metadata: begun " \
	"before the attach, ...), left out by default"

/* The tables' share of @max_memory for command @cmd: 0, or -ENOSPC with
 * the error said. */
int offline_budget(uint64_t max_memory, const char *cmd, struct mf_budget *b);
/* --max-memory's value into @out: 0, or EINVAL with the error said. */
int offline_max_memory(const char *arg, uint64_t *out);
/* One directory descriptor stays open per directory: up to @ndirs. */
void offline_raise_nofile(size_t ndirs);
/* What @m held that is read once or not believed: one warning line each. */
void offline_warn(const struct manifest *m);

#endif /* FVBPF_CLI_OFFLINE_H */
