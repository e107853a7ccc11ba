/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Where a uprobe on a function goes: past any leading 5-byte NOPs, which
 * the kernel would otherwise optimise into a jump over the probe.  A fact
 * about the target's code bytes, so proc/ owns it: elf_file.c checks that
 * a symbol's site lies inside its code, probes/uprobe_multi.c places the
 * probe there, and both read the bytes the same way.
 */
#ifndef FVBPF_UPROBE_SITE_H
#define FVBPF_UPROBE_SITE_H

#include <stddef.h>
#include <stdint.h>

/* The most bytes of leading 5-byte NOPs a probe site steps over. */
#define UPROBE_SITE_MAX_SKIP 20

/* Where a probe on the function at file offset @off of @fd goes: past any
 * leading 5-byte NOPs (never an optimisable site). */
uint64_t uprobe_site_offset(int fd, uint64_t off);
/* The same decision on the @len bytes at @code (those of the file from the
 * site on, up to UPROBE_SITE_MAX_SKIP): how many bytes it steps over. */
size_t uprobe_site_skip(const uint8_t *code, size_t len);

#endif /* FVBPF_UPROBE_SITE_H */
