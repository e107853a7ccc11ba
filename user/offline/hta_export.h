/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * `fvbpf export`: fvbpf output directories as a folder that tools made for
 * Kineto's traces open as they are: one folder per region and segment
 * (step), in it one trace per rank named as TensorBoard's profiler plugin
 * names them,
 *   OUT/<region>/step<NNNN>/rank<R>[_restart<K>|_pid<P>].pt.trace.json[.gz]
 * so that HolisticTraceAnalysis's TraceAnalysis(trace_dir=...) reads one
 * step of every rank.  Traces are hard-linked (copied across filesystems);
 * pftrace files are skipped and counted.
 */
#ifndef FVBPF_HTA_EXPORT_H
#define FVBPF_HTA_EXPORT_H

#include <stddef.h>
#include <stdint.h>

struct manifest;

struct hta_export_stats {
	uint64_t traces, linked, copied, skipped_pftrace, skipped_other;
	uint64_t skipped_unranked; /* a launcher's: HTA would read them as rank 0 */
	uint64_t steps;           /* step folders made */
};

/* Export every trace of @m (whose manifest was read) under @outfd.  0, or
 * -errno with a one-line message naming the file in @err. */
int hta_export(const struct manifest *m, int outfd, struct hta_export_stats *st, char *err,
	       size_t errlen);
/* "rank3", "rank3_restart1", "rank3_pid4242": a file's name in its step. */
void hta_export_who(const struct manifest *m, size_t file, char *buf, size_t len);

#endif /* FVBPF_HTA_EXPORT_H */
