/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_LOG_H
#define FVBPF_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Warnings shown per call site; later ones are only counted. */
#define LOG_WARN_BURST 10

extern int log_verbosity;

/*
 * All go to stderr, prefixed "fvbpf: ", as one line: control characters
 * and invalid UTF-8 in the message (target text) are escaped, see
 * text_sanitize.h.  Warnings are also kept for the session manifest and the
 * exit report, at most LOG_WARN_BURST per call site (the target can make a
 * warning repeat); safe from any thread.
 */
/* Set while a failure is not the run's (one process of a followed tree):
 * errors are shown with -v only, the caller says what it means. */
extern bool log_errors_demoted;
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A one-line status on a terminal, redrawn in place ("\r", no newline);
 * the next message clears it first.  The caller decides when stderr is a
 * terminal.  log_progress_end() clears it for good. */
void log_progress(const char *text);
void log_progress_end(void);
/* A libbpf print callback's line, cleaned the same way. */
int log_libbpf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Copies of the warnings kept so far; the caller frees with log_free_warnings(). */
size_t log_warnings(char ***out);
void log_free_warnings(char **list, size_t n);
/* Warnings counted but not shown (past LOG_WARN_BURST of their site). */
uint64_t log_warnings_suppressed(void);
/* One line for the exit report when any were suppressed. */
void log_report_suppressed(void);
/* Forget every warning and count (tests). */
void log_reset(void);

#endif /* FVBPF_LOG_H */
