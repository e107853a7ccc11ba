// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/stacks/pystack_fold.h"
#include "output/stacks/pystack_lines.h"
#include "probes/torch_ops.h"
#include "util/checked_math.h"
#include "util/grow.h"
#include "util/text_sanitize.h"

#define KEY_MAX 4096

/* The group of stack @sid: its innermost @nframes frames. */
static void key_of(const struct seg_output_ctx *c, uint32_t sid, unsigned int nframes, char *key)
{
	const struct pystack_entry *e = sid ? pystack_get(c->pystacks, sid) : NULL;
	char label[1200];
	size_t len = 0, n;
	uint32_t k;

	if (!e || !e->n) {
		snprintf(key, KEY_MAX, "%s", FOLD_NO_STACK);
		return;
	}
	key[0] = '\0';
	for (k = 0; k < e->n && k < nframes; k++) {
		pystack_frame_label(c->knames, &e->f[k], label, sizeof(label));
		n = strlen(label);
		if (len + n + 5 >= KEY_MAX)
			break;
		if (k) {
			memcpy(key + len, " <- ", 4);
			len += 4;
		}
		memcpy(key + len, label, n + 1);
		len += n;
	}
}

/* The row of @key (linear: a segment has few distinct lines), NULL when
 * out of memory. */
static struct pyline_row *row_of(struct pyline_set *ls, const char *key)
{
	size_t i;

	for (i = 0; i < ls->n; i++)
		if (!strcmp(ls->rows[i].key, key))
			return &ls->rows[i];
	if (grow_one(&ls->rows, ls->n, &ls->cap, sizeof(*ls->rows), 32))
		return NULL;
	memset(&ls->rows[ls->n], 0, sizeof(ls->rows[0]));
	ls->rows[ls->n].key = strdup(key);
	if (!ls->rows[ls->n].key)
		return NULL;
	return &ls->rows[ls->n++];
}

int pylines_build(const struct seg_output_ctx *c, unsigned int nframes, struct pyline_set *ls)
{
	const struct segment *s = c->seg;
	uint64_t *self = calloc(s->nops ? s->nops : 1, sizeof(*self));
	uint32_t *sid = calloc(s->nops ? s->nops : 1, sizeof(*sid));
	char *key = malloc(KEY_MAX);
	struct op_tree t = { 0 };
	struct pyline_row *r;
	size_t i;
	int ret = -ENOMEM;

	memset(ls, 0, sizeof(*ls));
	if (!self || !sid || !key || op_tree_build(s, &t) || pystack_op_walk(s, &t, self, sid))
		goto cleanup;
	for (i = 0; i < s->nops; i++) {
		if (!sid[i] && s->ops[i].kind == TORCH_SCOPE) {
			/* a record_function scope's own time: Python between its calls */
			name_table_get(c->knames, s->ops[i].name, key, KEY_MAX - 64);
			memmove(key + 8, key, strlen(key) + 1);
			memcpy(key, "[scope '", 8);
			strcat(key, "', outside its torch calls]");
		} else {
			key_of(c, sid[i], nframes, key);
		}
		if (!(r = row_of(ls, key)))
			goto cleanup;
		r->cpu_ns = sat_add_u64(r->cpu_ns, self[i]);
		r->calls++;
		ls->cpu_ns = sat_add_u64(ls->cpu_ns, self[i]);
	}
	for (i = 0; i < s->ncalls; i++) {
		if (!s->calls[i].stack)
			continue;
		key_of(c, s->calls[i].stack, nframes, key);
		if (!(r = row_of(ls, key)))
			goto cleanup;
		r->launches++;
	}
	/* GPU time of each kernel or copy, to the line that launched it */
	for (i = 0; i < s->ngpu; i++) {
		const struct gpu_activity *a = &s->gpu[i];
		uint64_t dur = span_u64(a->start, a->end);

		if (a->kind == FVBPF_GPU_SYNC || a->call < 0 || (size_t)a->call >= s->ncalls)
			continue;
		key_of(c, s->calls[a->call].stack, nframes, key);
		if (!(r = row_of(ls, key)))
			goto cleanup;
		r->dev_ns = sat_add_u64(r->dev_ns, dur);
		ls->dev_ns = sat_add_u64(ls->dev_ns, dur);
	}
	ret = 0;
cleanup:
	op_tree_free(&t);
	free(self);
	free(sid);
	free(key);
	if (ret)
		pylines_free(ls);
	return ret;
}

static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct pyline_row *x = a, *y = b;
	bool by_dev = *(const bool *)arg;
	uint64_t vx = by_dev ? x->dev_ns : x->cpu_ns, vy = by_dev ? y->dev_ns : y->cpu_ns;

	if (vx != vy)
		return vx < vy ? 1 : -1;
	return strcmp(x->key, y->key);
}

static double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

int pylines_write(FILE *f, struct pyline_set *ls, const char *title, unsigned int nframes)
{
	struct pyline_row rest = { 0 };
	bool by_dev = ls->dev_ns > 0;
	char *key = malloc(KEY_MAX * 4);
	size_t i;

	if (!key)
		return -ENOMEM;
	if (ls->n)
		qsort_r(ls->rows, ls->n, sizeof(*ls->rows), cmp_rows, &by_dev);
	fprintf(f, "# %s\n# grouped by the innermost %u frame(s) (--group-by-stack); sorted by %s\n"
		"# self CPU: torch calls' own time (less their child calls) under the line;\n"
		"# device: GPU time of the kernels and copies launched from it\n",
		title, nframes, by_dev ? "device time" : "self CPU time");
	fprintf(f, "%12s %6s %12s %6s %8s %8s  %s\n", "self CPU ms", "%", "device ms", "%", "calls",
		"launches", "Python (innermost first)");
	for (i = 0; i < ls->n; i++) {
		const struct pyline_row *r = &ls->rows[i];

		if (i >= PYLINES_ROWS) {
			rest.cpu_ns += r->cpu_ns;
			rest.dev_ns += r->dev_ns;
			rest.calls += r->calls;
			rest.launches += r->launches;
			continue;
		}
		/* a scope's name is the target's text, as the frames are */
		text_clean_terminal(key, KEY_MAX * 4, r->key);
		fprintf(f, "%12.3f %6.1f %12.3f %6.1f %8llu %8llu  %s\n", (double)r->cpu_ns / 1e6,
			pct(r->cpu_ns, ls->cpu_ns), (double)r->dev_ns / 1e6, pct(r->dev_ns, ls->dev_ns),
			(unsigned long long)r->calls, (unsigned long long)r->launches, key);
	}
	if (ls->n > PYLINES_ROWS)
		fprintf(f, "%12.3f %6.1f %12.3f %6.1f %8llu %8llu  (%zu more lines)\n",
			(double)rest.cpu_ns / 1e6, pct(rest.cpu_ns, ls->cpu_ns),
			(double)rest.dev_ns / 1e6, pct(rest.dev_ns, ls->dev_ns),
			(unsigned long long)rest.calls, (unsigned long long)rest.launches,
			ls->n - PYLINES_ROWS);
	fprintf(f, "%12.3f %6.1f %12.3f %6.1f  total\n", (double)ls->cpu_ns / 1e6, 100.0,
		(double)ls->dev_ns / 1e6, ls->dev_ns ? 100.0 : 0.0);
	free(key);
	return ferror(f) ? -EIO : 0;
}

void pystack_source_location(struct pystack_table *t, struct name_table *names, uint32_t sid,
			     unsigned int nframes, char *buf, size_t len)
{
	const struct pystack_entry *e = t && sid ? pystack_get(t, sid) : NULL;
	char func[512], file[1024], frame[1600];
	size_t at = 0, k;
	int n;

	if (!len)
		return;
	buf[0] = '\0';
	for (k = 0; e && k < e->n && k < nframes && at + 1 < len; k++) {
		name_table_get(names, e->f[k].func, func, sizeof(func));
		name_table_get(names, e->f[k].file, file, sizeof(file));
		n = snprintf(frame, sizeof(frame), "%s(%d): %s",
			     e->f[k].file ? pystack_short_file(file) : "?", e->f[k].firstline, func);
		if (n < 0)
			break;
		if (k)
			buf[at++] = '\n'; /* the frames' separator: theirs are escaped */
		at += text_clean_terminal(buf + at, len - at, frame);
	}
}

void pylines_free(struct pyline_set *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++)
		free(ls->rows[i].key);
	free(ls->rows);
	memset(ls, 0, sizeof(*ls));
}
