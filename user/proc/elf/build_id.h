/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_BUILD_ID_H
#define FVBPF_BUILD_ID_H

/* The GNU build id of the ELF file open at @fd, hex into @out (41 bytes):
 * 0 or -ENOENT. */
int torch_build_id(int fd, char *out);

#endif /* FVBPF_BUILD_ID_H */
