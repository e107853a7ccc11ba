/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What the files reading an output directory back (manifest_read.c,
 * read_files.c, read_summary.c) share and nobody else needs: typed getters of
 * JSON members, the message of a failed streaming read, region names
 * interned in the manifest.
 */
#ifndef FVBPF_MANIFEST_READ_INTERNAL_H
#define FVBPF_MANIFEST_READ_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "offline/manifest/manifest_read.h"
#include "util/json_stream.h"

static inline json_object *get(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static inline int get_int(json_object *o, const char *key, int def)
{
	json_object *v = get(o, key);

	return v && (json_object_is_type(v, json_type_int)) ? json_object_get_int(v) : def;
}

static inline int64_t get_i64(json_object *o, const char *key, int64_t def)
{
	json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : def;
}

static inline bool get_bool(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

static inline const char *get_str(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* A streaming read that failed without a message of its own. */
void mf_stream_error(char *err, size_t errlen, const char *path, const struct js_reader *r,
		     int ret, const struct mf_budget *b, size_t max);
/* @name as one of m->strs (added and charged if new): 0, or -errno. */
int mf_intern(struct manifest *m, const char *name, const char **out);
/* The keys that pair a segment with the other ranks' (manifest entry or
 * summary metadata @o; a key absent leaves @f as it is): 0 or -errno. */
int mf_step_keys(struct manifest *m, struct mf_file *f, json_object *o);

#endif /* FVBPF_MANIFEST_READ_INTERNAL_H */
