/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_LOG_H
#define FVBPF_LOG_H

#include <stddef.h>

extern int log_verbosity;

/* All go to stderr, prefixed "fvbpf: ".  Warnings are also kept for the
 * session manifest and the exit report; safe from any thread. */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Copies of the warnings so far; the caller frees with log_free_warnings(). */
size_t log_warnings(char ***out);
void log_free_warnings(char **list, size_t n);

#endif /* FVBPF_LOG_H */
