// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The Python shim's launcher: in a process with a CPython, fvbpf's request
 * (the control page's py_req) is served by python/fvbpf/_shim.py, embedded
 * here, run in the interpreter's main thread at its next safe point.
 *
 * Py_AddPendingCall() is the way in: it needs neither the GIL nor a thread
 * state (any thread of ours may call it), and the interpreter runs the call
 * in its main thread, GIL held, between two bytecodes: a point where Python
 * code may run as if the job had called it.  A main thread blocked in C (a
 * long sleep, a CUDA synchronize) runs it when it comes back; fvbpf says so
 * after a bounded wait and goes on.  PEP 768's sys.remote_exec() would need
 * Python 3.14; this works from 3.8 on, with the library already in place.
 *
 * Every Python API function is looked up with dlsym(): the library has no
 * link-time dependency on libpython, and a process without one never gets
 * here (control->python stays 0).  The shim itself never raises into the
 * job; an error here is cleared and reported through the status probe.
 *
 * Once the semaphore falls (fvbpf detached or killed) after the shim ran,
 * the same way in runs the shim's restore(): the py: functions get their
 * own code back.  A main thread blocked in C runs it when it comes back;
 * until then the trampolines restore themselves on their first call, from
 * any thread (the shim reads the semaphore and the control page itself).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "agent.h"
#include "channel.h"
#include "control.h"
#include "fvbpf_pyshim.h"
#include "pyshim.h"
#include "gen/pyshim_source.h"

typedef struct fvbpf_pyobject PyObject;  /* opaque: only pointers pass */

#define PY_FILE_INPUT 257  /* Python's Py_file_input (Include/compile.h) */
#define PY_EVAL_INPUT 258  /* Py_eval_input */

struct py_api {
	int (*add_pending_call)(int (*)(void *), void *);
	int (*is_initialized)(void);
	int (*is_finalizing)(void);
	PyObject *(*import_add_module)(const char *);
	PyObject *(*module_get_dict)(PyObject *);
	PyObject *(*dict_get_item_string)(PyObject *, const char *);
	int (*dict_set_item_string)(PyObject *, const char *, PyObject *);
	PyObject *(*eval_get_builtins)(void);
	PyObject *(*run_string_flags)(const char *, int, PyObject *, PyObject *, void *);
	PyObject *(*bytes_from_string_and_size)(const char *, ssize_t);
	PyObject *(*long_from_void_ptr)(void *);
	void (*dec_ref)(PyObject *);
	void (*err_clear)(void);
};

static struct py_api api;
static int api_state;          /* 0 not looked up, 1 usable, -1 not a CPython */
static int pending;            /* a call is queued and has not run yet */
static int shim_ran;           /* the shim module exists in the interpreter */
static int restore_due;        /* fvbpf was seen attached since the shim ran */
static int restore_pending;    /* restore() is queued and has not run yet */

FVBPF_EXPORT void fvbpf_region_begin(const char *name);
FVBPF_EXPORT void fvbpf_region_end(const char *name);
FVBPF_EXPORT void fvbpf_py_status(uint32_t code, int32_t detail, int64_t value, const char *msg);

#define LOOKUP(field, name)                                        \
	do {                                                       \
		*(void **)&api.field = dlsym(RTLD_DEFAULT, name);  \
		if (!api.field)                                    \
			return -1;                                 \
	} while (0)

static int api_lookup(void)
{
	LOOKUP(add_pending_call, "Py_AddPendingCall");
	LOOKUP(is_initialized, "Py_IsInitialized");
	LOOKUP(import_add_module, "PyImport_AddModule");
	LOOKUP(module_get_dict, "PyModule_GetDict");
	LOOKUP(dict_get_item_string, "PyDict_GetItemString");
	LOOKUP(dict_set_item_string, "PyDict_SetItemString");
	LOOKUP(eval_get_builtins, "PyEval_GetBuiltins");
	LOOKUP(run_string_flags, "PyRun_StringFlags");
	LOOKUP(bytes_from_string_and_size, "PyBytes_FromStringAndSize");
	LOOKUP(long_from_void_ptr, "PyLong_FromVoidPtr");
	LOOKUP(dec_ref, "Py_DecRef");
	LOOKUP(err_clear, "PyErr_Clear");
	/* Public from 3.13; the private name before. */
	*(void **)&api.is_finalizing = dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
	if (!api.is_finalizing)
		*(void **)&api.is_finalizing = dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
	return 1;
}

static int api_usable(void)
{
	if (!api_state)
		api_state = api_lookup();
	return api_state > 0;
}

void pyshim_probe(void)
{
	struct fvbpf_control *c = control;

	if (c && api_usable())
		c->python = 1;
}

/* A global of the shim module, as a new object; 0 or -1. */
static int set_global(PyObject *dict, const char *name, PyObject *value)
{
	int ret;

	if (!value)
		return -1;
	ret = api.dict_set_item_string(dict, name, value);
	api.dec_ref(value);
	return ret;
}

/* The request as it stands, copied while fvbpf is not rewriting it. */
static size_t copy_request(char *buf, size_t cap, uint32_t *gen)
{
	const struct fvbpf_control *c = control;
	uint32_t before, len;
	int tries;

	for (tries = 0; tries < 4; tries++) {
		before = channel_request(&c->py, &len);
		if (len > cap)
			len = (uint32_t)cap;
		memcpy(buf, (const void *)c->py_req, len);
		if (channel_request(&c->py, NULL) == before) {
			*gen = before;
			return len;
		}
	}
	*gen = 0;
	return 0;
}

static int serve(PyObject *dict)
{
	char req[FVBPF_PY_REQ_MAX];
	PyObject *r;
	uint32_t gen;
	size_t len;

	if (!api.dict_get_item_string(dict, "run")) {
		if (api.dict_set_item_string(dict, "__builtins__", api.eval_get_builtins()))
			return -1;
		r = api.run_string_flags(fvbpf_pyshim_source, PY_FILE_INPUT, dict, dict, NULL);
		if (!r)
			return -1;
		api.dec_ref(r);
	}
	len = copy_request(req, sizeof(req), &gen);
	if (!gen)
		return -1;
	__atomic_store_n(&shim_ran, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&restore_due, 1, __ATOMIC_RELEASE);
	/* The shim reads the semaphore and the control page's magic (0 in a
	 * forked child) to tell that fvbpf is gone: globals, not arguments, so
	 * that an import hook's older shim file still takes the call. */
	if (set_global(dict, "_fvbpf_req", api.bytes_from_string_and_size(req, (ssize_t)len)) ||
	    set_global(dict, "_fvbpf_begin", api.long_from_void_ptr((void *)fvbpf_region_begin)) ||
	    set_global(dict, "_fvbpf_end", api.long_from_void_ptr((void *)fvbpf_region_end)) ||
	    set_global(dict, "_fvbpf_status", api.long_from_void_ptr((void *)fvbpf_py_status)) ||
	    set_global(dict, "_fvbpf_sem", api.long_from_void_ptr((void *)(uintptr_t)&semaphore)) ||
	    set_global(dict, "_fvbpf_ctl", api.long_from_void_ptr((void *)control)))
		return -1;
	r = api.run_string_flags("run(_fvbpf_req, _fvbpf_begin, _fvbpf_end, _fvbpf_status)",
				 PY_EVAL_INPUT, dict, dict, NULL);
	if (!r)
		return -1;
	api.dec_ref(r);
	if (control)
		channel_answer(&control->py, gen, &(struct channel_reply){ .fd = -1 });
	return 0;
}

/* Runs in the main thread with the GIL; returns 0 whatever happens, so no
 * exception ever reaches the job's code. */
static int run_pending(void *arg)
{
	PyObject *mod;

	(void)arg;
	__atomic_store_n(&pending, 0, __ATOMIC_RELEASE);
	/* A child forked while the call was queued inherits the queue, not
	 * the request: its control page reads zero.  Nobody asks any more
	 * once the semaphore fell: nothing is wrapped for a gone fvbpf. */
	if (!probes_callable() || !semaphore || (api.is_finalizing && api.is_finalizing()))
		return 0;
	mod = api.import_add_module("_fvbpf_shim");
	if (!mod || serve(api.module_get_dict(mod))) {
		api.err_clear();
		fvbpf_py_status(FVBPF_PY_ERROR, 0, 0, "the Python shim could not run");
	}
	return 0;
}

/* Main thread, GIL held: the shim's restore(), which does nothing while
 * fvbpf is attached again; returns 0 whatever happens. */
static int run_restore(void *arg)
{
	PyObject *mod, *dict, *r;

	(void)arg;
	__atomic_store_n(&restore_pending, 0, __ATOMIC_RELEASE);
	if (api.is_finalizing && api.is_finalizing())
		return 0;
	mod = api.import_add_module("_fvbpf_shim");
	dict = mod ? api.module_get_dict(mod) : NULL;
	if (!dict || !api.dict_get_item_string(dict, "restore")) {
		api.err_clear();
		return 0;
	}
	r = api.run_string_flags("restore()", PY_EVAL_INPUT, dict, dict, NULL);
	if (r)
		api.dec_ref(r);
	else
		api.err_clear();
	return 0;
}

/* Once per fall of the semaphore after the shim ran: queue restore(). */
static void restore_poll(void)
{
	if (!__atomic_load_n(&restore_due, __ATOMIC_ACQUIRE) || !api_usable() ||
	    !api.is_initialized() || (api.is_finalizing && api.is_finalizing()))
		return;
	if (__atomic_exchange_n(&restore_pending, 1, __ATOMIC_ACQ_REL))
		return;
	__atomic_store_n(&restore_due, 0, __ATOMIC_RELEASE);
	if (api.add_pending_call(run_restore, NULL)) {
		/* the interpreter's queue is full: the next poll tries again */
		__atomic_store_n(&restore_due, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&restore_pending, 0, __ATOMIC_RELEASE);
	}
}

void pyshim_poll(void)
{
	const struct fvbpf_control *c = control;
	uint32_t gen;

	if (!c || !c->python)
		return;
	if (!semaphore) {
		restore_poll();
		return;
	}
	if (__atomic_load_n(&shim_ran, __ATOMIC_ACQUIRE))
		__atomic_store_n(&restore_due, 1, __ATOMIC_RELEASE);
	if (!live_epoch())
		return;
	gen = channel_request(&c->py, NULL);
	if (!channel_pending(&c->py, gen))
		return;
	if (!api_usable() || !api.is_initialized() ||
	    (api.is_finalizing && api.is_finalizing()))
		return;
	if (__atomic_exchange_n(&pending, 1, __ATOMIC_ACQ_REL))
		return;
	/* -1: the interpreter's queue is full; the next poll tries again. */
	if (api.add_pending_call(run_pending, NULL))
		__atomic_store_n(&pending, 0, __ATOMIC_RELEASE);
}

/*
 * The import hook's shim (loaded by the fvbpf package, not injected) calls
 * this: a job whose regions have not run yet calls no marker that would
 * notice fvbpf's request, so the injected library's watch thread (four
 * reads a second) does it here too.
 */
FVBPF_EXPORT void fvbpf_py_watch(void)
{
	agent_start_watch();
}

/* The shim's answers, through the agent's status probe (fvbpf_pyshim.h). */
FVBPF_EXPORT void fvbpf_py_status(uint32_t code, int32_t detail, int64_t value, const char *msg)
{
	char buf[FVBPF_STATUS_MSG];

	if (!probes_callable() || !semaphore)
		return;
	memset(buf, 0, sizeof(buf));
	if (msg)
		strncpy(buf, msg, sizeof(buf) - 1);
	fvbpf_probe_agent_status(code, detail, value, buf);
}
