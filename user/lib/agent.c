// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The dormant CUPTI agent.  Nothing runs and nothing of CUDA is loaded until
 * fvbpf attaches: then a thread of ours finds a CUPTI that matches the
 * process's CUDA, registers a CLOCK_MONOTONIC timestamp callback, subscribes
 * to the launch/copy/set callbacks (which name each call's correlation id
 * through a probe), enables kernel, memcpy, memset and synchronisation
 * activity, and hands decoded records to BPF in batches.  When the
 * semaphore falls (detach, or fvbpf killed) it flushes, disables,
 * unsubscribes and sleeps again.  Whatever fails is reported, never fatal.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "control.h"
#include "cuda_hook.h"
#include "agent_internal.h"
#include "pyshim.h"
#include "torch_fast.h"

/* WAIT_CUDA: attached to a process without CUDA; CUPTI is loaded only
 * once a CUDA runtime or driver is. */
enum { DORMANT, ACTIVE, WAIT_CUDA };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static int thread_started, state = DORMANT, flush_wanted;
static uint32_t wanted_epoch, tried_epoch;

/* One batch in flight to BPF at a time; records never straddle batches. */
pthread_mutex_t agent_batch_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t batch[FVBPF_GPU_BATCH] __attribute__((aligned(8)));
static uint32_t batch_len;
struct cupti_decoder agent_decoder;

void agent_status(uint32_t code, int32_t detail, int64_t value, const char *fmt, ...)
{
	char msg[FVBPF_STATUS_MSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (probes_callable())
		fvbpf_probe_agent_status(code, detail, value, msg);
}

static void batch_flush_locked(void)
{
	if (batch_len && probes_callable())
		fvbpf_probe_gpu_batch(batch, batch_len);
	batch_len = 0;
}

void agent_batch_emit(const void *rec, size_t size, void *ctx)
{
	(void)ctx;
	if (size > sizeof(batch))
		return;
	if (batch_len + size > sizeof(batch))
		batch_flush_locked();
	memcpy(batch + batch_len, rec, size);
	batch_len += (uint32_t)size;
}

/* Decode one completed buffer and send it: the record path, with or without
 * CUPTI's own threads calling it. */
void agent_deliver_buffer(uint8_t *buf, size_t valid)
{
	long n;

	pthread_mutex_lock(&agent_batch_lock);
	n = cupti_decode_buffer(&agent_decoder, buf, valid);
	batch_flush_locked();
	pthread_mutex_unlock(&agent_batch_lock);
	if (n < 0)
		agent_status(FVBPF_AGENT_CUPTI_ERROR, 0, 0,
			     "a CUPTI activity buffer could not be parsed");
}

static void wait_ms(int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_cond_timedwait(&wake, &lock, &ts);
}

/* Called and returning with the lock held; activation runs without it. */
static void activate_unlocked(void)
{
	int r;

	pthread_mutex_unlock(&lock);
	r = agent_cupti_activate();
	pthread_mutex_lock(&lock);
	state = r == 0 ? ACTIVE : r == ACTIVATE_LATER ? WAIT_CUDA : DORMANT;
}

/*
 * Dormant: blocked on the condition, never waking.  Active (or waiting for
 * CUDA to be loaded): wakes four times a second to flush (or look for
 * CUDA) and to notice that fvbpf has gone.
 */
static void *agent_main(void *arg)
{
	int was;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (state == DORMANT && (wanted_epoch == tried_epoch || !semaphore))
			pthread_cond_wait(&wake, &lock);
		if (state == DORMANT) {
			tried_epoch = wanted_epoch;
			activate_unlocked();
			continue;
		}
		wait_ms(250);
		if (!semaphore || wanted_epoch != tried_epoch) {
			/* Detached, or a new attach that must hear our status. */
			was = state;
			state = DORMANT;
			pthread_mutex_unlock(&lock);
			if (was == ACTIVE)
				agent_cupti_deactivate();
			pthread_mutex_lock(&agent_batch_lock);
			batch_flush_locked();
			pthread_mutex_unlock(&agent_batch_lock);
			pthread_mutex_lock(&lock);
			continue;
		}
		if (state == WAIT_CUDA) {
			if (agent_cuda_mapped())
				activate_unlocked();
			continue;
		}
		flush_wanted = 0;
		pthread_mutex_unlock(&lock);
		agent_cupti_flush();
		pthread_mutex_lock(&lock);
	}
	return NULL;
}

/* A child forked while our thread held the lock would deadlock on it, and
 * has no agent thread: start it afresh. */
static void atfork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	pthread_mutex_init(&agent_batch_lock, NULL);
	pthread_cond_init(&wake, NULL);
	thread_started = 0;
	state = DORMANT;
	wanted_epoch = tried_epoch = 0;
}

static void start_thread(void)
{
	static int atfork_done;
	sigset_t all, old;
	pthread_attr_t attr;

	if (!atfork_done)
		atfork_done = pthread_atfork(NULL, NULL, atfork_child) == 0;
	/* The job's signals are the job's threads' business, not ours. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	thread_started = pthread_create(&thread, &attr, agent_main, NULL) == 0;
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void agent_on_attach(uint32_t epoch)
{
	static int disabled = -1;

	/* FVBPF_AGENT=off in the job: markers and CUDA calls only. */
	if (disabled < 0) {
		const char *e = getenv("FVBPF_AGENT");

		disabled = e && !strcmp(e, "off");
	}
	if (disabled)
		return;
	pthread_mutex_lock(&lock);
	if (epoch != wanted_epoch) {
		wanted_epoch = epoch;
		if (!thread_started)
			start_thread();
		pthread_cond_signal(&wake);
	}
	pthread_mutex_unlock(&lock);
}

/*
 * Injected: nothing in the job calls a marker, so this thread stands in
 * for the first marker after each attach.  It sleeps 250 ms at a time and
 * reads a few words; it never loads anything itself.  It also hands a
 * Python shim request to the interpreter (pyshim.c), which runs it.
 */
static void *watch_main(void *arg)
{
	struct timespec ts = { 0, 250000000L };
	uint32_t seen = 0, e;

	(void)arg;
	for (;;) {
		nanosleep(&ts, NULL);
		e = markers_epoch();
		if (e && e != seen)
			agent_on_attach(e);
		seen = e;
		pyshim_poll();
		cuda_hook_poll();
		torch_fast_poll(true);
	}
	return NULL;
}

void agent_start_watch(void)
{
	static int started;
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t th;

	if (__atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL))
		return;
	/* fvbpf asks for the operator fast path only where someone answers */
	if (control)
		control->fast_watch = 1;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_create(&th, &attr, watch_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void agent_request_flush(void)
{
	/* A flag and a signal; the agent thread does the flushing. */
	if (__atomic_exchange_n(&flush_wanted, 1, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&lock);
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
}

/* CUDA_INJECTION64_PATH entry point: stay dormant until fvbpf attaches. */
FVBPF_EXPORT int InitializeInjection(void)
{
	return 1;
}

#ifdef FVBPF_TEST_HOOKS
FVBPF_EXPORT void fvbpf_agent_test_api_enter(uint32_t correlation, uint32_t cbid, uint32_t domain)
{
	if (probes_callable())
		fvbpf_probe_correlation(correlation, cbid, domain);
}

FVBPF_EXPORT void fvbpf_agent_test_buffer(uint8_t *buf, size_t valid)
{
	agent_deliver_buffer(buf, valid);
}
#endif /* FVBPF_TEST_HOOKS */
