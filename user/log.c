// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int log_verbosity;

static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
static char **warnings;
static size_t nwarnings;

static void vlog(const char *level, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "fvbpf: %s%s\n", level, buf);
}

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("error: ", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	char buf[1024], **n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "fvbpf: warning: %s\n", buf);

	pthread_mutex_lock(&warn_lock);
	n = realloc(warnings, (nwarnings + 1) * sizeof(*n));
	if (n) {
		warnings = n;
		warnings[nwarnings] = strdup(buf);
		if (warnings[nwarnings])
			nwarnings++;
	}
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

void log_free_warnings(char **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}
