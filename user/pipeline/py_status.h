/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What a target's Python shim said (FastVideo's regions, -r py:...): its
 * answers through the agent status probe, and the bounded wait for a main
 * thread that has not run Python since the request.
 */
#ifndef FVBPF_PY_STATUS_H
#define FVBPF_PY_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "fvbpf_events.h"
#include "fvbpf_pyshim.h"

/* How long a request may wait for the interpreter's main thread before
 * fvbpf says so (it goes on at once either way). */
#define PY_WAIT_NS 2000000000ULL

struct py_state {
	bool asked;                 /* a request went to the target */
	bool heard;                 /* the shim answered it */
	bool wait_warned;
	uint32_t gen;               /* the request's generation */
	uint64_t asked_ns;          /* CLOCK_MONOTONIC */
	int fastvideo;              /* entry points wrapped; -1 not imported yet */
	unsigned int funcs;         /* py: functions wrapped */
	unsigned int waiting;       /* py: functions whose module is not imported */
	unsigned int unresolved;
	unsigned int refused;       /* py: items that name what cannot be a region */
	unsigned int nrefused_hash;
	uint64_t refused_hash[FVBPF_PY_SPECS_MAX]; /* their region names' hashes */
	char status[FVBPF_STATUS_MSG + 16]; /* for the exit report (clean text) */
};

struct session_target;
struct fvbpf_agent_status_event;

/* A status record with a code of enum fvbpf_py_status. */
void py_status_event(struct session_target *t, const struct fvbpf_agent_status_event *ev);
/* Whether a target's shim refused region @hash (its "never entered" is
 * said by the refusal). */
bool py_status_refused(const struct py_state *py, uint64_t hash);
/* The shim has not answered within PY_WAIT_NS: say so once. */
void py_status_tick(struct session_target *t, uint64_t now_ns);

/* A target's Python shim, zeroed (NULL: out of memory); py_state__free()
 * ends it (NULL is fine). */
struct py_state *py_state__new(void);
void py_state__free(struct py_state *p);

#endif /* FVBPF_PY_STATUS_H */
