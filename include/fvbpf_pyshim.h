/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The Python shim's protocol, shared by the loader and libfvbpf.so.
 *
 * The request (struct fvbpf_control's py_req) is text, one item a line:
 *   "fastvideo"              wrap fastvideo.profiler's region entry points
 *   "py MODULE:QUALNAME"     make each call of that function a region
 * The shim answers through fvbpf_probe_agent_status() with the codes below
 * (kept clear of the CUPTI agent's, which are under 32).
 */
#ifndef FVBPF_PYSHIM_H
#define FVBPF_PYSHIM_H

#define FVBPF_PY_SPECS_MAX 16      /* -r py:... items */
#define FVBPF_PY_PREFIX "py:"
#define FVBPF_PY_PREFIX_LEN 3

enum fvbpf_py_status {
	FVBPF_PY_FIRST = 32,
	FVBPF_PY_READY = 32,       /* the shim ran; detail: FastVideo entry points
				    * wrapped (0: fastvideo.profiler not imported
				    * yet, watched), value: py: functions wrapped */
	FVBPF_PY_FASTVIDEO = 33,   /* fastvideo.profiler imported later and wrapped;
				    * detail: entry points */
	FVBPF_PY_FUNC = 34,        /* a py: function wrapped (msg: which) */
	FVBPF_PY_WAITING = 35,     /* a py: function's module is not imported yet */
	FVBPF_PY_UNRESOLVED = 36,  /* a py: item names nothing callable (msg: why);
				    * detail FVBPF_PY_NOT_A_REGION: it names something
				    * that cannot be a region (a builtin, a generator
				    * function) */
	FVBPF_PY_REFUSED = 37,     /* free-threaded build, sub-interpreters */
	FVBPF_PY_ERROR = 38,       /* the shim failed (msg: the exception) */
	FVBPF_PY_LAST = 38,
};

#define FVBPF_PY_NOT_A_REGION 1    /* FVBPF_PY_UNRESOLVED's detail */

#endif /* FVBPF_PYSHIM_H */
