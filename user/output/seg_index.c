// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/json_writer.h"
#include "output/seg_index.h"
#include "output/seg_meta.h"
#include "output/seg_files.h"

void seg_index_init(struct seg_index *ix, const char *outdir)
{
	memset(ix, 0, sizeof(*ix));
	ix->outdir = outdir;
}

/* Opened with the first record: a session that writes nothing (or a test
 * whose output directory does not exist) needs no file. */
static int seg_index_open(struct seg_index *ix)
{
	char path[PATH_MAX];
	int fd, w;

	w = snprintf(path, sizeof(path), "%s/.segments.jsonl.tmp.%d", ix->outdir, (int)getpid());
	if (w < 0 || (size_t)w >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	unlink(path);
	ix->f = fdopen(fd, "w+");
	if (!ix->f) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

/* The segment's own keys, in the records' order; their values are the table's (seg_meta.h). */
static const char *const record_keys[] = {
	"pid", "rank", "restart", "region", "segment", "incomplete", "started_before_attach",
	"truncated_by_memory", "start_unix_us", "end_unix_us", "step_key", "counted",
	"not_counted_why",
};

static void add_file(const char *key, const char *name, void *o)
{
	json_object_object_add(o, key, json_string_obj(name));
}

static json_object *record_json(const struct seg_output_ctx *c, const struct written_segment *w)
{
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < sizeof(record_keys) / sizeof(record_keys[0]); i++)
		json_object_object_add(o, record_keys[i], seg_meta_json(c, record_keys[i]));
	/* then its files, as the table of output kinds lists them */
	seg_files_listed(w, add_file, o);
	return o;
}

int seg_index_add(struct seg_index *ix, const struct seg_output_ctx *c,
		  const struct written_segment *ws)
{
	json_object *o;
	int ret = 0;

	if (!ix->f && (ret = seg_index_open(ix))) {
		ix->errors++;
		return ret;
	}
	o = record_json(c, ws);
	/* Plain: one record per line, whatever the strings hold. */
	if (fprintf(ix->f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								     JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
		ret = -(errno ? errno : EIO);
	json_object_put(o);
	if (ret)
		ix->errors++;
	else
		ix->count++;
	return ret;
}

int seg_index_each(struct seg_index *ix, seg_index_fn fn, void *ctx)
{
	char *line = NULL;
	size_t cap = 0;
	json_object *o;

	if (!ix->f)
		return 0;
	if (fflush(ix->f) || fseek(ix->f, 0, SEEK_SET))
		return -errno;
	while (getline(&line, &cap, ix->f) > 0) {
		/* A line cut by a failed write (counted in errors) is skipped. */
		o = json_tokener_parse(line);
		if (!o || !json_object_is_type(o, json_type_object)) {
			json_object_put(o);
			continue;
		}
		fn(o, ctx);
		json_object_put(o);
	}
	free(line);
	/* Back to the end: the next record goes after the last. */
	return fseek(ix->f, 0, SEEK_END) ? -errno : 0;
}

void seg_index_close(struct seg_index *ix)
{
	if (ix->f)
		fclose(ix->f);
	ix->f = NULL;
}
