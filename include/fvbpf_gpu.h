/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * GPU activity as the in-process agent hands it to BPF: fvbpf's own compact,
 * versioned records, decoded from CUPTI's buffers inside the process, so
 * that neither BPF nor the loader ever parses CUPTI layouts.  Timestamps are
 * CLOCK_MONOTONIC nanoseconds (CUPTI's clock callback, or calibrated).
 * Records are 8-byte aligned; `size` includes the header.
 */
#ifndef FVBPF_GPU_H
#define FVBPF_GPU_H

#include <stdint.h>

#define FVBPF_GPU_VERSION 1

enum fvbpf_gpu_kind {
	FVBPF_GPU_KERNEL = 1,
	FVBPF_GPU_MEMCPY = 2,
	FVBPF_GPU_MEMSET = 3,
	FVBPF_GPU_SYNC = 4,
	FVBPF_GPU_NAME = 5,     /* a kernel name, once per name and attach */
};

struct fvbpf_gpu_hdr {
	uint16_t kind;
	uint16_t size;
	uint32_t correlation;   /* name records: the name id */
};

struct fvbpf_gpu_span {
	struct fvbpf_gpu_hdr hdr;
	uint64_t start, end;
	uint32_t device, context, stream;
	uint32_t pad;
};

struct fvbpf_gpu_kernel {
	struct fvbpf_gpu_span s;
	uint32_t name_id;
	uint32_t registers;
	int32_t grid[3];
	int32_t block[3];
	int32_t static_smem, dynamic_smem;
	uint32_t graph_id;
	uint32_t pad;
};

struct fvbpf_gpu_memcpy {
	struct fvbpf_gpu_span s;
	uint64_t bytes;
	uint8_t copy_kind;      /* CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 8 DtoD, ... */
	uint8_t src_kind, dst_kind;
	uint8_t pad[5];
};

struct fvbpf_gpu_memset {
	struct fvbpf_gpu_span s;
	uint64_t bytes;
	uint32_t value;
	uint32_t pad;
};

struct fvbpf_gpu_sync {
	struct fvbpf_gpu_span s;
	uint32_t type;          /* CUpti_ActivitySynchronizationType */
	uint32_t pad;
};

#define FVBPF_GPU_NAME_MAX 1024
struct fvbpf_gpu_name {
	struct fvbpf_gpu_hdr hdr;
	char name[];            /* NUL-terminated, padded to 8 */
};

/* Agent status codes, reported through fvbpf_probe_agent_status(). */
enum fvbpf_agent_status {
	FVBPF_AGENT_ACTIVE = 1,          /* detail: clock mode (below) */
	FVBPF_AGENT_NO_CUPTI = 2,
	FVBPF_AGENT_CUPTI_ERROR = 3,     /* detail: CUptiResult */
	FVBPF_AGENT_OTHER_SUBSCRIBER = 4,
	FVBPF_AGENT_DROPPED = 5,         /* detail: records CUPTI dropped */
	FVBPF_AGENT_DORMANT = 6,
	FVBPF_AGENT_CUPTI_TOO_OLD = 7,
	FVBPF_AGENT_NO_CUDA = 8,         /* no libcudart/libcuda mapped (yet) */
};

enum fvbpf_gpu_clock {
	FVBPF_CLOCK_CALLBACK = 1,        /* CUPTI calls our CLOCK_MONOTONIC callback */
	FVBPF_CLOCK_CALIBRATED = 2,      /* min-gap offset against cuptiGetTimestamp */
	FVBPF_CLOCK_SIMULATED = 3,       /* a test double stamps CLOCK_MONOTONIC itself */
};

#ifndef __BPF__
/* The name of a clock mode in traces, summaries and the manifest. */
static inline const char *fvbpf_gpu_clock_name(int mode)
{
	switch (mode) {
	case FVBPF_CLOCK_CALLBACK: return "monotonic-callback";
	case FVBPF_CLOCK_CALIBRATED: return "calibrated";
	case FVBPF_CLOCK_SIMULATED: return "simulated";
	default: return "none";
	}
}
#endif

#ifndef __BPF__
_Static_assert(sizeof(struct fvbpf_gpu_hdr) == 8, "gpu hdr");
_Static_assert(sizeof(struct fvbpf_gpu_span) == 40, "gpu span");
_Static_assert(sizeof(struct fvbpf_gpu_kernel) == 88, "gpu kernel");
_Static_assert(sizeof(struct fvbpf_gpu_memcpy) == 56, "gpu memcpy");
_Static_assert(sizeof(struct fvbpf_gpu_memset) == 56, "gpu memset");
_Static_assert(sizeof(struct fvbpf_gpu_sync) == 48, "gpu sync");
#endif

#endif /* FVBPF_GPU_H */
