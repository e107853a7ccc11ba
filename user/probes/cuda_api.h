/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The table of probed CUDA runtime, driver and NCCL calls.  One row per
 * call: symbol, layer, category and argument decoder; each row expands into
 * its plain, _ptsz and _ptds symbols (whichever a library defines).  The row
 * index (times 3, plus the variant) is the api id BPF gets as uprobe cookie.
 */
#ifndef FVBPF_CUDA_API_H
#define FVBPF_CUDA_API_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fvbpf_events.h"

/* LAYER_GLOO: PyTorch's gloo backend in libtorch_cpu, whose calls are not
 * shown as calls but joined into collectives (pipeline/collectives.h). */
enum api_layer { LAYER_RUNTIME, LAYER_DRIVER, LAYER_NCCL, LAYER_GLOO };

enum api_category {
	CAT_LAUNCH, CAT_GRAPH, CAT_MEMCPY, CAT_MEMSET, CAT_ALLOC, CAT_FREE,
	CAT_SYNC, CAT_EVENT, CAT_COLLECTIVE, CAT_GROUP,
};

enum api_decoder {
	DEC_NONE,
	DEC_LAUNCH_RT,      /* func, dim3 grid (2 regs), dim3 block (2 regs), args, shmem, stream */
	DEC_LAUNCH_RT_EXC,  /* const cudaLaunchConfig_t *, func, args */
	DEC_LAUNCH_DRV,     /* f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra */
	DEC_LAUNCH_DRV_EX,  /* const CUlaunchConfig *, f, params, extra */
	DEC_GRAPH,          /* exec, stream */
	DEC_MEMCPY,         /* dst, src, bytes, kind[, stream] */
	DEC_MEMCPY2D,       /* dst, dpitch, src, spitch, width, height, kind[, stream] */
	DEC_MEMCPY_DRV,     /* dst, src, bytes[, stream] (direction in the name) */
	DEC_MEMSET,         /* ptr, value, bytes[, stream] */
	DEC_ALLOC,          /* void **ptr, bytes[, stream or flags] */
	DEC_FREE,           /* ptr[, stream] */
	DEC_STREAM,         /* stream */
	DEC_EVENT,          /* event[, stream] */
	DEC_STREAM_EVENT,   /* stream, event, flags */
	DEC_NCCL_RED,       /* send, recv, count, dtype, op, comm, stream */
	DEC_NCCL_GATHER,    /* send, recv, count, dtype, comm, stream */
	DEC_NCCL_BCAST,     /* send, recv, count, dtype, root, comm, stream */
	DEC_NCCL_REDUCE,    /* send, recv, count, dtype, op, root, comm, stream */
	DEC_NCCL_P2P,       /* buf, count, dtype, peer, comm, stream */
	DEC_GET_KERNEL,     /* cudaKernel_t *handle (out), const void *host function */
	DEC_GLOO_WORK,      /* AsyncWork(this, &context, &outputs, opType, seq, timeout, title, &inputs) */
	DEC_GLOO_ENQUEUE,   /* ProcessGroupGloo::enqueue(this, &work) */
	DEC_GLOO_EXEC,      /* AsyncWork::execute(&work), on the backend's thread */
};

#define API_ASYNC 0x1u      /* takes a stream after the listed arguments */
#define API_ALWAYS 0x2u     /* recorded outside segments too (plumbing, not shown) */


struct api_row {
	const char *symbol;
	enum api_layer layer;
	enum api_category category;
	enum api_decoder decoder;
	unsigned int flags;
	int stream_arg;         /* index of the stream argument, -1 if none */
	const char *direction;  /* for driver copies: "HtoD", ... */
};

#define API_VARIANTS 3      /* "", "_ptsz", "_ptds" */

/* Number of api ids (rows x variants). */
unsigned int cuda_api_count(void);
const struct api_row *cuda_api_row(unsigned int api_id);
/* The symbol of an api id, e.g. "cudaMemcpyAsync_ptsz". */
const char *cuda_api_symbol(unsigned int api_id);
/* Unknown symbol: -1. */
int cuda_api_find(const char *symbol);
const char *cuda_api_layer_cat(enum api_layer layer); /* "cuda_runtime", ... */
bool cuda_api_is_launch(unsigned int api_id);
/* Launches, copies and sets: calls that leave a GPU record behind. */
bool cuda_api_expects_gpu(unsigned int api_id);
/* The uprobe cookie of an api id for the process in @slot. */
uint64_t cuda_api_cookie(unsigned int api_id, unsigned int slot);
/* Fill BPF's api_cfg map: what to read behind pointers. */
int cuda_api_fill_cfg(int map_fd);

/* A paired call, arguments raw as BPF captured them. */
struct api_call {
	uint32_t tid;
	uint32_t api_id;
	uint64_t start_ns, end_ns;
	uint64_t args[FVBPF_API_ARGS];
	uint8_t deref[FVBPF_API_DEREF];
	uint32_t deref_len;
	int32_t ret;
	uint64_t out;
	uint32_t depth;         /* 0: outermost probed call on its thread */
	uint32_t kernel;        /* name id of the launched kernel, 0 if none */
	bool no_return;         /* the thread left before we saw it return */
	uint32_t correlation;   /* CUPTI's, from the agent's callback; 0 if none */
	uint32_t correlation2;  /* a second one (driver callback inside the runtime's) */
	uint32_t gpu_records;   /* GPU records joined to it */
	uint32_t stack;         /* --with-stack (launches): id in the pystack table, 0 none */
};

/* The host function a launch names (cudaLaunchKernel's func, cuLaunchKernel's f). */
uint64_t cuda_api_launch_func(const struct api_call *c);
struct obuf;
/* Decoded arguments as JSON members (",\"bytes\":4096,..."), into the
 * trace writer's buffer (text_out.h). */
void cuda_api_write_args(struct obuf *o, const struct api_call *c);
/* Bytes moved or set or allocated, 0 when not applicable. */
uint64_t cuda_api_bytes(const struct api_call *c);
/* "cudaErrorInsufficientDriver", "CUDA_SUCCESS", "ncclSuccess", or "error 123". */
const char *cuda_api_ret_name(const struct api_call *c, char *buf, size_t len);

#endif /* FVBPF_CUDA_API_H */
