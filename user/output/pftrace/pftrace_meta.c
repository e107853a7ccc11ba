// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The pftrace's segment slice annotations (moved out of pftrace_writer.c). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/pftrace/pftrace_fields.h"
#include "output/pftrace/pftrace_meta.h"
#include "output/seg_meta.h"
#include "util/text_sanitize.h"

static void da_uint(struct pb_buf *b, const char *name, uint64_t v)
{
	size_t m = pb_begin(b, TE_DEBUG_ANNOTATIONS);

	pb_string(b, DA_NAME, name);
	pb_uint(b, DA_UINT, v);
	pb_end(b, m);
}

static void da_bool(struct pb_buf *b, const char *name, bool v)
{
	size_t m = pb_begin(b, TE_DEBUG_ANNOTATIONS);

	pb_string(b, DA_NAME, name);
	pb_uint(b, DA_BOOL, v);
	pb_end(b, m);
}

/* A string whole (a command line, a library's path) as the JSON has it;
 * cut to a kilobyte, between characters, only when memory is short. */
static void da_string(struct pb_buf *b, const char *name, const char *v)
{
	size_t m = pb_begin(b, TE_DEBUG_ANNOTATIONS), need = text_clean_bound(v);
	char small[1100], *clean = need > sizeof(small) ? malloc(need) : NULL;

	text_clean_utf8(clean ? clean : small, clean ? need : sizeof(small), v);
	pb_string(b, DA_NAME, name);
	pb_string(b, DA_STRING, clean ? clean : small);
	pb_end(b, m);
	free(clean);
}

static void da_double(struct pb_buf *b, const char *name, double v)
{
	size_t m = pb_begin(b, TE_DEBUG_ANNOTATIONS);
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	pb_string(b, DA_NAME, name);
	pb_fixed64(b, DA_DOUBLE, bits);
	pb_end(b, m);
}

/* An object as a dictionary annotation, its entries nested in it. */
static void da_counts(struct pb_buf *b, const char *name, const struct seg_meta_counts *n)
{
	size_t m = pb_begin(b, TE_DEBUG_ANNOTATIONS), e, i;

	pb_string(b, DA_NAME, name);
	for (i = 0; i < 3; i++) {
		e = pb_begin(b, DA_DICT_ENTRIES);
		pb_string(b, DA_NAME, seg_meta_count_keys[i]);
		pb_uint(b, DA_UINT, seg_meta_count(n, i));
		pb_end(b, e);
	}
	pb_end(b, m);
}

static void meta_field(void *out, const struct seg_meta_field *f, const union seg_meta_value *v)
{
	struct pb_buf *b = out;
	size_t m;

	switch (f->kind) {
	case SM_STR: da_string(b, f->key, v->s); break;
	case SM_INT:
		m = pb_begin(b, TE_DEBUG_ANNOTATIONS);
		pb_string(b, DA_NAME, f->key);
		pb_int(b, DA_INT, v->i);
		pb_end(b, m);
		break;
	case SM_UINT: da_uint(b, f->key, v->u); break;
	case SM_BOOL: da_bool(b, f->key, v->b); break;
	case SM_US: da_double(b, f->key, (double)v->u / 1000.0); break;
	case SM_COUNTS: da_counts(b, f->key, &v->n); break;
	}
}

/* Every key of otherData in the JSON, in its order. */
void pftrace_segment_annotations(struct pb_buf *b, const struct seg_output_ctx *c)
{
	seg_meta_each(c, seg_meta_trace_order, SMG_COUNT, meta_field, b);
}
