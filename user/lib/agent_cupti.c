// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The agent's CUPTI side: finding and loading a libcupti that matches the
 * process's CUDA, subscribing to the launch/copy/set callbacks, enabling
 * activity with our clock, and turning it all off again.  Built without
 * CUPTI headers, activation only says so.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
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

#include "control.h"
#include "util/clock.h"
#include "agent_internal.h"

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

int agent_cuda_mapped(void)
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
	agent_deliver_buffer(buf, valid);
	free(buf);
	if (cupti.ActivityGetNumDroppedRecords &&
	    cupti.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		agent_status(FVBPF_AGENT_DROPPED, 0, (int64_t)dropped, "CUPTI dropped %zu records",
			     dropped);
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

int agent_cupti_activate(void)
{
	CUptiResult r;
	size_t i;

	/* CUPTI in a CPU-only job would be dead weight and a CUDA driver
	 * context nobody asked for. */
	if (!agent_cuda_mapped()) {
		agent_status(FVBPF_AGENT_NO_CUDA, 0, 0,
			     "no CUDA in this process (no libcudart or libcuda mapped): "
			     "GPU activity starts if it loads CUDA while fvbpf is attached");
		return ACTIVATE_LATER;
	}
	if (!open_cupti()) {
		agent_status(FVBPF_AGENT_NO_CUPTI, 0, 0,
			     "no CUPTI found (beside libcudart, $CUDA_HOME, "
			     "/usr/local/cuda, the loader path; set FVBPF_CUPTI in the job)");
		return -1;
	}
	if (!resolve()) {
		agent_status(FVBPF_AGENT_CUPTI_TOO_OLD, 0, 0, "%s lacks functions fvbpf needs",
			     cupti.path);
		return -1;
	}
	/*
	 * Subscribe first: if another client (torch.profiler) holds CUPTI,
	 * touch nothing of its process-wide state (clock, buffer callbacks).
	 */
	r = cupti.Subscribe(&subscriber, (CUpti_CallbackFunc)on_api, NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		agent_status(FVBPF_AGENT_OTHER_SUBSCRIBER, (int32_t)r, 0,
			     "another CUPTI subscriber is "
			     "active (torch.profiler?): GPU activity off, CUDA calls still traced");
		return -1;
	}
	if (r == CUPTI_ERROR_NOT_COMPATIBLE) {
		agent_status(FVBPF_AGENT_CUPTI_TOO_OLD, (int32_t)r, 0,
			     "%s does not match the driver (%s)",
			     cupti.path, result_name(r));
		return -1;
	}
	if (r != CUPTI_SUCCESS) {
		agent_status(FVBPF_AGENT_CUPTI_ERROR, (int32_t)r, 0, "cuptiSubscribe: %s (%d)",
			     result_name(r), (int)r);
		return -1;
	}
	agent_decoder.next = (cupti_next_record_fn)cupti.ActivityGetNextRecord;
	agent_decoder.emit = agent_batch_emit;
	cupti_decoder_reset_names(&agent_decoder);
	/* Our clock must be in place before any activity is enabled. */
	clock_mode = FVBPF_CLOCK_CALIBRATED;
	agent_decoder.clock_offset = 0;
	if (timestamp_cb_registered || (cupti.ActivityRegisterTimestampCallback &&
	    cupti.ActivityRegisterTimestampCallback(monotonic_ns) == CUPTI_SUCCESS)) {
		timestamp_cb_registered = 1;
		clock_mode = FVBPF_CLOCK_CALLBACK;
	} else {
		agent_decoder.clock_offset = calibrate();
	}
	r = cupti.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		agent_status(FVBPF_AGENT_CUPTI_ERROR, (int32_t)r, 0,
			     "cuptiActivityRegisterCallbacks: %s (%d)",
			     result_name(r), (int)r);
		cupti.Unsubscribe(subscriber);
		return -1;
	}
	enable_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
	enable_callbacks(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		r = cupti.ActivityEnable(kinds[i]);
		if (r != CUPTI_SUCCESS) {
			agent_status(FVBPF_AGENT_CUPTI_ERROR, (int32_t)r, 0,
				     "cuptiActivityEnable: %s (%d)",
				     result_name(r), (int)r);
			while (i--)
				cupti.ActivityDisable(kinds[i]);
			cupti.Unsubscribe(subscriber);
			return -1;
		}
	}
	agent_status(FVBPF_AGENT_ACTIVE, clock_mode, agent_decoder.clock_offset,
		     "CUPTI active (%s)",
		     cupti.path);
	return 0;
}

void agent_cupti_deactivate(void)
{
	size_t i;

	cupti.ActivityFlushAll(1);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		cupti.ActivityDisable(kinds[i]);
	cupti.ActivityFlushAll(1);
	cupti.Unsubscribe(subscriber);
}

void agent_cupti_flush(void)
{
	cupti.ActivityFlushAll(0);
}

#else /* !FVBPF_HAVE_CUPTI */

int agent_cuda_mapped(void)
{
	return 0;
}

int agent_cupti_activate(void)
{
	agent_status(FVBPF_AGENT_NO_CUPTI, 0, 0,
		     "this libfvbpf.so was built without CUPTI headers");
	return -1;
}

void agent_cupti_deactivate(void) {}
void agent_cupti_flush(void) {}

#endif

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
	pthread_mutex_lock(&agent_batch_lock);
	if ((!cupti.dl && !try_open(cupti_path)) || !resolve()) {
		pthread_mutex_unlock(&agent_batch_lock);
		return -1;
	}
	agent_decoder.next = (cupti_next_record_fn)cupti.ActivityGetNextRecord;
	agent_decoder.emit = agent_batch_emit;
	agent_decoder.clock_offset = 0;
	cupti_decoder_reset_names(&agent_decoder);
	pthread_mutex_unlock(&agent_batch_lock);
	agent_status(FVBPF_AGENT_ACTIVE, FVBPF_CLOCK_SIMULATED, 0,
		     "test double: CUPTI record path (%s)",
		     cupti.path);
	return 0;
#else
	(void)cupti_path;
	return -1;
#endif
}
#endif /* FVBPF_TEST_HOOKS */
