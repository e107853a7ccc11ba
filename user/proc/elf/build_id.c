// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The GNU build id of an ELF file (its PT_NOTE segments), bounded. */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc/elf/build_id.h"

#define NOTE_MAX 4096

int torch_build_id(int fd, char *out)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned char note[NOTE_MAX];
	size_t i, off;
	ssize_t n;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(ph) || eh.e_phnum > 256)
		return -ENOENT;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
			return -ENOENT;
		if (ph.p_type != PT_NOTE)
			continue;
		n = pread(fd, note, ph.p_filesz < NOTE_MAX ? ph.p_filesz : NOTE_MAX, (off_t)ph.p_offset);
		for (off = 0; n > 0 && off + 12 <= (size_t)n;) {
			uint32_t nsz, dsz, type, j;
			size_t d;

			memcpy(&nsz, note + off, 4);
			memcpy(&dsz, note + off + 4, 4);
			memcpy(&type, note + off + 8, 4);
			if (nsz > NOTE_MAX || dsz > NOTE_MAX)
				break;
			d = off + 12 + ((nsz + 3u) & ~3u);
			if (d + dsz > (size_t)n)
				break;
			if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(note + off + 12, "GNU", 4) &&
			    dsz >= 8 && dsz <= 20) {
				for (j = 0; j < dsz; j++)
					sprintf(out + 2 * j, "%02x", note[d + j]);
				return 0;
			}
			off = d + ((dsz + 3u) & ~3u);
		}
	}
	return -ENOENT;
}
