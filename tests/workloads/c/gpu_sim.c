// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A training loop whose GPU is simulated, to drive the CUPTI agent's record
 * path end to end without a driver.  Only what needs a driver is a double:
 *   - cudaLaunchKernel / cudaMemcpy are defined here (like a statically
 *     linked cudart, local to the executable, so fvbpf probes them), and
 *     from inside each call they fire the agent's API-callback probe with a
 *     correlation id, as CUPTI's callback would;
 *   - after each step, activity records built from the real
 *     cupti_activity.h structs (CUpti_ActivityKernel10, CUpti_ActivityMemcpy6)
 *     are handed to the agent as a completed buffer; the agent parses them
 *     with the real libcupti and sends them through its real probe.
 * Run it with FVBPF_AGENT=off so that the real activation stays out of the
 * way (it needs a driver).  Prints its own counts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_runtime_cbid.h>

#include "fvbpf/fvbpf.h"
#include "workload.h"

#ifdef GPU_SIM_LAZY
/*
 * gpu_sim_lazy: the same program not linked with the library, for
 * `fvbpf attach --inject --inject-lib build/test-lib/libfvbpf.so`: after
 * the go signal it looks up the injected copy by its loaded name, as a
 * lazy marker lookup would, and calls it through these pointers.
 */
#include "injected.h"
static int (*p_activate)(const char *);
static void (*p_api_enter)(uint32_t, uint32_t, uint32_t);
static void (*p_buffer)(uint8_t *, size_t);
static void (*p_begin)(const char *), (*p_end)(const char *);
static int (*p_attached)(void);
#define fvbpf_agent_test_activate(c) p_activate(c)
#define fvbpf_agent_test_api_enter(a, b, c) p_api_enter(a, b, c)
#define fvbpf_agent_test_buffer(b, n) p_buffer(b, n)
#define fvbpf_region_begin(n) p_begin(n)
#define fvbpf_region_end(n) p_end(n)
#define fvbpf_attached() p_attached()

static int lazy_resolve(void)
{
	void *h = wl_injected_lib();

	if (!h)
		return -1;
	p_activate = (int (*)(const char *))dlsym(h, "fvbpf_agent_test_activate");
	p_api_enter = (void (*)(uint32_t, uint32_t, uint32_t))dlsym(h, "fvbpf_agent_test_api_enter");
	p_buffer = (void (*)(uint8_t *, size_t))dlsym(h, "fvbpf_agent_test_buffer");
	p_begin = (void (*)(const char *))dlsym(h, "fvbpf_region_begin");
	p_end = (void (*)(const char *))dlsym(h, "fvbpf_region_end");
	p_attached = (int (*)(void))dlsym(h, "fvbpf_attached");
	return p_activate && p_api_enter && p_buffer && p_begin && p_end && p_attached ? 0 : -1;
}
#else
int fvbpf_agent_test_activate(const char *cupti_path);
void fvbpf_agent_test_api_enter(uint32_t correlation, uint32_t cbid, uint32_t domain);
void fvbpf_agent_test_buffer(uint8_t *buf, size_t valid);
static int lazy_resolve(void) { return 0; }
#endif

#define MAX_PENDING 4096

static uint32_t next_corr = 1000;
static int kernels_per_step = 3, skip_records;

/* What the "GPU" will report once the step is over. */
static struct pending {
	int is_copy;
	uint32_t corr;
	uint64_t launch_ns;
	size_t bytes;
} pending[MAX_PENDING];
static int npending;
static unsigned long n_kernels, n_copies, n_records, n_missing, n_steps;


static void note(int is_copy, size_t bytes)
{
	uint32_t corr = next_corr++;

	/* Inside the probed call, as CUPTI's runtime API-entry callback. */
	fvbpf_agent_test_api_enter(corr, is_copy ? CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 :
				   CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
				   CUPTI_CB_DOMAIN_RUNTIME_API);
	if (npending < MAX_PENDING)
		pending[npending++] = (struct pending){ is_copy, corr, wl_now_ns(), bytes };
}

/* Doubles of the runtime calls that need a driver; noipa so that they
 * stay real functions (no clones) that fvbpf finds in .symtab and probes. */
__attribute__((noipa, used)) int cudaLaunchKernel(const void *func, unsigned long long grid_xy,
						     unsigned int grid_z, unsigned long long block_xy,
						     unsigned int block_z, void **args, size_t shmem,
						     void *stream)
{
	(void)func; (void)grid_xy; (void)grid_z; (void)block_xy; (void)block_z;
	(void)args; (void)shmem; (void)stream;
	note(0, 0);
	return 0;
}

__attribute__((noipa, used)) int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind)
{
	(void)dst; (void)src; (void)kind;
	note(1, bytes);
	return 0;
}

/* The step's activity as CUPTI would hand it over: one buffer of records. */
static void deliver(void)
{
	static uint8_t buf[1 << 20] __attribute__((aligned(8)));
	static uint64_t stream_free; /* one stream: its work runs in order */
	uint64_t start;
	size_t off = 0;
	int i;

	for (i = 0; i < npending; i++) {
		struct pending *p = &pending[i];

		if (skip_records > 0 && !p->is_copy) {
			skip_records--; /* a record that never comes */
			n_missing++;
			continue;
		}
		if (!p->is_copy) {
			CUpti_ActivityKernel10 k;

			memset(&k, 0, sizeof(k));
			k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			start = p->launch_ns + 2000;
			k.start = start > stream_free ? start : stream_free;
			k.end = k.start + 50000 + 1000 * (uint64_t)i;
			stream_free = k.end;
			k.deviceId = 0;
			k.contextId = 1;
			k.streamId = 7;
			k.gridX = 8; k.gridY = 1; k.gridZ = 1;
			k.blockX = 256; k.blockY = 1; k.blockZ = 1;
			k.registersPerThread = 32;
			k.staticSharedMemory = 0;
			k.dynamicSharedMemory = 128;
			k.correlationId = p->corr;
			k.name = (i % 2) ? "_ZN2fv4tmplILi7EEEvPi" : "_Z5scalePffi";
			memcpy(buf + off, &k, sizeof(k));
			off += (sizeof(k) + 7) & ~(size_t)7;
		} else {
			CUpti_ActivityMemcpy6 m;

			memset(&m, 0, sizeof(m));
			m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
			m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
			m.bytes = p->bytes;
			start = p->launch_ns + 1000;
			m.start = start > stream_free ? start : stream_free;
			m.end = m.start + 20000;
			stream_free = m.end;
			m.deviceId = 0;
			m.contextId = 1;
			m.streamId = 7;
			m.correlationId = p->corr;
			memcpy(buf + off, &m, sizeof(m));
			off += (sizeof(m) + 7) & ~(size_t)7;
		}
		n_records++;
	}
	npending = 0;
	fvbpf_agent_test_buffer(buf, off);
}

/* --torch LIB: a stand-in libtorch_cpu.so whose aten::linear launches. */
static int (*torch_linear)(void);

static int launch_one(void)
{
	cudaLaunchKernel((const void *)launch_one, 8 | 1ull << 32, 1, 256 | 1ull << 32, 1, NULL, 128,
			 NULL);
	n_kernels++;
	return 0;
}

static int load_torch(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	void (*set)(int (*)(void));

	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return -1;
	}
	set = (void (*)(int (*)(void)))dlsym(h, "fake_torch_set_launch");
	torch_linear = (int (*)(void))dlsym(h, "_ZN2at4_ops6linear4callERKNS_6TensorES4_RKSt8optionalIS2_E");
	if (!set || !torch_linear)
		return -1;
	set(launch_one);
	return 0;
}

/* --barrier DIR: the ranks (RANK of WORLD_SIZE) leave each step's forward
 * together, as a collective makes a DDP job's ranks do: each marks the
 * step in DIR, then waits (at most 10 s) for the others' marks. */
static const char *barrier_dir;

static void barrier(int i)
{
	int rank = getenv("RANK") ? atoi(getenv("RANK")) : 0, world, r, waited;
	char path[4096];
	FILE *f;

	world = getenv("WORLD_SIZE") ? atoi(getenv("WORLD_SIZE")) : 1;
	snprintf(path, sizeof(path), "%s/s%d.r%d", barrier_dir, i, rank);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	for (r = 0; r < world && r < 1024; r++)
		for (waited = 0; waited < 10000; waited++) {
			snprintf(path, sizeof(path), "%s/s%d.r%d", barrier_dir, i, r);
			if (!access(path, F_OK))
				break;
			wl_sleep_us(1000);
		}
}

static void step(int i)
{
	int k;

	fvbpf_region_begin("training_train_one_step");
	cudaMemcpy(NULL, NULL, 4096, 1);
	n_copies++;
	fvbpf_region_begin("training_forward");
	if (torch_linear)
		torch_linear(); /* 3 launches: 1 in aten::linear, 2 in aten::addmm */
	for (k = 0; !torch_linear && k < kernels_per_step; k++) {
		cudaLaunchKernel((const void *)step, 8 | 1ull << 32, 1, 256 | 1ull << 32, 1, NULL, 128,
				 NULL);
		n_kernels++;
	}
	/* With --barrier, the step's tail after the collective is long beside
	 * the scheduler's jitter (a loaded 2-CPU machine woke one rank 6 ms
	 * after the other), as a real step's is: fvbpf pairs the ranks' first
	 * steps by how much of them they share (cut_gate.c), and a 2 ms tail
	 * let the jitter pass a rank's first step for the one before. */
	if (barrier_dir)
		barrier(i);
	wl_sleep_us(barrier_dir ? 60000 : 2000);
	fvbpf_region_end("training_forward");
	fvbpf_region_end("training_train_one_step");
	n_steps++;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "steps", required_argument, NULL, 's' },
		{ "kernels", required_argument, NULL, 'k' },
		{ "missing", required_argument, NULL, 'm' },
		{ "cupti", required_argument, NULL, 'c' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "idle", no_argument, NULL, 'i' },
		{ "torch", required_argument, NULL, 't' },
		{ "barrier", required_argument, NULL, 'b' },
		{},
	};
	const char *cupti = "/usr/local/cuda/lib64/libcupti.so.13";
	int steps = 3, wait_signal = 0, idle = 0, c, i;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': steps = atoi(optarg); break;
		case 'k': kernels_per_step = atoi(optarg); break;
		case 'm': skip_records = atoi(optarg); break;
		case 'c': cupti = optarg; break;
		case 'w': wait_signal = 1; break;
		case 'i': idle = 1; break;
		case 'b': barrier_dir = optarg; break;
		case 't':
			if (load_torch(optarg))
				return 2;
			break;
		default:
			fprintf(stderr, "usage: %s [--steps N] [--kernels K] [--missing M] [--cupti PATH] "
				"[--wait-signal] [--idle] [--barrier DIR]\n", argv[0]);
			return 2;
		}
	}
	wl_start();
	if (wait_signal && wl_wait_go())
		return 2;
	if (lazy_resolve()) {
		printf("agent=unavailable (no injected libfvbpf.so with test hooks)\n");
		return 3;
	}
	if (fvbpf_agent_test_activate(cupti)) {
		printf("agent=unavailable (no libcupti at %s)\n", cupti);
		return 3;
	}
	printf("agent=ok\n");
	for (i = 0; i < steps && !wl_stop; i++) {
		step(i);
		deliver(); /* after the segment closed, as CUPTI's flush would */
	}
	printf("counts steps=%lu kernels=%lu copies=%lu records=%lu missing=%lu\n", n_steps,
	       n_kernels, n_copies, n_records, n_missing);
	while (idle && !wl_stop) {
		printf("attached=%d\n", fvbpf_attached());
		wl_sleep_us(100000);
	}
	return 0;
}
