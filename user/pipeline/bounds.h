/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What fvbpf stopped keeping because a target drove it past a bound (names,
 * symbol files, caches): gathered for the exit report and the manifest.
 */
#ifndef FVBPF_BOUNDS_H
#define FVBPF_BOUNDS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/session.h"

struct bounds {
	uint64_t symbol_files_evicted;   /* the symbolizer's file cache */
	uint64_t symbol_tables_capped;   /* files with symbols skipped or cut */
	uint64_t maps_capped;            /* /proc/PID/maps reads cut */
	uint64_t names_demangle_capped;  /* names too long to demangle, or cut */
	uint64_t kernel_names_capped;    /* names past the name table's bounds */
	uint64_t addresses_not_cached;   /* address caches full */
};

void bounds_collect(const struct session *s, struct bounds *b);
bool bounds_any(const struct bounds *b);
/* Add these bounds themselves to the manifest's "limits" object. */
void bounds_limits_json(json_object *limits);

#endif /* FVBPF_BOUNDS_H */
