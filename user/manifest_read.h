/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Reading an fvbpf output directory back: its manifest.json and the summary
 * JSON of each segment it lists, for `fvbpf report` and `fvbpf merge`.
 * Every field newer than the first manifests is optional (restart, region,
 * clock): a missing one takes its default (restart 0, region from the
 * summary, clock from the summary's start_wallclock).  The files are
 * treated as untrusted input: sizes are bounded, names must be plain file
 * names inside the directory, and errors name the file.
 */
#ifndef FVBPF_MANIFEST_READ_H
#define FVBPF_MANIFEST_READ_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest manifest.json or summary JSON read (bytes). */
#define MF_JSON_MAX (256u << 20)

/* Where a node's realtime - monotonic offset came from. */
enum mf_clock_source {
	MF_CLOCK_NONE = 0,      /* no way to align this directory */
	MF_CLOCK_MANIFEST,      /* "clock": start and end pairs */
	MF_CLOCK_WALLCLOCK,     /* a summary's start_wallclock and start_us (1 µs steps) */
};

struct mf_clock_pair {
	int64_t mono_ns, real_ns, span_ns;
};

struct mf_file {
	int pid, rank, restart;
	uint64_t segment;
	bool incomplete, started_before_attach;
	bool pid_named;           /* another pid of this directory has the same rank and restart */
	char *region;             /* NULL until known (files[].region or the summary) */
	char *trace, *summary_json; /* plain file names inside the directory ("" if none) */
	/* From the summary JSON (mf_read_summaries()). */
	bool have_summary;
	bool have_times;          /* start_us/end_us were present */
	int64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	int64_t duration_ns;
	char *wallclock;          /* start_wallclock, or NULL */
	json_object *rows;        /* the summary's "rows" (owned), or NULL */
};

struct manifest {
	char *dir;                /* as given */
	char *hostname;           /* "" when absent */
	enum mf_clock_source clock_source;
	struct mf_clock_pair clock_start, clock_end;
	int64_t offset_ns;        /* realtime - monotonic used for this node */
	int64_t uncertainty_ns;   /* |offset_end - offset_start| + read spans (manifest clock) */
	struct mf_file *files;
	size_t nfiles;
};

/*
 * Read @dir/manifest.json into @m.  0, or a negative errno with a one-line
 * message naming the file in @err.
 */
int mf_read(const char *dir, struct manifest *m, char *err, size_t errlen);
/*
 * Read the summary JSON of every file of @m (or only those whose region is
 * @region, when not NULL and the region is known from the manifest), keep
 * its times, and its rows when @keep_rows.  Fills in regions and, without a
 * manifest clock, the offset from the first summary's start_wallclock.
 */
int mf_read_summaries(struct manifest *m, const char *region, bool keep_rows, char *err,
		      size_t errlen);
void mf_free(struct manifest *m);

/* Read a whole file of at most @max bytes, NUL-terminated; free() it. */
int mf_slurp(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen);
/* Parse JSON text of @path with a message naming the file and the error. */
int mf_parse_json(const char *path, const char *text, size_t len, json_object **out, char *err,
		  size_t errlen);
/* "123.456" (µs, up to 3 decimals kept exactly) -> ns; -EINVAL if not a number. */
int mf_us_text_to_ns(const char *s, int64_t *ns);
/* A JSON number of µs as ns, exactly when written with <= 3 decimals. */
int mf_json_us_to_ns(json_object *o, int64_t *ns);
/* "2024-01-02T03:04:05.123456Z" -> ns since the epoch. */
int mf_parse_wallclock(const char *s, int64_t *ns);
/* The node's offset from start/end pairs: mean of the two offsets; the
 * uncertainty |end - start| + both read spans. */
void mf_clock_offset(const struct mf_clock_pair *start, const struct mf_clock_pair *end,
		     int64_t *offset_ns, int64_t *uncertainty_ns);

#endif /* FVBPF_MANIFEST_READ_H */
