// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "proc/elf/uprobe_site.h"

size_t uprobe_site_skip(const uint8_t *code, size_t len)
{
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	size_t skip = 0;

	while (skip + sizeof(nop5) <= UPROBE_SITE_MAX_SKIP && len - skip >= sizeof(nop5) &&
	       !memcmp(code + skip, nop5, sizeof(nop5)))
		skip += sizeof(nop5);
	return skip;
}

uint64_t uprobe_site_offset(int fd, uint64_t off)
{
	uint8_t b[UPROBE_SITE_MAX_SKIP];
	ssize_t n;

	do
		n = pread(fd, b, sizeof(b), (off_t)off);
	while (n < 0 && errno == EINTR);
	return n > 0 ? off + uprobe_site_skip(b, (size_t)n) : off;
}
