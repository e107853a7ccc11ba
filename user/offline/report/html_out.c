// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf report --html`: hostile text and file names made safe for the
 * page, ranks named from segments, paths made relative. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "offline/report/html_internal.h"
#include "util/text_sanitize.h"

void html_text(FILE *f, const char *s)
{
	text_xml_write(f, s, SIZE_MAX);
}

void html_text_cut(FILE *f, const char *s, size_t max)
{
	char buf[4 * JR_HTML_LABEL_CHARS + 1];
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0, n, len = 0;
	uint32_t cp;

	if (max > JR_HTML_LABEL_CHARS)
		max = JR_HTML_LABEL_CHARS;
	while (p[len] && chars < max) {
		n = text_utf8_len(p + len, &cp);
		len += n ? n : 1;
		chars++;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	html_text(f, buf);
	if (p[len])
		fputs("\xe2\x80\xa6", f);
}

void html_url_path(FILE *f, const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++)
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    strchr("._~/-", *p))
			fputc(*p, f);
		else
			fprintf(f, "%%%02X", *p);
}

bool jr_file_is_rank(const struct manifest *m, const struct mf_file *x, const struct jr_rank *k)
{
	return x->rank == k->rank && x->restart == k->restart &&
	       (x->pid_named ? x->pid : 0) == k->pid && !strcmp(m->hostname, k->host);
}

void jr_file_label(const struct manifest *m, const struct mf_file *x, char *buf, size_t len)
{
	struct jr_rank k = { .host = m->hostname, .rank = x->rank, .restart = x->restart,
			     .pid = x->pid_named ? x->pid : 0 };

	jr_rank_label(&k, buf, len);
}

int jr_rel_path(const char *from, const char *to, char *out, size_t len)
{
	size_t i = 0, common = 0, used = 0;
	const char *p;
	int n;

	while (from[i] && from[i] == to[i]) {
		if (from[i] == '/')
			common = i;
		i++;
	}
	if (!from[i] && (!to[i] || to[i] == '/'))
		common = i; /* @from is @to or a parent of it */
	else if (!to[i] && from[i] == '/')
		common = i; /* @to is a parent of @from */
	out[0] = '\0';
	for (p = from + common; *p; p++) {
		if (*p != '/' || !p[1])
			continue;
		n = snprintf(out + used, len - used, "../");
		if (n < 0 || (size_t)n >= len - used)
			return -ENAMETOOLONG;
		used += (size_t)n;
	}
	p = to + common;
	if (*p == '/')
		p++;
	n = snprintf(out + used, len - used, "%s", p);
	if (n < 0 || (size_t)n >= len - used)
		return -ENAMETOOLONG;
	used += (size_t)n;
	if (used && out[used - 1] == '/')
		out[used - 1] = '\0'; /* "../" alone: the links add their own '/' */
	return 0;
}
