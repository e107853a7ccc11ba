// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "util/checked_math.h"
#include "probes/cuda_api.h"
#include "probes/cuda_errors.h"
#include "util/text_out.h"

#define R LAYER_RUNTIME
#define D LAYER_DRIVER
#define N LAYER_NCCL
#define G LAYER_GLOO


/* Adding a call is one row. */
static const struct api_row rows[] = {
	/* runtime: launches */
	{ "cudaLaunchKernel", R, CAT_LAUNCH, DEC_LAUNCH_RT, API_ASYNC, 7, NULL },
	{ "cudaLaunchKernelExC", R, CAT_LAUNCH, DEC_LAUNCH_RT_EXC, API_ASYNC, -1, NULL },
	{ "cudaLaunchCooperativeKernel", R, CAT_LAUNCH, DEC_LAUNCH_RT, API_ASYNC, 7, NULL },
	{ "cudaGraphLaunch", R, CAT_GRAPH, DEC_GRAPH, API_ASYNC, 1, NULL },
	/* runtime: copies and sets */
	{ "cudaMemcpy", R, CAT_MEMCPY, DEC_MEMCPY, 0, -1, NULL },
	{ "cudaMemcpyAsync", R, CAT_MEMCPY, DEC_MEMCPY, API_ASYNC, 4, NULL },
	{ "cudaMemcpy2D", R, CAT_MEMCPY, DEC_MEMCPY2D, 0, -1, NULL },
	{ "cudaMemcpy2DAsync", R, CAT_MEMCPY, DEC_MEMCPY2D, API_ASYNC, 7, NULL },
	{ "cudaMemset", R, CAT_MEMSET, DEC_MEMSET, 0, -1, NULL },
	{ "cudaMemsetAsync", R, CAT_MEMSET, DEC_MEMSET, API_ASYNC, 3, NULL },
	/* runtime: memory */
	{ "cudaMalloc", R, CAT_ALLOC, DEC_ALLOC, 0, -1, NULL },
	{ "cudaFree", R, CAT_FREE, DEC_FREE, 0, -1, NULL },
	{ "cudaMallocAsync", R, CAT_ALLOC, DEC_ALLOC, API_ASYNC, 2, NULL },
	{ "cudaFreeAsync", R, CAT_FREE, DEC_FREE, API_ASYNC, 1, NULL },
	{ "cudaMallocHost", R, CAT_ALLOC, DEC_ALLOC, 0, -1, NULL },
	{ "cudaHostAlloc", R, CAT_ALLOC, DEC_ALLOC, 0, -1, NULL },
	{ "cudaFreeHost", R, CAT_FREE, DEC_FREE, 0, -1, NULL },
	/* runtime: synchronisation and events */
	{ "cudaDeviceSynchronize", R, CAT_SYNC, DEC_NONE, 0, -1, NULL },
	{ "cudaStreamSynchronize", R, CAT_SYNC, DEC_STREAM, 0, 0, NULL },
	{ "cudaEventSynchronize", R, CAT_SYNC, DEC_EVENT, 0, -1, NULL },
	{ "cudaEventRecord", R, CAT_EVENT, DEC_EVENT, API_ASYNC, 1, NULL },
	{ "cudaStreamWaitEvent", R, CAT_EVENT, DEC_STREAM_EVENT, API_ASYNC, 0, NULL },
	/* driver */
	{ "cuLaunchKernel", D, CAT_LAUNCH, DEC_LAUNCH_DRV, API_ASYNC, 8, NULL },
	{ "cuLaunchKernelEx", D, CAT_LAUNCH, DEC_LAUNCH_DRV_EX, API_ASYNC, -1, NULL },
	{ "cuGraphLaunch", D, CAT_GRAPH, DEC_GRAPH, API_ASYNC, 1, NULL },
	{ "cuMemcpyHtoD_v2", D, CAT_MEMCPY, DEC_MEMCPY_DRV, 0, -1, "HtoD" },
	{ "cuMemcpyDtoH_v2", D, CAT_MEMCPY, DEC_MEMCPY_DRV, 0, -1, "DtoH" },
	{ "cuMemcpyDtoD_v2", D, CAT_MEMCPY, DEC_MEMCPY_DRV, 0, -1, "DtoD" },
	{ "cuMemcpyHtoDAsync_v2", D, CAT_MEMCPY, DEC_MEMCPY_DRV, API_ASYNC, 3, "HtoD" },
	{ "cuMemcpyDtoHAsync_v2", D, CAT_MEMCPY, DEC_MEMCPY_DRV, API_ASYNC, 3, "DtoH" },
	{ "cuMemcpyDtoDAsync_v2", D, CAT_MEMCPY, DEC_MEMCPY_DRV, API_ASYNC, 3, "DtoD" },
	{ "cuMemAlloc_v2", D, CAT_ALLOC, DEC_ALLOC, 0, -1, NULL },
	{ "cuMemFree_v2", D, CAT_FREE, DEC_FREE, 0, -1, NULL },
	{ "cuMemAllocAsync", D, CAT_ALLOC, DEC_ALLOC, API_ASYNC, 2, NULL },
	{ "cuCtxSynchronize", D, CAT_SYNC, DEC_NONE, 0, -1, NULL },
	{ "cuStreamSynchronize", D, CAT_SYNC, DEC_STREAM, 0, 0, NULL },
	{ "cuEventSynchronize", D, CAT_SYNC, DEC_EVENT, 0, -1, NULL },
	/* NCCL */
	{ "ncclAllReduce", N, CAT_COLLECTIVE, DEC_NCCL_RED, API_ASYNC, 6, NULL },
	{ "ncclAllGather", N, CAT_COLLECTIVE, DEC_NCCL_GATHER, API_ASYNC, 5, NULL },
	{ "ncclReduceScatter", N, CAT_COLLECTIVE, DEC_NCCL_RED, API_ASYNC, 6, NULL },
	{ "ncclBroadcast", N, CAT_COLLECTIVE, DEC_NCCL_BCAST, API_ASYNC, 6, NULL },
	{ "ncclReduce", N, CAT_COLLECTIVE, DEC_NCCL_REDUCE, API_ASYNC, 7, NULL },
	{ "ncclSend", N, CAT_COLLECTIVE, DEC_NCCL_P2P, API_ASYNC, 5, NULL },
	{ "ncclRecv", N, CAT_COLLECTIVE, DEC_NCCL_P2P, API_ASYNC, 5, NULL },
	{ "ncclGroupStart", N, CAT_GROUP, DEC_NONE, 0, -1, NULL },
	{ "ncclGroupEnd", N, CAT_GROUP, DEC_NONE, 0, -1, NULL },
	/*
	 * CUDA 13's <<<>>> passes cudaLaunchKernel a handle made once per
	 * kernel by __cudaGetKernel(&handle, host_stub): seeing that call
	 * maps the handle back to the stub, whose symbol names the kernel.
	 */
	{ "__cudaGetKernel", R, CAT_LAUNCH, DEC_GET_KERNEL, API_ALWAYS, -1, NULL },
	/* gloo (the constructor's complete and base-object symbols are one function) */
	{ "_ZN4c10d16ProcessGroupGloo9AsyncWorkC1ESt10shared_ptrIN4gloo7ContextEESt6vectorIS6_"
	  "IN2at6TensorESaIS8_EESaISA_EENS_6OpTypeEmNSt6chrono8durationIlSt5ratioILl1ELl1000EEEEPKc"
	  "RKSt8optionalISA_E", G, CAT_COLLECTIVE, DEC_GLOO_WORK, 0, -1, NULL },
	{ "_ZN4c10d16ProcessGroupGloo9AsyncWorkC2ESt10shared_ptrIN4gloo7ContextEESt6vectorIS6_"
	  "IN2at6TensorESaIS8_EESaISA_EENS_6OpTypeEmNSt6chrono8durationIlSt5ratioILl1ELl1000EEEEPKc"
	  "RKSt8optionalISA_E", G, CAT_COLLECTIVE, DEC_GLOO_WORK, 0, -1, NULL },
	{ "_ZN4c10d16ProcessGroupGloo7enqueueEN3c1013intrusive_ptrINS0_9AsyncWorkENS1_6detail34"
	  "intrusive_target_default_null_typeIS3_EEEE", G, CAT_COLLECTIVE, DEC_GLOO_ENQUEUE, 0, -1, NULL },
	{ "_ZN4c10d16ProcessGroupGloo9AsyncWork7executeERKN3c1013intrusive_ptrIS1_NS2_6detail34"
	  "intrusive_target_default_null_typeIS1_EEEE", G, CAT_COLLECTIVE, DEC_GLOO_EXEC, 0, -1, NULL },
};

#undef R
#undef D
#undef N
#undef G

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static const char *const variants[API_VARIANTS] = { "", "_ptsz", "_ptds" };

_Static_assert(NROWS * API_VARIANTS <= FVBPF_MAX_APIS, "api ids fit the BPF map");

unsigned int cuda_api_count(void)
{
	return NROWS * API_VARIANTS;
}

const struct api_row *cuda_api_row(unsigned int api_id)
{
	return api_id < cuda_api_count() ? &rows[api_id / API_VARIANTS] : NULL;
}

const char *cuda_api_symbol(unsigned int api_id)
{
	static __thread char buf[API_VARIANTS * 64][64];
	const struct api_row *r = cuda_api_row(api_id);
	char *b;

	if (!r)
		return "unknown";
	if (api_id % API_VARIANTS == 0)
		return r->symbol;
	b = buf[api_id % (API_VARIANTS * 64)];
	snprintf(b, 64, "%s%s", r->symbol, variants[api_id % API_VARIANTS]);
	return b;
}

int cuda_api_find(const char *symbol)
{
	size_t i, v, len;

	for (i = 0; i < NROWS; i++) {
		/* Every function of every mapped library is asked (libtorch_cpu:
		 * 600k, most of them "_Z..."): two bytes rule out nearly all rows
		 * before a strlen and strncmp each.  symbol[1] is read only when
		 * symbol[0] matched a row's first byte, never the NUL. */
		if (rows[i].symbol[0] != symbol[0] || rows[i].symbol[1] != symbol[1])
			continue;
		len = strlen(rows[i].symbol);
		if (strncmp(symbol, rows[i].symbol, len))
			continue;
		for (v = 0; v < API_VARIANTS; v++)
			if (!strcmp(symbol + len, variants[v]))
				return (int)(i * API_VARIANTS + v);
	}
	return -1;
}

const char *cuda_api_layer_cat(enum api_layer layer)
{
	switch (layer) {
	case LAYER_RUNTIME: return "cuda_runtime";
	case LAYER_DRIVER: return "cuda_driver";
	case LAYER_NCCL: return "nccl";
	case LAYER_GLOO: return "gloo";
	}
	return "?";
}

uint64_t cuda_api_cookie(unsigned int api_id, unsigned int slot)
{
	const struct api_row *r = cuda_api_row(api_id);

	return api_id | (r && (r->flags & API_ALWAYS) ? FVBPF_COOKIE_ALWAYS : 0) |
	       ((uint64_t)slot << FVBPF_COOKIE_SLOT_SHIFT);
}

bool cuda_api_is_launch(unsigned int api_id)
{
	const struct api_row *r = cuda_api_row(api_id);

	return r && r->category == CAT_LAUNCH;
}

bool cuda_api_expects_gpu(unsigned int api_id)
{
	const struct api_row *r = cuda_api_row(api_id);

	return r && r->decoder != DEC_GET_KERNEL &&
	       (r->category == CAT_LAUNCH || r->category == CAT_GRAPH ||
		r->category == CAT_MEMCPY || r->category == CAT_MEMSET);
}

/* How many of a call's arguments are on the stack (the 7th on). */
static uint8_t stack_args(const struct api_row *r)
{
	switch (r->decoder) {
	case DEC_LAUNCH_RT: return 2;        /* shmem, stream */
	case DEC_LAUNCH_DRV: return 4;       /* bz, shmem, stream, params */
	case DEC_MEMCPY2D: return 2;         /* kind, stream */
	case DEC_NCCL_RED: return 1;         /* stream */
	case DEC_NCCL_BCAST: return 1;
	case DEC_NCCL_REDUCE: return 2;      /* comm, stream */
	case DEC_GLOO_WORK: return 2;        /* title, &inputs */
	default: return 0;
	}
}

int cuda_api_fill_cfg(int map_fd)
{
	struct fvbpf_api_cfg cfg;
	const struct api_row *r;
	uint32_t id;

	for (id = 0; id < cuda_api_count(); id++) {
		r = cuda_api_row(id);
		memset(&cfg, 0, sizeof(cfg));
		cfg.out_arg = FVBPF_NO_ARG;
		cfg.tensors_arg = FVBPF_NO_ARG;
		if (r->decoder == DEC_LAUNCH_RT_EXC || r->decoder == DEC_LAUNCH_DRV_EX) {
			cfg.deref_arg = 0; /* the launch config struct */
			cfg.deref_len = FVBPF_API_DEREF;
		}
		if (r->decoder == DEC_ALLOC || r->decoder == DEC_GET_KERNEL)
			cfg.out_arg = 0;
		/* the work behind its intrusive_ptr (passed by reference) */
		if (r->decoder == DEC_GLOO_ENQUEUE || r->decoder == DEC_GLOO_EXEC) {
			cfg.deref_arg = r->decoder == DEC_GLOO_ENQUEUE ? 1 : 0;
			cfg.deref_len = 8;
		}
		if (r->decoder == DEC_GLOO_WORK) /* its inputs' sizes */
			cfg.tensors_arg = 7;
		cfg.stack_args = stack_args(r);
		if (bpf_map_update_elem(map_fd, &id, &cfg, BPF_ANY))
			return -errno;
	}
	return 0;
}

static uint32_t lo32(uint64_t v) { return (uint32_t)v; }
static uint32_t hi32(uint64_t v) { return (uint32_t)(v >> 32); }

static uint32_t deref_u32(const struct api_call *c, size_t off)
{
	uint32_t v = 0;

	if (c->deref_len >= off + sizeof(v))
		memcpy(&v, c->deref + off, sizeof(v));
	return v;
}

static uint64_t deref_u64(const struct api_call *c, size_t off)
{
	uint64_t v = 0;

	if (c->deref_len >= off + sizeof(v))
		memcpy(&v, c->deref + off, sizeof(v));
	return v;
}

uint64_t cuda_api_launch_func(const struct api_call *c)
{
	const struct api_row *r = cuda_api_row(c->api_id);

	if (!r)
		return 0;
	switch (r->decoder) {
	case DEC_LAUNCH_RT:
	case DEC_LAUNCH_DRV:
		return c->args[0];
	case DEC_LAUNCH_RT_EXC:
	case DEC_LAUNCH_DRV_EX:
		return c->args[1];
	default:
		return 0;
	}
}

/* Host-side functions are symbolised; a CUfunction is a driver handle. */
static bool launch_func_is_host_stub(const struct api_row *r)
{
	return r->decoder == DEC_LAUNCH_RT || r->decoder == DEC_LAUNCH_RT_EXC;
}

uint64_t cuda_api_bytes(const struct api_call *c)
{
	const struct api_row *r = cuda_api_row(c->api_id);

	if (!r)
		return 0;
	switch (r->decoder) {
	case DEC_MEMCPY:
	case DEC_MEMSET:
	case DEC_MEMCPY_DRV:
		return c->args[2];
	case DEC_MEMCPY2D: /* width x height, the target's numbers: saturate */
		return sat_mul_u64(c->args[4], c->args[5]);
	case DEC_ALLOC:
		return c->args[1];
	default:
		return 0;
	}
}

static const char *memcpy_kind(uint64_t kind)
{
	static const char *const names[] = {
		"HostToHost", "HostToDevice", "DeviceToHost", "DeviceToDevice", "Default",
	};

	return kind < 5 ? names[kind] : "unknown";
}

static const char *nccl_dtype(uint64_t t)
{
	static const char *const names[] = {
		"int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32",
		"float64", "bfloat16", "float8e4m3", "float8e5m2",
	};

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

/* NCCL's ncclDataType_t as Kineto names torch's dtypes, and their sizes. */
static const struct {
	const char *name;
	unsigned char size;
} nccl_types[] = {
	{ "Char", 1 }, { "Byte", 1 }, { "Int", 4 }, { "UInt32", 4 }, { "Long", 8 },
	{ "UInt64", 8 }, { "Half", 2 }, { "Float", 4 }, { "Double", 8 }, { "BFloat16", 2 },
	{ "Float8_e4m3fn", 1 }, { "Float8_e5m2", 1 },
};

/* Kineto's "Collective name" of an NCCL call, from its symbol. */
static const char *nccl_coll_name(const char *symbol)
{
	static const struct { const char *sym, *name; } names[] = {
		{ "ncclAllReduce", "allreduce" }, { "ncclAllGather", "allgather" },
		{ "ncclReduceScatter", "reduce_scatter" }, { "ncclBroadcast", "broadcast" },
		{ "ncclReduce", "reduce" }, { "ncclSend", "send" }, { "ncclRecv", "recv" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(symbol, names[i].sym))
			return names[i].name;
	return NULL;
}

/*
 * The fields torch's record_param_comms gives a collective, from the
 * call's own arguments, with Kineto's names: the count is the send
 * buffer's (all-reduce, broadcast, reduce, all-gather, send) or the
 * receive buffer's (reduce-scatter, recv); the other side needs the
 * communicator's size, which the call does not say.
 */
static void nccl_kineto(struct obuf *f, const struct api_call *c, const struct api_row *r)
{
	const char *name = nccl_coll_name(r->symbol);
	uint64_t count, type, bytes;
	bool in_only, out_only;

	if (!name)
		return;
	count = r->decoder == DEC_NCCL_P2P ? c->args[1] : c->args[2];
	type = r->decoder == DEC_NCCL_P2P ? c->args[2] : c->args[3];
	in_only = r->decoder == DEC_NCCL_GATHER || !strcmp(name, "send");
	out_only = !strcmp(name, "reduce_scatter") || !strcmp(name, "recv");
	ob_printf(f, ",\"Collective name\":\"%s\"", name);
	if (!out_only)
		ob_printf(f, ",\"In msg nelems\":%" PRIu64, count);
	if (!in_only)
		ob_printf(f, ",\"Out msg nelems\":%" PRIu64, count);
	if (type >= sizeof(nccl_types) / sizeof(nccl_types[0]))
		return;
	ob_printf(f, ",\"dtype\":\"%s\"", nccl_types[type].name);
	if (!__builtin_mul_overflow(count, (uint64_t)nccl_types[type].size, &bytes))
		ob_printf(f, ",\"bytes\":%" PRIu64, bytes);
}

static const char *nccl_op(uint64_t op)
{
	static const char *const names[] = { "sum", "prod", "max", "min", "avg" };

	return op < 5 ? names[op] : "custom";
}

static void write_dims(struct obuf *f, const char *key, uint32_t x, uint32_t y, uint32_t z)
{
	ob_lit(f, ",\"");
	ob_puts(f, key);
	ob_lit(f, "\":[");
	ob_u64(f, x);
	ob_char(f, ',');
	ob_u64(f, y);
	ob_char(f, ',');
	ob_u64(f, z);
	ob_char(f, ']');
}

static void write_launch(struct obuf *f, const struct api_call *c, const struct api_row *r)
{
	switch (r->decoder) {
	case DEC_LAUNCH_RT:
		write_dims(f, "grid", lo32(c->args[1]), hi32(c->args[1]), lo32(c->args[2]));
		write_dims(f, "block", lo32(c->args[3]), hi32(c->args[3]), lo32(c->args[4]));
		ob_lit(f, ",\"shared_memory\":");
		ob_u64(f, c->args[6]);
		break;
	case DEC_LAUNCH_RT_EXC: /* cudaLaunchConfig_t: dim3, dim3, size_t smem, stream */
		write_dims(f, "grid", deref_u32(c, 0), deref_u32(c, 4), deref_u32(c, 8));
		write_dims(f, "block", deref_u32(c, 12), deref_u32(c, 16), deref_u32(c, 20));
		ob_printf(f, ",\"shared_memory\":%" PRIu64 ",\"stream\":\"0x%" PRIx64 "\"",
			deref_u64(c, 24), deref_u64(c, 32));
		break;
	case DEC_LAUNCH_DRV:
		write_dims(f, "grid", lo32(c->args[1]), lo32(c->args[2]), lo32(c->args[3]));
		write_dims(f, "block", lo32(c->args[4]), lo32(c->args[5]), lo32(c->args[6]));
		ob_printf(f, ",\"shared_memory\":%u", lo32(c->args[7]));
		break;
	case DEC_LAUNCH_DRV_EX: /* CUlaunchConfig: 7 x u32, then the stream at 32 */
		write_dims(f, "grid", deref_u32(c, 0), deref_u32(c, 4), deref_u32(c, 8));
		write_dims(f, "block", deref_u32(c, 12), deref_u32(c, 16), deref_u32(c, 20));
		ob_printf(f, ",\"shared_memory\":%u,\"stream\":\"0x%" PRIx64 "\"", deref_u32(c, 24),
			deref_u64(c, 32));
		break;
	default:
		break;
	}
	if (!launch_func_is_host_stub(r)) {
		ob_lit(f, ",\"function\":\"");
		ob_hex(f, cuda_api_launch_func(c));
		ob_char(f, '"');
	}
}

void cuda_api_write_args(struct obuf *f, const struct api_call *c)
{
	const struct api_row *r = cuda_api_row(c->api_id);
	const uint64_t *a = c->args;

	if (!r)
		return;
	switch (r->decoder) {
	case DEC_NONE:
		break;
	case DEC_LAUNCH_RT:
	case DEC_LAUNCH_RT_EXC:
	case DEC_LAUNCH_DRV:
	case DEC_LAUNCH_DRV_EX:
		write_launch(f, c, r);
		break;
	case DEC_GRAPH:
		ob_printf(f, ",\"graph_exec\":\"0x%" PRIx64 "\"", a[0]);
		break;
	case DEC_MEMCPY:
		ob_printf(f, ",\"bytes\":%" PRIu64 ",\"kind\":\"%s\",\"dst\":\"0x%" PRIx64
			"\",\"src\":\"0x%" PRIx64 "\"", a[2], memcpy_kind(a[3]), a[0], a[1]);
		break;
	case DEC_MEMCPY2D:
		ob_printf(f, ",\"bytes\":%" PRIu64 ",\"width\":%" PRIu64 ",\"height\":%" PRIu64
			",\"kind\":\"%s\"", sat_mul_u64(a[4], a[5]), a[4], a[5], memcpy_kind(a[6]));
		break;
	case DEC_MEMCPY_DRV:
		ob_printf(f, ",\"bytes\":%" PRIu64 ",\"kind\":\"%s\"", a[2], r->direction);
		break;
	case DEC_MEMSET:
		ob_printf(f, ",\"bytes\":%" PRIu64 ",\"value\":%d,\"ptr\":\"0x%" PRIx64 "\"", a[2],
			(int)a[1], a[0]);
		break;
	case DEC_ALLOC:
		ob_printf(f, ",\"bytes\":%" PRIu64 ",\"ptr\":\"0x%" PRIx64 "\"", a[1], c->out);
		break;
	case DEC_FREE:
		ob_printf(f, ",\"ptr\":\"0x%" PRIx64 "\"", a[0]);
		break;
	case DEC_STREAM:
		break;
	case DEC_EVENT:
		ob_printf(f, ",\"event\":\"0x%" PRIx64 "\"", a[0]);
		break;
	case DEC_STREAM_EVENT:
		ob_printf(f, ",\"event\":\"0x%" PRIx64 "\"", a[1]);
		break;
	case DEC_NCCL_RED:
		ob_printf(f, ",\"count\":%" PRIu64 ",\"datatype\":\"%s\",\"op\":\"%s\",\"comm\":\"0x%"
			PRIx64 "\"", a[2], nccl_dtype(a[3]), nccl_op(a[4]), a[5]);
		break;
	case DEC_NCCL_GATHER:
		ob_printf(f, ",\"count\":%" PRIu64 ",\"datatype\":\"%s\",\"comm\":\"0x%" PRIx64 "\"",
			a[2], nccl_dtype(a[3]), a[4]);
		break;
	case DEC_NCCL_BCAST:
		ob_printf(f, ",\"count\":%" PRIu64 ",\"datatype\":\"%s\",\"root\":%d,\"comm\":\"0x%"
			PRIx64 "\"", a[2], nccl_dtype(a[3]), (int)a[4], a[5]);
		break;
	case DEC_NCCL_REDUCE:
		ob_printf(f, ",\"count\":%" PRIu64 ",\"datatype\":\"%s\",\"op\":\"%s\",\"root\":%d,"
			"\"comm\":\"0x%" PRIx64 "\"", a[2], nccl_dtype(a[3]), nccl_op(a[4]), (int)a[5], a[6]);
		break;
	case DEC_GET_KERNEL:
		ob_printf(f, ",\"handle\":\"0x%" PRIx64 "\",\"function\":\"0x%" PRIx64 "\"", c->out, a[1]);
		break;
	case DEC_NCCL_P2P:
		ob_printf(f, ",\"count\":%" PRIu64 ",\"datatype\":\"%s\",\"peer\":%d,\"comm\":\"0x%"
			PRIx64 "\"", a[1], nccl_dtype(a[2]), (int)a[3], a[4]);
		break;
	case DEC_GLOO_WORK: /* joined into collectives, never written as calls */
	case DEC_GLOO_ENQUEUE:
	case DEC_GLOO_EXEC:
		break;
	}
	if (r->layer == LAYER_NCCL)
		nccl_kineto(f, c, r);
	if (r->stream_arg >= 0 && r->stream_arg < FVBPF_API_ARGS) {
		ob_lit(f, ",\"stream\":\"");
		ob_hex(f, a[r->stream_arg]);
		ob_char(f, '"');
	}
}

static const char *table_name(const struct cuda_error_name *t, int code)
{
	for (; t->name; t++)
		if (t->code == code)
			return t->name;
	return NULL;
}

const char *cuda_api_ret_name(const struct api_call *c, char *buf, size_t len)
{
	static const char *const nccl[] = {
		"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
		"ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress",
	};
	const struct api_row *r = cuda_api_row(c->api_id);
	const char *name = NULL;

	if (r && r->layer == LAYER_RUNTIME)
		name = table_name(cuda_runtime_errors, c->ret);
	else if (r && r->layer == LAYER_DRIVER)
		name = table_name(cuda_driver_errors, c->ret);
	else if (r && c->ret >= 0 && c->ret < 8)
		name = nccl[c->ret];
	if (name)
		return name;
	snprintf(buf, len, "error %d", c->ret);
	return buf;
}
