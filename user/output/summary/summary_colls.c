// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <json-c/json.h>

#include "output/seg_meta.h"
#include "output/summary/summary.h"
#include "output/summary/summary_colls.h"
#include "pipeline/segment.h"

static json_object *name_json(const struct seg_output_ctx *c, uint32_t id)
{
	char buf[512];

	if (!id)
		return NULL; /* null: not read */
	name_table_get(c->knames, id, buf, sizeof(buf));
	return json_object_new_string(buf);
}

static json_object *coll_json(const struct seg_output_ctx *c, const struct collective *k)
{
	json_object *o = json_object_new_object();
	char title[256];

	if (!o)
		return NULL;
	name_table_get(c->knames, k->name, title, sizeof(title));
	json_object_object_add(o, "name", k->name ? json_object_new_string(coll_short_name(title)) :
						    json_object_new_string("unknown"));
	json_object_object_add(o, "title", name_json(c, k->name));
	json_object_object_add(o, "pg", name_json(c, k->pg_name));
	json_object_object_add(o, "pg_desc", name_json(c, k->pg_desc));
	json_object_object_add(o, "seq", json_object_new_uint64(k->seq));
	if (k->group_size > 0) {
		json_object_object_add(o, "group_rank", json_object_new_int(k->group_rank));
		json_object_object_add(o, "group_size", json_object_new_int(k->group_size));
	}
	json_object_object_add(o, "tensors", json_object_new_uint64(k->tensors));
	json_object_object_add(o, "nelems", k->sized ? json_object_new_uint64(k->nelems) : NULL);
	json_object_object_add(o, "bytes", k->sized ? json_object_new_uint64(k->bytes) : NULL);
	json_object_object_add(o, "dtype", k->sized ? json_object_new_string(coll_dtype_name(k->dtype)) :
						    NULL);
	json_object_object_add(o, "arrive_us", seg_meta_us_json(k->arrive_ns));
	json_object_object_add(o, "start_us", seg_meta_us_json(k->start_ns));
	json_object_object_add(o, "end_us", seg_meta_us_json(k->end_ns));
	json_object_object_add(o, "arrive_tid", json_object_new_uint64(k->arrive_tid));
	json_object_object_add(o, "tid", json_object_new_uint64(k->tid));
	return o;
}

int summary_colls_json(FILE *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	size_t i;
	int ret = 0;

	if (!s->ncolls)
		return 0;
	fputs(",\n  \"collectives\": [", f);
	for (i = 0; i < s->ncolls && !ret; i++)
		ret = summary_put_item(f, coll_json(c, &s->colls[i]), i);
	fputs("\n  ]", f);
	return ret;
}
