/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The marker library's probe functions and variables fvbpf looks for
 * (proc/proc_info.c finds them, attach/marker_attach.c probes them), in
 * model/ because a target holds a link per symbol (model/session.h).
 */
#ifndef FVBPF_MARKER_SYMS_H
#define FVBPF_MARKER_SYMS_H

enum marker_sym {
	MARKER_BEGIN,
	MARKER_END,
	MARKER_SEMAPHORE,
	MARKER_SYNC,
	MARKER_CONTROL,
	MARKER_CORRELATION,
	MARKER_GPU_BATCH,
	MARKER_AGENT_STATUS,
	MARKER_SCOPE_END,       /* optional from here on (libraries since the operator fast path) */
	MARKER_PY_STACK,
	MARKER_BEGIN_TS,        /* the region probes with the library's timestamp, since 2026-12 */
	MARKER_END_TS,
	MARKER_NSYMS,
};

#endif /* FVBPF_MARKER_SYMS_H */
