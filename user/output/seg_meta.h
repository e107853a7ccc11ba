/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The segment's metadata, once: one row per key, its kind and how its
 * value is read from the segment.  The JSON trace's "otherData", the
 * pftrace's annotations of the segment slice, the summary JSON's
 * "metadata" and the text summary's "segment metadata:" block are all
 * written from this table, so they carry the same keys; the manifest's
 * record of a segment takes the values of the keys it lists from it
 * (tests/unit/output/test_seg_meta.c checks all of them on the written files).
 * A row added here appears in every one of those files.
 */
#ifndef FVBPF_SEG_META_H
#define FVBPF_SEG_META_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output/seg_output.h"

/* Bytes a getter may build its string in (memory_peaks is the longest). */
#define SEG_META_BUF 1024

enum seg_meta_kind {
	SM_STR,     /* text, escaped by each writer its own way */
	SM_INT,
	SM_UINT,
	SM_BOOL,
	SM_US,      /* nanoseconds, written as microseconds with three decimals */
	SM_COUNTS,  /* an object of the three per-segment bounds (seg_meta_count_keys) */
};

/*
 * Rows come in groups: the summary JSON's keys were in another order than
 * the trace's before the table, and readers may rely on either, so each
 * writer names the order of the groups (rows keep theirs within a group).
 */
enum seg_meta_group {
	SMG_ID,      /* who, where and when */
	SMG_LOSS,    /* ring-buffer drops, unbalanced and forced region ends */
	SMG_GPU,     /* calls, GPU records and what was missing of them */
	SMG_LIMITS,  /* what the segment's bounds kept out, and the bounds */
	SMG_TORCH,
	SMG_MEMORY,  /* --max-memory */
	SMG_COUNT
};

struct seg_meta_counts {
	uint64_t slices, cuda_calls, gpu_records;
};

union seg_meta_value {
	const char *s;
	int64_t i;
	uint64_t u;
	bool b;
	struct seg_meta_counts n;
};

struct seg_meta_field {
	const char *key;
	enum seg_meta_kind kind;
	enum seg_meta_group group;
	/* @buf (@len bytes) holds a string made for the value; v->s may point there. */
	void (*get)(const struct seg_output_ctx *c, union seg_meta_value *v, char *buf, size_t len);
};

extern const struct seg_meta_field seg_meta_fields[];
extern const size_t seg_meta_nfields;
/* The keys of an SM_COUNTS value, in the order written. */
extern const char *const seg_meta_count_keys[3];
/* The groups in the JSON trace's order (the pftrace's too). */
extern const enum seg_meta_group seg_meta_trace_order[SMG_COUNT];

typedef void (*seg_meta_fn)(void *out, const struct seg_meta_field *f,
			    const union seg_meta_value *v);
/* @fn for each field of the @ngroups groups @order names, in that order. */
void seg_meta_each(const struct seg_output_ctx *c, const enum seg_meta_group *order,
		   size_t ngroups, seg_meta_fn fn, void *out);
/* The count of SM_COUNTS @n's @i-th key. */
uint64_t seg_meta_count(const struct seg_meta_counts *n, size_t i);
/* The row of @key, or NULL. */
const struct seg_meta_field *seg_meta_find(const char *key);
/* @f's value as json-c writes it (the summary JSON, the manifest's records). */
json_object *seg_meta_json_value(const struct seg_meta_field *f, const union seg_meta_value *v);
/* "key: value" and a newline for the text summary: strings made safe for a
 * terminal (text_clean_terminal()), numbers as the JSON writes them, counts
 * as "slices=N cuda_calls=N gpu_records=N"; an empty string leaves nothing
 * after the colon. */
void seg_meta_text_line(FILE *out, const struct seg_meta_field *f, const union seg_meta_value *v);
/* Microseconds with exactly three decimals, so nanoseconds survive. */
json_object *seg_meta_us_json(uint64_t ns);
/* @key's value for @c's segment, or NULL for a key not in the table. */
json_object *seg_meta_json(const struct seg_output_ctx *c, const char *key);

#endif /* FVBPF_SEG_META_H */
