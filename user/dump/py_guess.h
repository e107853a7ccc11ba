/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A CPython fvbpf does not walk (3.9 and older have no Py_Version and no
 * layout here) is still named: the version its mapped file's name says
 * (libpython3.9.so.1.0, python3.9).
 */
#ifndef FVBPF_PY_GUESS_H
#define FVBPF_PY_GUESS_H

#include <stddef.h>
#include <sys/types.h>

/* The version in PY_VERSION_HEX form (0x03090000), 0 when no mapping's
 * name looks like CPython's; its path in @path. */
unsigned long py_guess_version(pid_t pid, char *path, size_t len);
/* The same from one file name (tests): 0 when it is not one. */
unsigned long py_guess_from_name(const char *path);

#endif /* FVBPF_PY_GUESS_H */
