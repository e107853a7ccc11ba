/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --profile-memory: one record per allocator event inside a segment
 * (bpf/memory.bpf.c), shared by BPF and the loader.  Three probed functions
 * of libc10.so, named by the uprobe cookie's low bits:
 *
 *   FVBPF_MEM_CPU_NEW     ProfiledCPUMemoryReporter::New(this, ptr, nbytes):
 *                         every CPU allocation of c10's default allocator
 *   FVBPF_MEM_CPU_DELETE  ProfiledCPUMemoryReporter::Delete(this, ptr): its
 *                         free; the loader knows the size from the New
 *   FVBPF_MEM_REPORT      reportMemoryUsageToProfiler(ptr, alloc_size,
 *                         total_allocated, total_reserved, Device): the CUDA
 *                         (and other device) caching allocators call it on
 *                         every allocation and free, profiler on or not.
 *                         CPU device records are skipped in BPF: torch's CPU
 *                         reporter calls it only under its own profiler, and
 *                         New/Delete already saw them.
 */
#ifndef FVBPF_MEM_H
#define FVBPF_MEM_H

#ifdef __BPF__
/* vmlinux.h provides __u8 ... __u64 */
#else
#include <linux/types.h>
#endif

#include "fvbpf_events.h"

#define FVBPF_EV_MEM 24         /* enum fvbpf_event_type: an allocator event */

enum fvbpf_mem_kind {
	FVBPF_MEM_CPU_NEW = 1,
	FVBPF_MEM_CPU_DELETE = 2,
	FVBPF_MEM_REPORT = 3,
};

/* c10::DeviceType values the loader names (c10/core/DeviceType.h) */
#define FVBPF_DEV_CPU 0
#define FVBPF_DEV_CUDA 1

struct fvbpf_mem_event {
	struct fvbpf_event_hdr hdr;
	__u64 addr;
	__s64 bytes;            /* NEW: nbytes; REPORT: alloc_size (< 0: a free); DELETE: 0 */
	__u64 total_allocated;  /* REPORT only: the allocator's running totals */
	__u64 total_reserved;
	__u8 kind;              /* enum fvbpf_mem_kind */
	__u8 dev_type;          /* c10::Device, passed by value in r8: type, */
	__s8 dev_index;         /* ... index (-1: the current device) */
	__u8 pad;
	__u32 drops;            /* the process's drops before this record, low 32 bits */
};

#ifndef __BPF__
_Static_assert(sizeof(struct fvbpf_mem_event) == 24 + 40, "mem event layout");
#endif

#endif /* FVBPF_MEM_H */
