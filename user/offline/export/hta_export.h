/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * `fvbpf export`: fvbpf output directories as a folder that tools made for
 * Kineto's traces open as they are: one folder per region and training
 * step, in it one trace per rank named as TensorBoard's profiler plugin
 * names them,
 *   OUT/<region>/step<NNNN>/rank<R>[_restart<K>|_pid<P>][_dir<D>].pt.trace.json[.gz]
 * so that HolisticTraceAnalysis's TraceAnalysis(trace_dir=...) reads one
 * step of every rank.  The ranks' segments are paired by step across all
 * the directories given (step_pairs.h: step key, else wall-clock overlap,
 * never segment number); NNNN numbers a region's steps from 0 in time
 * order.  _dir<D> (the directory's place on the command line, from 0) only
 * where two directories hold the same rank.  Segments with counted false
 * are left out unless asked for.  Traces are hard-linked (copied across
 * filesystems); pftrace files, launchers' traces (no rank) and segments
 * without wall-clock times are skipped and counted.
 */
#ifndef FVBPF_HTA_EXPORT_H
#define FVBPF_HTA_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct manifest;
struct mf_budget;

struct hta_export_stats {
	uint64_t traces, linked, copied, skipped_pftrace, skipped_other;
	uint64_t skipped_unranked; /* a launcher's: HTA would read them as rank 0 */
	uint64_t uncounted;       /* counted false: left out (or exported, when asked) */
	uint64_t no_times;        /* no wall-clock times: cannot be paired, not exported */
	uint64_t steps;           /* step folders made */
	uint64_t step_sets;       /* steps exported (all regions) */
	uint64_t steps_missing;   /* ... of which some rank has no segment */
};

struct hta_export_opts {
	bool with_uncounted;      /* export counted-false segments too */
	struct mf_budget *budget; /* the pairing's tables (NULL: not limited) */
};

/* Export the traces of the @n manifests @ms (summaries read) under @outfd.
 * 0, or -errno with a one-line message naming the file in @err. */
int hta_export(const struct manifest *ms, size_t n, int outfd, const struct hta_export_opts *o,
	       struct hta_export_stats *st, char *err, size_t errlen);
/* "rank3", "rank3_restart1", "rank3_pid4242": a file's name in its step. */
void hta_export_who(const struct manifest *m, size_t file, char *buf, size_t len);

#endif /* FVBPF_HTA_EXPORT_H */
