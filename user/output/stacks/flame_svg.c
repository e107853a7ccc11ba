// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Boxes come from the sorted rows as flamegraph.pl draws them: a frame's
 * box opens where a row first has it at that depth and closes where a row
 * no longer does.  Root at the bottom; boxes under a tenth of a pixel are
 * left out (counted in the subtitle).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output/stacks/flame_svg.h"
#include "util/text_sanitize.h"

#define SVG_W 1200.0
#define SVG_PAD 10.0
#define SVG_ROW 17
#define SVG_TOP 52
#define SVG_DEPTH_MAX 512
#define SVG_FONT_W 6.4           /* average glyph width at 11 px */

struct svg_state {
	FILE *f;
	double scale;               /* pixels per ns */
	unsigned int depth_max;
	uint64_t total, hidden;
};

/* Warm colours for Python frames, blue for torch calls, grey for none. */
static void colour(const char *name, size_t len, char *buf, size_t blen)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	if (len > 0 && name[0] == '[')
		snprintf(buf, blen, "rgb(190,190,190)");
	else if (memchr(name, '(', len) && memchr(name, ':', len) && name[len - 1] == ')')
		snprintf(buf, blen, "rgb(%u,%u,%u)", 205 + h % 50, 80 + (h >> 8) % 130, (h >> 16) % 55);
	else
		snprintf(buf, blen, "rgb(%u,%u,%u)", 70 + h % 60, 130 + (h >> 8) % 70, 200 + (h >> 16) % 55);
}

static void box(struct svg_state *st, const char *name, size_t len, unsigned int depth,
		uint64_t x0, uint64_t x1)
{
	double x = SVG_PAD + (double)x0 * st->scale, w = (double)(x1 - x0) * st->scale;
	double y = SVG_TOP + (double)(st->depth_max - depth) * SVG_ROW;
	char fill[32], label[4096];
	size_t chars;

	if (w < 0.1) {
		st->hidden++;
		return;
	}
	if (len >= sizeof(label))
		len = sizeof(label) - 1;
	memcpy(label, name, len);
	label[len] = '\0';
	colour(name, len, fill, sizeof(fill));
	fputs("<g><title>", st->f);
	text_xml_write(st->f, label, len);
	fprintf(st->f, " (%.3f ms, %.2f%%)</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
		"height=\"%d\" fill=\"%s\" rx=\"2\"/>", (double)(x1 - x0) / 1e6,
		100.0 * (double)(x1 - x0) / (double)st->total, x, y, w, SVG_ROW - 1, fill);
	chars = (size_t)((w - 6) / SVG_FONT_W);
	if (chars >= 3) {
		fprintf(st->f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + SVG_ROW - 5);
		if (chars >= len) {
			text_xml_write(st->f, label, len);
		} else {
			text_xml_write(st->f, label, chars - 2);
			fputs("..", st->f);
		}
		fputs("</text>", st->f);
	}
	fputs("</g>\n", st->f);
}

/* Frames of @path: starts and lengths, at most SVG_DEPTH_MAX. */
static unsigned int split(const char *path, const char **fr, size_t *fl)
{
	unsigned int n = 0;
	const char *p = path, *e;

	while (*p && n < SVG_DEPTH_MAX) {
		e = strchr(p, ';');
		fr[n] = p;
		fl[n] = e ? (size_t)(e - p) : strlen(p);
		n++;
		if (!e)
			break;
		p = e + 1;
	}
	return n;
}

static int draw(struct svg_state *st, const struct fold_set *fs)
{
	const char **pf, **cf;
	size_t *pl, *cl;
	uint64_t *start, x = 0;
	unsigned int pn = 0, cn, common, j;
	size_t i;
	int ret = -ENOMEM;

	pf = calloc(SVG_DEPTH_MAX, sizeof(*pf));
	cf = calloc(SVG_DEPTH_MAX, sizeof(*cf));
	pl = calloc(SVG_DEPTH_MAX, sizeof(*pl));
	cl = calloc(SVG_DEPTH_MAX, sizeof(*cl));
	start = calloc(SVG_DEPTH_MAX, sizeof(*start));
	if (!pf || !cf || !pl || !cl || !start)
		goto cleanup;
	for (i = 0; i <= fs->n; i++) {
		cn = 0;
		if (i < fs->n && !fs->rows[i].ns)
			continue;
		if (i < fs->n)
			cn = split(fs->rows[i].path, cf, cl);
		for (common = 0; common < cn && common < pn; common++)
			if (cl[common] != pl[common] || memcmp(cf[common], pf[common], cl[common]))
				break;
		for (j = pn; j > common; j--)
			box(st, pf[j - 1], pl[j - 1], j - 1, start[j - 1], x);
		for (j = common; j < cn; j++)
			start[j] = x;
		if (i < fs->n)
			x += fs->rows[i].ns;
		memcpy(pf, cf, cn * sizeof(*pf));
		memcpy(pl, cl, cn * sizeof(*pl));
		pn = cn;
	}
	ret = 0;
cleanup:
	free(pf);
	free(cf);
	free(pl);
	free(cl);
	free(start);
	return ret;
}

int flame_svg_write(FILE *f, const struct fold_set *fs, const char *title, const char *what)
{
	struct svg_state st = { .f = f, .total = fs->total_ns };
	unsigned int d, h;
	size_t i;
	int ret;

	for (i = 0; i < fs->n; i++) {
		const char *p = fs->rows[i].path;

		for (d = 1; *p; p++)
			d += *p == ';';
		if (d > SVG_DEPTH_MAX)
			d = SVG_DEPTH_MAX;
		if (d > st.depth_max)
			st.depth_max = d;
	}
	st.depth_max = st.depth_max ? st.depth_max - 1 : 0;
	st.scale = st.total ? (SVG_W - 2 * SVG_PAD) / (double)st.total : 0;
	h = SVG_TOP + (st.depth_max + 1) * SVG_ROW + 24;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
		"height=\"%u\" viewBox=\"0 0 %.0f %u\" font-family=\"monospace\" font-size=\"11\">\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(250,250,245)\"/>\n"
		"<text x=\"%.0f\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">",
		SVG_W, h, SVG_W, h, SVG_W / 2);
	text_xml_write(f, title, 400);
	fprintf(f, "</text>\n<text x=\"%.0f\" y=\"38\" text-anchor=\"middle\">total %.3f ms of ",
		SVG_W / 2, (double)st.total / 1e6);
	text_xml_write(f, what, 100);
	fputs("; hover a box for its time (fvbpf --with-stack)</text>\n", f);
	ret = st.total ? draw(&st, fs) : 0;
	fprintf(f, "<text x=\"%.0f\" y=\"%u\">%llu boxes narrower than 0.1 px not drawn</text>\n"
		"</svg>\n", SVG_PAD, h - 6, (unsigned long long)st.hidden);
	if (!ret && ferror(f))
		ret = -EIO;
	return ret;
}
