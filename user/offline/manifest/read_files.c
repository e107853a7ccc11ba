// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Files of an output directory read whole or streamed, and the messages of
 * their refusal. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file/file_open.h"
#include "offline/manifest/manifest_read.h"
#include "offline/manifest/read_internal.h"
#include "util/text_copy.h"

void mf_open_error(char *err, size_t errlen, const char *path, int ret, uint64_t max)
{
	char name[PATH_MAX];

	text_shown(name, sizeof(name), path);
	if (ret == -ELOOP || ret == -ENOEXEC || ret == -EXDEV)
		snprintf(err, errlen, "%s: %s: refused (fvbpf report and merge read only regular files "
			 "inside the directory, no links, FIFOs or devices: put the file itself there)",
			 name, open_regular_why(ret));
	else if (ret == -EFBIG)
		snprintf(err, errlen, "%s: more than the limit of %llu bytes", name,
			 (unsigned long long)max);
	else
		snprintf(err, errlen, "%s: %s", name, strerror(-ret));
}

int mf_slurp(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen)
{
	char name[PATH_MAX];
	struct stat st;
	size_t got = 0;
	ssize_t n;
	char *buf = NULL;
	int fd, ret = 0;

	*out = NULL;
	fd = open_regular_at(AT_FDCWD, path, max, &st);
	if (fd < 0) {
		mf_open_error(err, errlen, path, fd, max);
		return fd;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", text_shown(name, sizeof(name), path));
		goto cleanup;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", text_shown(name, sizeof(name), path), strerror(-ret));
			goto cleanup;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	*out = buf;
	*len = got;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return ret;
}

/* A streaming read that failed without a message of its own. */
void mf_stream_error(char *err, size_t errlen, const char *path, const struct js_reader *r,
		     int ret, const struct mf_budget *b, size_t max)
{
	unsigned long long at = r ? (unsigned long long)js_offset(r) : 0;
	char name[PATH_MAX], why[256];

	text_shown(name, sizeof(name), path);
	if (ret == -ENOSPC) {
		mf_budget_error(b, why, sizeof(why));
		snprintf(err, errlen, "%s: %s", name, why);
	} else if (ret == -ENOMEM) {
		snprintf(err, errlen, "%s: out of memory", name);
	} else if (ret == -EFBIG && r && r->too_big) {
		snprintf(err, errlen, "%s: more than the limit of %u bytes", name, MF_JSON_MAX);
	} else if (ret == -EFBIG) {
		snprintf(err, errlen, "%s: a value longer than the limit of %zu bytes near byte %llu",
			 name, max, at);
	} else if (ret == -E2BIG) {
		snprintf(err, errlen, "%s: a value of more than %d values or %d objects and arrays near "
			 "byte %llu", name, JS_ITEMS_MAX, JS_CONTAINERS_MAX, at);
	} else {
		snprintf(err, errlen, "%s: not valid JSON (near byte %llu)", name, at);
	}
}

int mf_parse_json(const char *path, const char *text, size_t len, json_object **out, char *err,
		  size_t errlen)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	char name[PATH_MAX];
	json_object *o;

	*out = NULL;
	if (len > INT_MAX) {
		snprintf(err, errlen, "%s: too large", text_shown(name, sizeof(name), path));
		return -EFBIG;
	}
	tok = json_tokener_new_ex(64);
	if (!tok) {
		snprintf(err, errlen, "%s: out of memory", text_shown(name, sizeof(name), path));
		return -ENOMEM;
	}
	o = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!o && jerr == json_tokener_continue)
		jerr = json_tokener_error_parse_eof;
	if (o && (size_t)json_tokener_get_parse_end(tok) < len &&
	    strspn(text + json_tokener_get_parse_end(tok), " \t\r\n") !=
		    len - json_tokener_get_parse_end(tok)) {
		json_object_put(o);
		o = NULL;
		jerr = json_tokener_error_parse_unexpected;
	}
	json_tokener_free(tok);
	if (!o) {
		snprintf(err, errlen, "%s: not valid JSON (%s)", text_shown(name, sizeof(name), path),
			 json_tokener_error_desc(jerr));
		return -EINVAL;
	}
	*out = o;
	return 0;
}
