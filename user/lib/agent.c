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
#include <errno.h>
#include <libgen.h>
#include <limits.h>
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
#include "cupti_decode.h"
#include "fvbpf_events.h"
#include "fvbpf_gpu.h"
#include "util/clock.h"

#define FVBPF_EXPORT __attribute__((visibility("default")))

/* WAIT_CUDA: attached to a process without CUDA; CUPTI is loaded only
 * once a CUDA runtime or driver is. */
enum { DORMANT, ACTIVE, WAIT_CUDA };
#define ACTIVATE_LATER 1 /* activate(): no CUDA yet */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static int thread_started, state = DORMANT, flush_wanted;
static uint32_t wanted_epoch, tried_epoch;

/* One batch in flight to BPF at a time; records never straddle batches. */
static pthread_mutex_t batch_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t batch[FVBPF_GPU_BATCH] __attribute__((aligned(8)));
static uint32_t batch_len;
static struct cupti_decoder decoder;

static void status(uint32_t code, int32_t detail, int64_t value, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void status(uint32_t code, int32_t detail, int64_t value, const char *fmt, ...)
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

static void batch_emit(const void *rec, size_t size, void *ctx)
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
static void deliver_buffer(uint8_t *buf, size_t valid)
{
	long n;

	pthread_mutex_lock(&batch_lock);
	n = cupti_decode_buffer(&decoder, buf, valid);
	batch_flush_locked();
	pthread_mutex_unlock(&batch_lock);
	if (n < 0)
		status(FVBPF_AGENT_CUPTI_ERROR, 0, 0, "a CUPTI activity buffer could not be parsed");
}

#ifdef FVBPF_HAVE_CUPTI
#include <cupti.h>

static struct {
	void *dl;
	char path[PATH_MAX + 64];
	CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
				      CUpti_CallbackId);
	CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
	CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
	CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
	CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
						 CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
	CUptiResult (*ActivityFlushAll)(uint32_t);
	CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
	CUptiResult (*GetTimestamp)(uint64_t *);
	CUptiResult (*GetResultString)(CUptiResult, const char **);
} cupti;

static CUpti_SubscriberHandle subscriber;
static int clock_mode, timestamp_cb_registered;
static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};

static const char *result_name(CUptiResult r)
{
	const char *s = NULL;

	if (cupti.GetResultString && cupti.GetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

/* CUPTI's timestamp callback: a function of its calling convention. */
static uint64_t CUPTIAPI monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Where is the process's libcudart (or an already loaded libcupti)? */
struct found_libs {
	char cudart[PATH_MAX];
	char cupti[PATH_MAX];
	int cuda;               /* a CUDA runtime or driver is mapped */
};

static int find_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct found_libs *f = arg;

	(void)size;
	if (!info->dlpi_name || !*info->dlpi_name)
		return 0;
	if (strstr(info->dlpi_name, "libcudart.so") || strstr(info->dlpi_name, "libcuda.so"))
		f->cuda = 1;
	if (!f->cupti[0] && strstr(info->dlpi_name, "libcupti.so"))
		snprintf(f->cupti, sizeof(f->cupti), "%s", info->dlpi_name);
	if (!f->cudart[0] && strstr(info->dlpi_name, "libcudart.so"))
		snprintf(f->cudart, sizeof(f->cudart), "%s", info->dlpi_name);
	return 0;
}

static int cuda_mapped(void)
{
	struct found_libs f = { "", "", 0 };

	dl_iterate_phdr(find_loaded, &f);
	return f.cuda;
}

static int try_open(const char *path)
{
	if (!path || !*path)
		return 0;
	cupti.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (cupti.dl)
		snprintf(cupti.path, sizeof(cupti.path), "%s", path);
	return cupti.dl != NULL;
}

/* Beside libcudart (toolkit layout, pip wheels' nvidia/cuda_cupti), then
 * CUDA_HOME, /usr/local/cuda, the loader path.  FVBPF_CUPTI overrides. */
static int open_cupti(void)
{
	static const char *const beside[] = {
		"libcupti.so.13", "libcupti.so.12", "libcupti.so",
		"../extras/CUPTI/lib64/libcupti.so", "../../cuda_cupti/lib/libcupti.so.13",
		"../../cu13/lib/libcupti.so.13",
		"../../cuda_cupti/lib/libcupti.so.12", "../../cuda_cupti/lib/libcupti.so",
	};
	static const char *const homes_sub[] = {
		"extras/CUPTI/lib64/libcupti.so", "lib64/libcupti.so", "lib/libcupti.so",
	};
	const char *env = getenv("FVBPF_CUPTI"), *home;
	char path[PATH_MAX + 64], dir[PATH_MAX];
	struct found_libs f = { "", "", 0 };
	size_t i, h;

	if (cupti.dl)
		return 1;
	if (env && *env)
		return strcmp(env, "none") ? try_open(env) : 0;
	dl_iterate_phdr(find_loaded, &f);
	if (try_open(f.cupti))
		return 1;
	if (f.cudart[0]) {
		snprintf(dir, sizeof(dir), "%s", f.cudart);
		for (i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", dirname(dir), beside[i]);
			snprintf(dir, sizeof(dir), "%s", f.cudart);
			if (try_open(path))
				return 1;
		}
	}
	for (h = 0; h < 2; h++) {
		home = h ? "/usr/local/cuda" : getenv("CUDA_HOME");
		if (!home || !*home)
			continue;
		for (i = 0; i < sizeof(homes_sub) / sizeof(homes_sub[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", home, homes_sub[i]);
			if (try_open(path))
				return 1;
		}
	}
	return try_open("libcupti.so.13") || try_open("libcupti.so");
}

#define RESOLVE(name) (*(void **)&cupti.name = dlsym(cupti.dl, "cupti" #name))

static int resolve(void)
{
	RESOLVE(Subscribe);
	RESOLVE(Unsubscribe);
	RESOLVE(EnableCallback);
	RESOLVE(GetCallbackName);
	RESOLVE(ActivityEnable);
	RESOLVE(ActivityDisable);
	RESOLVE(ActivityRegisterCallbacks);
	RESOLVE(ActivityRegisterTimestampCallback);
	RESOLVE(ActivityFlushAll);
	RESOLVE(ActivityGetNextRecord);
	RESOLVE(ActivityGetNumDroppedRecords);
	RESOLVE(GetTimestamp);
	RESOLVE(GetResultString);
	return cupti.Subscribe && cupti.Unsubscribe && cupti.EnableCallback &&
	       cupti.GetCallbackName && cupti.ActivityEnable && cupti.ActivityDisable &&
	       cupti.ActivityRegisterCallbacks && cupti.ActivityFlushAll &&
	       cupti.ActivityGetNextRecord && cupti.GetTimestamp;
}

static void CUPTIAPI on_api(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			    const void *data)
{
	const CUpti_CallbackData *cd = data;

	(void)ud;
	if (cd->callbackSite == CUPTI_API_ENTER && probes_callable())
		fvbpf_probe_correlation(cd->correlationId, cbid, (uint32_t)domain);
}

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*size = 1 << 20;
	*buf = aligned_alloc(8, *size);
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				      size_t valid)
{
	size_t dropped = 0;

	(void)size;
	deliver_buffer(buf, valid);
	free(buf);
	if (cupti.ActivityGetNumDroppedRecords &&
	    cupti.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		status(FVBPF_AGENT_DROPPED, 0, (int64_t)dropped, "CUPTI dropped %zu records", dropped);
}

/* When CUPTI refuses our clock: see cupti_clock_offset(). */
static int64_t calibrate(void)
{
	uint64_t before[32], cu[32], after[32];
	size_t n;

	for (n = 0; n < 32; n++) {
		before[n] = monotonic_ns();
		if (cupti.GetTimestamp(&cu[n]) != CUPTI_SUCCESS)
			break;
		after[n] = monotonic_ns();
	}
	return cupti_clock_offset(before, cu, after, n);
}

/* Every launch, copy, set and sync callback of a domain, by name. */
static void enable_callbacks(CUpti_CallbackDomain domain, uint32_t max)
{
	static const char *const prefixes[] = {
		"cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset",
		"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
		"cudaStreamWaitEvent",
		"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset",
		"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "cuStreamWaitEvent",
	};
	const char *name;
	uint32_t cbid;
	size_t i;

	for (cbid = 1; cbid < max; cbid++) {
		if (cupti.GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
			if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
				cupti.EnableCallback(1, subscriber, domain, cbid);
	}
}

static int activate(void)
{
	CUptiResult r;
	size_t i;

	/* CUPTI in a CPU-only job would be dead weight and a CUDA driver
	 * context nobody asked for. */
	if (!cuda_mapped()) {
		status(FVBPF_AGENT_NO_CUDA, 0, 0, "no CUDA in this process (no libcudart or libcuda "
		       "mapped): GPU activity starts if it loads CUDA while fvbpf is attached");
		return ACTIVATE_LATER;
	}
	if (!open_cupti()) {
		status(FVBPF_AGENT_NO_CUPTI, 0, 0, "no CUPTI found (beside libcudart, $CUDA_HOME, "
		       "/usr/local/cuda, the loader path; set FVBPF_CUPTI in the job)");
		return -1;
	}
	if (!resolve()) {
		status(FVBPF_AGENT_CUPTI_TOO_OLD, 0, 0, "%s lacks functions fvbpf needs", cupti.path);
		return -1;
	}
	/*
	 * Subscribe first: if another client (torch.profiler) holds CUPTI,
	 * touch nothing of its process-wide state (clock, buffer callbacks).
	 */
	r = cupti.Subscribe(&subscriber, (CUpti_CallbackFunc)on_api, NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		status(FVBPF_AGENT_OTHER_SUBSCRIBER, (int32_t)r, 0, "another CUPTI subscriber is "
		       "active (torch.profiler?): GPU activity off, CUDA calls still traced");
		return -1;
	}
	if (r == CUPTI_ERROR_NOT_COMPATIBLE) {
		status(FVBPF_AGENT_CUPTI_TOO_OLD, (int32_t)r, 0, "%s does not match the driver (%s)",
		       cupti.path, result_name(r));
		return -1;
	}
	if (r != CUPTI_SUCCESS) {
		status(FVBPF_AGENT_CUPTI_ERROR, (int32_t)r, 0, "cuptiSubscribe: %s (%d)",
		       result_name(r), (int)r);
		return -1;
	}
	decoder.next = (cupti_next_record_fn)cupti.ActivityGetNextRecord;
	decoder.emit = batch_emit;
	cupti_decoder_reset_names(&decoder);
	/* Our clock must be in place before any activity is enabled. */
	clock_mode = FVBPF_CLOCK_CALIBRATED;
	decoder.clock_offset = 0;
	if (timestamp_cb_registered || (cupti.ActivityRegisterTimestampCallback &&
	    cupti.ActivityRegisterTimestampCallback(monotonic_ns) == CUPTI_SUCCESS)) {
		timestamp_cb_registered = 1;
		clock_mode = FVBPF_CLOCK_CALLBACK;
	} else {
		decoder.clock_offset = calibrate();
	}
	r = cupti.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		status(FVBPF_AGENT_CUPTI_ERROR, (int32_t)r, 0, "cuptiActivityRegisterCallbacks: %s (%d)",
		       result_name(r), (int)r);
		cupti.Unsubscribe(subscriber);
		return -1;
	}
	enable_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
	enable_callbacks(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		r = cupti.ActivityEnable(kinds[i]);
		if (r != CUPTI_SUCCESS) {
			status(FVBPF_AGENT_CUPTI_ERROR, (int32_t)r, 0, "cuptiActivityEnable: %s (%d)",
			       result_name(r), (int)r);
			while (i--)
				cupti.ActivityDisable(kinds[i]);
			cupti.Unsubscribe(subscriber);
			return -1;
		}
	}
	status(FVBPF_AGENT_ACTIVE, clock_mode, decoder.clock_offset, "CUPTI active (%s)", cupti.path);
	return 0;
}

static void deactivate(void)
{
	size_t i;

	cupti.ActivityFlushAll(1);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		cupti.ActivityDisable(kinds[i]);
	cupti.ActivityFlushAll(1);
	cupti.Unsubscribe(subscriber);
}

static void flush_activity(void)
{
	cupti.ActivityFlushAll(0);
}

#else /* !FVBPF_HAVE_CUPTI */

static int cuda_mapped(void)
{
	return 0;
}

static int activate(void)
{
	status(FVBPF_AGENT_NO_CUPTI, 0, 0, "this libfvbpf.so was built without CUPTI headers");
	return -1;
}

static void deactivate(void) {}
static void flush_activity(void) {}

#endif

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
	r = activate();
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
				deactivate();
			pthread_mutex_lock(&batch_lock);
			batch_flush_locked();
			pthread_mutex_unlock(&batch_lock);
			pthread_mutex_lock(&lock);
			continue;
		}
		if (state == WAIT_CUDA) {
			if (cuda_mapped())
				activate_unlocked();
			continue;
		}
		flush_wanted = 0;
		pthread_mutex_unlock(&lock);
		flush_activity();
		pthread_mutex_lock(&lock);
	}
	return NULL;
}

/* A child forked while our thread held the lock would deadlock on it, and
 * has no agent thread: start it afresh. */
static void atfork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	pthread_mutex_init(&batch_lock, NULL);
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
 * reads two words; it never loads anything itself.
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
	}
	return NULL;
}

void agent_start_watch(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t th;

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
/*
 * Test doubles' entry points, only in the test build of the library
 * (build/test-lib).  Without a GPU, CUPTI never calls us; a test workload
 * stands in for it by feeding the agent's real record path with activity
 * buffers (parsed by the real libcupti) and by firing the API callback's
 * correlation probe from inside a call.  Its records carry CLOCK_MONOTONIC
 * stamps it made itself, and the status says so.
 */
FVBPF_EXPORT int fvbpf_agent_test_activate(const char *cupti_path)
{
#ifdef FVBPF_HAVE_CUPTI
	pthread_mutex_lock(&batch_lock);
	if ((!cupti.dl && !try_open(cupti_path)) || !resolve()) {
		pthread_mutex_unlock(&batch_lock);
		return -1;
	}
	decoder.next = (cupti_next_record_fn)cupti.ActivityGetNextRecord;
	decoder.emit = batch_emit;
	decoder.clock_offset = 0;
	cupti_decoder_reset_names(&decoder);
	pthread_mutex_unlock(&batch_lock);
	status(FVBPF_AGENT_ACTIVE, FVBPF_CLOCK_SIMULATED, 0, "test double: CUPTI record path (%s)",
	       cupti.path);
	return 0;
#else
	(void)cupti_path;
	return -1;
#endif
}

FVBPF_EXPORT void fvbpf_agent_test_api_enter(uint32_t correlation, uint32_t cbid, uint32_t domain)
{
	if (probes_callable())
		fvbpf_probe_correlation(correlation, cbid, domain);
}

FVBPF_EXPORT void fvbpf_agent_test_buffer(uint8_t *buf, size_t valid)
{
	deliver_buffer(buf, valid);
}
#endif /* FVBPF_TEST_HOOKS */
