// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A target that sends fvbpf whatever bytes and numbers it likes, as any
 * process fvbpf attaches to may: escape sequences and forged "fvbpf:" lines
 * in its comm and thread names, invalid UTF-8 and control characters in the
 * agent's status text and kernel names, GPU records at the edges of their
 * types.  It calls the probe functions of libfvbpf itself, with hand-built
 * records (include/fvbpf_gpu.h), where the agent would.  Run it with
 * FVBPF_AGENT=off so that the real agent stays out of the way.
 *
 *   step: train_one_step > forward > 2 x cudaLaunchKernel (a local double,
 *         probed like a statically linked cudart), and a short-lived thread
 *         with a hostile name runs training_dataloader
 *   then: a GPU batch naming a hostile kernel, with extreme fields
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "fvbpf/fvbpf.h"
#include "fvbpf_events.h"
#include "fvbpf_gpu.h"
#include "workload.h"

/* The probe functions of libfvbpf.so, called here as the agent would. */
void fvbpf_probe_correlation(uint32_t correlation, uint32_t cbid, uint32_t domain);
void fvbpf_probe_gpu_batch(const uint8_t *buf, uint32_t len);
void fvbpf_probe_agent_status(uint32_t code, int32_t detail, int64_t value, const char *msg);

/*
 * A comm holds 15 bytes.  A "\n" in it makes /proc/PID/stat unparsable by
 * line (fvbpf then sees no process), so the comm forges its line with a
 * carriage return; the status text carries the "\n" one.
 */
#define HOSTILE_COMM "\x1b[31m\rfvbpf: x"
#define HOSTILE_THREAD "\x1b[31m\xff\xc0\xaf\x07\x7f\xc2\x9b"
#define HOSTILE_TEXT "\x1b[31mred\x1b[0m\nfvbpf: forged line\r\x07\x7f\xff\xfe\xc0\xaf" \
	"\xed\xa0\x80\xf4\x90\x80\x80\xe6\x97\xc2\x9b\"\\"

static uint32_t next_corr = 5000;
static uint32_t corrs[64];
static int ncorrs;
static unsigned long n_steps, n_launches;

__attribute__((noipa, used)) int cudaLaunchKernel(const void *func, unsigned long long grid_xy,
						     unsigned int grid_z, unsigned long long block_xy,
						     unsigned int block_z, void **args, size_t shmem,
						     void *stream)
{
	(void)func; (void)grid_xy; (void)grid_z; (void)block_xy; (void)block_z;
	(void)args; (void)shmem; (void)stream;
	/* Inside the probed call, as CUPTI's API callback. */
	if (ncorrs < 64)
		corrs[ncorrs++] = next_corr;
	fvbpf_probe_correlation(next_corr++, 211, 1);
	return 0;
}

static void *loader(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, HOSTILE_THREAD);
	fvbpf_region_begin("training_dataloader");
	wl_sleep_us(1000);
	fvbpf_region_end("training_dataloader");
	return NULL;
}

static void put_kernel(uint8_t *b, size_t *off, uint32_t corr, int extreme)
{
	struct fvbpf_gpu_kernel k;
	uint64_t now = wl_now_ns();

	memset(&k, 0, sizeof(k));
	k.s.hdr.kind = FVBPF_GPU_KERNEL;
	k.s.hdr.size = sizeof(k);
	k.s.hdr.correlation = corr;
	k.s.start = now;
	k.s.end = extreme ? now - 1000 : now + 50000; /* ends before it starts */
	k.s.device = extreme ? UINT32_MAX : 0;
	k.s.stream = UINT32_MAX;
	k.name_id = 1;
	k.registers = UINT32_MAX;
	k.grid[0] = INT32_MIN;
	k.block[0] = INT32_MAX;
	k.static_smem = extreme ? INT32_MAX : INT32_MIN;
	k.dynamic_smem = extreme ? INT32_MAX : INT32_MIN;
	memcpy(b + *off, &k, sizeof(k));
	*off += sizeof(k);
}

/* What the agent would hand over after a step: a name, the kernels. */
static void deliver(void)
{
	static uint8_t buf[FVBPF_GPU_BATCH] __attribute__((aligned(8)));
	static const char name[] = "_Z6kernelv " HOSTILE_TEXT;
	struct fvbpf_gpu_memcpy m;
	struct fvbpf_gpu_hdr h;
	size_t off = 0, size = (sizeof(h) + sizeof(name) + 7) & ~(size_t)7;
	int i;

	memset(buf, 0, sizeof(buf));
	h.kind = FVBPF_GPU_NAME;
	h.size = (uint16_t)size;
	h.correlation = 1;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), name, sizeof(name));
	off = size;
	for (i = 0; i < ncorrs; i++)
		put_kernel(buf, &off, corrs[i], i % 2);
	memset(&m, 0, sizeof(m));
	m.s.hdr.kind = FVBPF_GPU_MEMCPY;
	m.s.hdr.size = sizeof(m);
	m.s.hdr.correlation = ncorrs ? corrs[0] : 0;
	m.s.start = wl_now_ns();
	m.s.end = UINT64_MAX;
	m.bytes = UINT64_MAX;
	m.copy_kind = 255;
	memcpy(buf + off, &m, sizeof(m));
	off += sizeof(m);
	ncorrs = 0;
	fvbpf_probe_gpu_batch(buf, (uint32_t)off);
}

static void step(void)
{
	pthread_t th;

	fvbpf_region_begin("training_train_one_step");
	fvbpf_region_begin("training_forward");
	cudaLaunchKernel((const void *)step, 1, 1, 1, 1, NULL, 0, NULL);
	cudaLaunchKernel((const void *)step, 1, 1, 1, 1, NULL, 0, NULL);
	n_launches += 2;
	if (!pthread_create(&th, NULL, loader, NULL))
		pthread_join(th, NULL);
	wl_sleep_us(2000);
	fvbpf_region_end("training_forward");
	fvbpf_region_end("training_train_one_step");
	n_steps++;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "steps", required_argument, NULL, 's' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "idle", no_argument, NULL, 'i' },
		{},
	};
	int steps = 3, wait_signal = 0, idle = 0, c, i;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': steps = atoi(optarg); break;
		case 'w': wait_signal = 1; break;
		case 'i': idle = 1; break;
		default:
			fprintf(stderr, "usage: %s [--steps N] [--wait-signal] [--idle]\n", argv[0]);
			return 2;
		}
	}
	prctl(PR_SET_NAME, HOSTILE_COMM);
	wl_start();
	if (wait_signal && wl_wait_go())
		return 2;
	fvbpf_probe_agent_status(FVBPF_AGENT_ACTIVE, FVBPF_CLOCK_CALLBACK, 0, HOSTILE_TEXT);
	for (i = 0; i < steps && !wl_stop; i++) {
		/* The last step after the agent "failed": its status is kept. */
		if (i == steps - 1)
			fvbpf_probe_agent_status(FVBPF_AGENT_CUPTI_ERROR, 999, -1, HOSTILE_TEXT);
		step();
		if (i < steps - 1)
			deliver();
		if (i == 0) /* a drop count no CUPTI would report */
			fvbpf_probe_agent_status(FVBPF_AGENT_DROPPED, 0, INT64_MIN, HOSTILE_TEXT);
	}
	printf("counts steps=%lu launches=%lu\n", n_steps, n_launches);
	while (idle && !wl_stop) {
		printf("attached=%d\n", fvbpf_attached());
		wl_sleep_us(100000);
	}
	return 0;
}
