/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Reading an fvbpf output directory back: its manifest.json and the summary
 * JSON of each segment it lists, for `fvbpf report` and `fvbpf merge`.
 * Every field newer than the first manifests is optional (restart, region,
 * clock): a missing one takes its default (restart 0, region from the
 * summary, clock from the summary's start_wallclock).  The files are
 * treated as untrusted input (root reads directories other users may
 * write): names must be plain file names, opened beneath the directory's
 * descriptor as regular files only (no link, FIFO or device: see
 * open_regular_at()); files are streamed a value at a time (json_stream.h)
 * and what is kept is charged to --max-memory; numbers that do not fit in
 * int64 nanoseconds are not believed; errors name the file.
 */
#ifndef FVBPF_MANIFEST_READ_H
#define FVBPF_MANIFEST_READ_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/pair_index.h"
#include "util/row_table.h"

/* Largest manifest.json or summary JSON read (bytes, uncompressed): a bound
 * on time; memory does not grow with them (they are streamed). */
#define MF_JSON_MAX (256u << 20)
/* Largest files[] entry, hostname or clock value of a manifest (bytes). */
#define MF_ENTRY_MAX (64u << 10)
/* Longest step_key believed (bytes): a longer one is not a key (the file's
 * step_key_refused, the segment paired by time); not_counted_why is cut to
 * MF_WHY_MAX. */
#define MF_STEP_KEY_MAX 256
#define MF_WHY_MAX      128

/*
 * --max-memory of `fvbpf report` and `merge`: what their tables (file
 * lists, regions, ranks, operators, merge plans) may hold, charged as they
 * grow, so that a directory that lists too much is refused before the
 * process grows past the bound.  The RSS is looked at too, every
 * MF_RSS_EVERY charges, for what the estimates miss.
 */
#define MF_RSS_EVERY 1024

struct mf_budget {
	uint64_t max_memory;      /* --max-memory (0: nothing checked) */
	uint64_t limit;           /* bytes the tables may hold */
	uint64_t held, peak;
	unsigned int charges;
	bool over_rss;            /* the last refusal: the RSS, not the tables */
};

/* 0, or -ENOSPC when @bytes more would pass the bound (nothing charged).
 * @b may be NULL (not limited: tests). */
int mf_charge(struct mf_budget *b, uint64_t bytes);
void mf_uncharge(struct mf_budget *b, uint64_t bytes);
/* @b as the hook util/row_table.h's charged growth takes (NULL: none). */
struct charge_hook mf_charger(struct mf_budget *b);
/* grow_one() charging what the array gains: 0, -ENOSPC or -ENOMEM. */
int mf_grow(struct mf_budget *b, void *v, size_t n, size_t *cap, size_t size, size_t first);
/* pair_index_find() charging the index's growth: 1, 0, -ENOSPC or -ENOMEM. */
int mf_index_find(struct mf_budget *b, struct pair_index *x, const void *arr, size_t count,
		  pair_key_fn key, const char *name, const char *kind, size_t *pos);
/* The message for -ENOSPC: "over --max-memory 256M ...: give a larger ...". */
void mf_budget_error(const struct mf_budget *b, char *buf, size_t len);
/* One allocation of @n bytes, as charged: malloc() keeps a header. */
#define MF_ALLOC(n) ((uint64_t)(n) + 16)

/* Where a node's realtime - monotonic offset came from. */
enum mf_clock_source {
	MF_CLOCK_NONE = 0,      /* no way to align this directory */
	MF_CLOCK_MANIFEST,      /* "clock": start and end pairs */
	MF_CLOCK_WALLCLOCK,     /* a summary's start_wallclock and start_us (1 µs steps) */
};

struct mf_clock_pair {
	int64_t mono_ns, real_ns, span_ns;
};

/* One files[] entry: kept small, a directory may list 100,000 segments. */
/* A collective of a segment's summary ("collectives"), as its rank saw it. */
struct mf_coll {
	const char *name, *pg;    /* interned in the manifest ("" pg: not read) */
	uint64_t seq;
	int group_size;           /* 0: not read */
	int64_t arrive_ns, end_ns; /* CLOCK_MONOTONIC */
	int64_t bytes;            /* -1: not known */
	const char *dtype;        /* interned, "" not known */
};
/* Collectives kept per segment (more are counted in colls_dropped). */
#define MF_COLLS_MAX 100000

struct mf_file {
	int pid, rank, restart;
	uint64_t segment;
	bool incomplete, started_before_attach;
	bool counted;             /* counts toward -n, shown by default ("counted"; before
				   * the key: not started_before_attach) */
	bool have_unix;           /* start_unix_us/end_unix_us were given, start <= end */
	bool step_key_refused;    /* a step_key longer than MF_STEP_KEY_MAX or not text */
	bool pid_named;           /* another pid of this directory has the same rank and restart */
	bool have_summary;        /* its summary was read (mf_read_summaries()) */
	bool have_times;          /* start_us/end_us were present, start <= end */
	const char *region;       /* interned in the manifest; NULL until known */
	const char *step_key;     /* interned: "" none */
	const char *not_counted_why; /* interned: "" when counted */
	/* Plain file names inside the directory ("" if none): one allocation,
	 * owned by trace, summary_json points into it. */
	char *trace, *summary_json;
	int64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	int64_t start_unix_ns, end_unix_ns; /* CLOCK_REALTIME, when have_unix */
	int64_t duration_ns;
	json_object *rows;        /* mf_read_summaries(.., keep_rows): the rows (owned), or NULL */
	struct mf_coll *colls;    /* its summary's collectives (owned) */
	size_t ncolls, capcolls;
	uint64_t colls_dropped;   /* past MF_COLLS_MAX or without the fields */
	/* Its summary's "dataloader" (a trainer with DataLoader workers): the
	 * trainer's wait for batches and the batches received, when have_dl. */
	bool have_dl;
	int64_t dl_wait_ns;
	uint64_t dl_batches;
};

struct manifest {
	char *dir;                /* as given */
	int dirfd;                /* every file is opened beneath it */
	char *hostname;           /* "" when absent */
	enum mf_clock_source clock_source;
	struct mf_clock_pair clock_start, clock_end;
	int64_t offset_ns;        /* realtime - monotonic used for this node */
	/* Its clock against the first directory's, from the exits of the
	 * collectives they share (offline/clock_align.c): added to every
	 * wall-clock time of its segments; 0 when not estimated. */
	int64_t skew_ns;
	int64_t skew_spread_ns;   /* the estimate's interquartile range */
	size_t skew_pairs;        /* exits it was estimated from (0: not estimated) */
	int64_t uncertainty_ns;   /* |offset_end - offset_start| + read spans (manifest clock) */
	bool clock_invalid;       /* "clock" was there but out of range: ignored */
	struct mf_file *files;
	size_t nfiles, cap;
	uint64_t duplicates;      /* entries naming a summary (or trace) listed before: ignored */
	char **strs;              /* interned strings: region names, step keys, reasons */
	size_t nstrs, scap;
	struct pair_index str_index, file_index;
	struct mf_budget *budget; /* NULL: not limited */
};

/*
 * Read @dir/manifest.json into @m, streamed (entries one at a time),
 * duplicate entries dropped and counted, the tables charged to @budget
 * (may be NULL).  0, or a negative errno with a one-line message naming
 * the file in @err.
 */
int mf_read_budget(const char *dir, struct manifest *m, struct mf_budget *budget, char *err,
		   size_t errlen);
/* mf_read_budget() without a bound. */
int mf_read(const char *dir, struct manifest *m, char *err, size_t errlen);
/*
 * Read the summary JSON of every file of @m (or only those whose region is
 * @region, when not NULL and the region is known from the manifest), keep
 * its times, and its rows when @keep_rows (all of them in memory: tests and
 * small inputs; the commands stream them with mf_read_summaries_each()).
 * Fills in regions and, without a manifest clock, the offset from the first
 * summary's start_wallclock.
 */
int mf_read_summaries(struct manifest *m, const char *region, bool keep_rows, char *err,
		      size_t errlen);
/* Called with each row of a summary once its metadata is applied; the row
 * is freed after.  0, or a negative errno that stops the reading. */
typedef int (*mf_row_fn)(void *ctx, const struct manifest *m, const struct mf_file *f,
			 json_object *row);
/* mf_read_summaries(), each row given to @fn instead of kept. */
int mf_read_summaries_each(struct manifest *m, const char *region, mf_row_fn fn, void *ctx,
			   char *err, size_t errlen);
void mf_free(struct manifest *m);

/*
 * Segment @f's bounds on CLOCK_REALTIME (ns): its start_unix_us/end_unix_us,
 * else (directories written before them) start_us/end_us moved by @m's
 * realtime - monotonic offset.  0, -ENOENT (no times or no offset), or
 * -ERANGE (past int64: not a real segment).
 */
int mf_file_wallclock(const struct manifest *m, const struct mf_file *f, int64_t *start,
		      int64_t *end);

/* A CLOCK_MONOTONIC instant @mono_ns of segment @f on the wall clock, as
 * mf_file_wallclock() places the segment: 0, -ENOENT, or -ERANGE. */
int mf_file_at(const struct manifest *m, const struct mf_file *f, int64_t mono_ns, int64_t *real_ns);

/* realtime - monotonic of @m's node with the skew the collectives gave
 * (saturated: a sum past int64 is no real clock, and check_times refuses it). */
int64_t mf_node_offset(const struct manifest *m);

/* How mf_file_wallclock() puts @m's segments on the wall clock. */
enum mf_applied {
	MF_APPLIED_NONE,          /* not at all: no times or no offset */
	MF_APPLIED_ATTACH_START,  /* start_unix_us: monotonic + the offset at attach start */
	MF_APPLIED_MEAN,          /* monotonic + offset_ns (older directories) */
	MF_APPLIED_OWN,           /* start_unix_us without a manifest clock: offset unknown */
};

/*
 * The realtime - monotonic offset by which @m's segments are placed (said
 * by `fvbpf report`), and in *@moved_ns how far it moved by the attach's end
 * (0 when unknown).
 */
enum mf_applied mf_applied_offset(const struct manifest *m, int64_t *offset_ns,
				  int64_t *moved_ns);

/* Read a whole regular file (no link) of at most @max bytes, NUL-terminated; free() it. */
int mf_slurp(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen);
/* Parse JSON text of @path with a message naming the file and the error. */
int mf_parse_json(const char *path, const char *text, size_t len, json_object **out, char *err,
		  size_t errlen);
/* The message for open_regular_at()'s refusal of @path (file_open.h). */
void mf_open_error(char *err, size_t errlen, const char *path, int ret, uint64_t max);
/* "123.456" (µs, up to 3 decimals kept exactly) -> ns; -EINVAL if not a number. */
int mf_us_text_to_ns(const char *s, int64_t *ns);
/* A JSON number of µs as ns, exactly when written with <= 3 decimals. */
int mf_json_us_to_ns(json_object *o, int64_t *ns);
/* "2024-01-02T03:04:05.123456Z" -> ns since the epoch; -ERANGE past int64. */
int mf_parse_wallclock(const char *s, int64_t *ns);
/*
 * The node's offset from start/end pairs: mean of the two offsets; the
 * uncertainty |end - start| + both read spans.  -ERANGE when a value is
 * negative or a result does not fit in int64 (the manifest is not to be
 * believed), with nothing written.
 */
int mf_clock_offset(const struct mf_clock_pair *start, const struct mf_clock_pair *end,
		    int64_t *offset_ns, int64_t *uncertainty_ns);

#endif /* FVBPF_MANIFEST_READ_H */
