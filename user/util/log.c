// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/text_sanitize.h"

/* A formatted message is cut here; cleaning may quadruple it. */
#define LOG_LINE 1024
#define LOG_CLEAN (LOG_LINE * 4)
/* Distinct warning call sites tracked; more share the last slot. */
#define LOG_WARN_SITES 128

int log_verbosity;

struct warn_site {
	const char *fmt;        /* the call site's format string identifies it */
	uint64_t seen;
};

static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
static char **warnings;
static size_t nwarnings, capwarnings;
static struct warn_site sites[LOG_WARN_SITES];
static size_t nsites;
static uint64_t suppressed;

/*
 * Messages carry text of the target (comm, agent status, paths), so the
 * whole line is cleaned: no escape sequence reaches the terminal and no
 * "\n" can start a forged "fvbpf: ..." line.  fvbpf's own messages are
 * single lines, so nothing of ours is lost.
 */
static void format_clean(char *out, size_t outsz, const char *fmt, va_list ap)
{
	char raw[LOG_LINE];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	text_clean_terminal(out, outsz, raw);
}

/* A progress line is on the terminal (log_progress()): a message first
 * clears it, the next progress tick draws it again below. */
static atomic_bool progress_shown;

static void clear_progress(void)
{
	if (atomic_exchange(&progress_shown, false))
		fputs("\r\033[K", stderr);
}

void log_progress(const char *text)
{
	char buf[LOG_CLEAN];

	text_clean_terminal(buf, sizeof(buf), text);
	fprintf(stderr, "\r\033[Kfvbpf: %s", buf);
	fflush(stderr);
	atomic_store(&progress_shown, true);
}

void log_progress_end(void)
{
	clear_progress();
}

static void vlog(const char *level, const char *fmt, va_list ap)
{
	char buf[LOG_CLEAN];

	format_clean(buf, sizeof(buf), fmt, ap);
	clear_progress();
	fprintf(stderr, "fvbpf: %s%s\n", level, buf);
}

bool log_errors_demoted;

void log_error(const char *fmt, ...)
{
	va_list ap;

	if (log_errors_demoted && log_verbosity < 1)
		return;
	va_start(ap, fmt);
	vlog(log_errors_demoted ? "" : "error: ", fmt, ap);
	va_end(ap);
}

/* The site of @fmt, added when new; under warn_lock. */
static struct warn_site *site_of(const char *fmt)
{
	size_t i;

	for (i = 0; i < nsites; i++)
		if (sites[i].fmt == fmt)
			return &sites[i];
	if (nsites == LOG_WARN_SITES)
		return &sites[LOG_WARN_SITES - 1];
	sites[nsites].fmt = fmt;
	return &sites[nsites++];
}

/* Keep a copy for the manifest; under warn_lock.  Bounded: at most
 * LOG_WARN_BURST per site are kept. */
static void keep_warning(const char *msg)
{
	size_t ncap;
	char **n;

	if (nwarnings == capwarnings) {
		ncap = capwarnings ? capwarnings * 2 : 16;
		n = realloc(warnings, ncap * sizeof(*n));
		if (!n)
			return;
		warnings = n;
		capwarnings = ncap;
	}
	if ((warnings[nwarnings] = strdup(msg)))
		nwarnings++;
}

void log_warn(const char *fmt, ...)
{
	char buf[LOG_CLEAN];
	uint64_t seen;
	va_list ap;

	/* The target can repeat a warning at will: each call site shows its
	 * first LOG_WARN_BURST, then only counts. */
	pthread_mutex_lock(&warn_lock);
	seen = ++site_of(fmt)->seen;
	if (seen > LOG_WARN_BURST)
		suppressed++;
	pthread_mutex_unlock(&warn_lock);
	if (seen > LOG_WARN_BURST)
		return;

	va_start(ap, fmt);
	format_clean(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	clear_progress();
	fprintf(stderr, "fvbpf: warning: %s\n", buf);
	if (seen == LOG_WARN_BURST)
		fprintf(stderr, "fvbpf: warning: more warnings like this one are counted, not shown\n");

	pthread_mutex_lock(&warn_lock);
	keep_warning(buf);
	pthread_mutex_unlock(&warn_lock);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_verbosity < 1)
		return;
	va_start(ap, fmt);
	vlog("debug: ", fmt, ap);
	va_end(ap);
}

int log_libbpf(const char *fmt, va_list ap)
{
	char buf[LOG_CLEAN], raw[LOG_LINE];
	size_t n;

	/* libbpf's lines end in "\n" and may name the target's files. */
	vsnprintf(raw, sizeof(raw), fmt, ap);
	n = strlen(raw);
	while (n && raw[n - 1] == '\n')
		raw[--n] = '\0';
	text_clean_terminal(buf, sizeof(buf), raw);
	clear_progress();
	return fprintf(stderr, "%s\n", buf);
}

size_t log_warnings(char ***out)
{
	size_t i, n = 0;
	char **copy;

	pthread_mutex_lock(&warn_lock);
	copy = calloc(nwarnings ? nwarnings : 1, sizeof(*copy));
	if (copy) {
		for (i = 0; i < nwarnings; i++)
			if ((copy[n] = strdup(warnings[i])))
				n++;
	}
	pthread_mutex_unlock(&warn_lock);
	*out = copy;
	return n;
}

uint64_t log_warnings_suppressed(void)
{
	uint64_t n;

	pthread_mutex_lock(&warn_lock);
	n = suppressed;
	pthread_mutex_unlock(&warn_lock);
	return n;
}

void log_report_suppressed(void)
{
	uint64_t n = log_warnings_suppressed();

	if (n)
		fprintf(stderr, "fvbpf: warning: %llu more warning%s not shown (at most %d of each "
			"kind are)\n", (unsigned long long)n, n == 1 ? " was" : "s were", LOG_WARN_BURST);
}

void log_free_warnings(char **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

void log_reset(void)
{
	pthread_mutex_lock(&warn_lock);
	log_free_warnings(warnings, nwarnings);
	warnings = NULL;
	nwarnings = capwarnings = 0;
	memset(sites, 0, sizeof(sites));
	nsites = 0;
	suppressed = 0;
	pthread_mutex_unlock(&warn_lock);
}
