/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Output files appear atomically (written under a hidden temporary name,
 * then renamed) and, when fvbpf runs under sudo, belong to the invoking user.
 */
#ifndef FVBPF_OUTPUT_FILES_H
#define FVBPF_OUTPUT_FILES_H

#include <limits.h>
#include <stdio.h>

struct out_file {
	char path[PATH_MAX];
	char tmp[PATH_MAX];
	FILE *f;
};

/* Create @dir (and parents) if needed and prove we can write there. */
int outdir_prepare(const char *dir, char *err, size_t errlen);
int out_open(struct out_file *of, const char *dir, const char *name);
/* Flush, close, chown and rename into place; -errno on any write error. */
int out_commit(struct out_file *of);
void out_abort(struct out_file *of);
/* Region names may hold anything; file names get [A-Za-z0-9._-] only. */
void out_sanitize_name(char *dst, size_t len, const char *src);

#endif /* FVBPF_OUTPUT_FILES_H */
