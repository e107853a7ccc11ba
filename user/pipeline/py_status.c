// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The Python shim's answers (include/fvbpf_pyshim.h): logged once each and
 * kept for the exit report.  The text is the target's: cleaned before it
 * reaches a terminal or a file.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "fvbpf_events.h"
#include "fvbpf_pyshim.h"
#include "model/session.h"
#include "pipeline/py_status.h"
#include "fvbpf_canon.h"
#include "util/log.h"
#include "util/text_sanitize.h"
#include "proc/proc_info.h"

static void ready(struct session_target *t, const struct fvbpf_agent_status_event *ev,
		  const char *msg)
{
	struct py_state *py = t->py;
	bool late = py->wait_warned;

	py->heard = true;
	py->fastvideo = ev->detail > 0 ? ev->detail : -1;
	if (ev->value > 0 && ev->value < 1000000)
		py->funcs = (unsigned int)ev->value;
	snprintf(py->status, sizeof(py->status), "%s", msg);
	log_info("PID %d: Python shim %s: %s%s", t->proc->pid, late ? "ran at last" : "ran", msg,
		 late ? "; Python regions from now on" : "");
}

/* A refusal's message starts with the region's name ("py:M:Q is a ..."). */
static void note_refused(struct py_state *py, const char *raw)
{
	char name[FVBPF_REGION_NAME_MAX + 1];
	size_t n = strcspn(raw, " ");

	if (!n || n > FVBPF_REGION_NAME_MAX || py->nrefused_hash == FVBPF_PY_SPECS_MAX)
		return;
	memcpy(name, raw, n);
	name[n] = '\0';
	py->refused_hash[py->nrefused_hash++] = fvbpf_region_hash(name);
}

bool py_status_refused(const struct py_state *py, uint64_t hash)
{
	unsigned int i;

	for (i = 0; i < py->nrefused_hash && i < FVBPF_PY_SPECS_MAX; i++)
		if (py->refused_hash[i] == hash)
			return true;
	return false;
}

void py_status_event(struct session_target *t, const struct fvbpf_agent_status_event *ev)
{
	char raw[FVBPF_STATUS_MSG + 1], msg[FVBPF_STATUS_MSG + 1];
	struct py_state *py = t->py;

	memcpy(raw, ev->msg, FVBPF_STATUS_MSG);
	raw[FVBPF_STATUS_MSG] = '\0';
	text_clean_terminal(msg, sizeof(msg), raw);
	switch (ev->code) {
	case FVBPF_PY_READY:
		ready(t, ev, msg);
		return;
	case FVBPF_PY_FASTVIDEO:
		py->fastvideo = ev->detail;
		snprintf(py->status, sizeof(py->status), "%s", msg);
		log_info("PID %d: %s: FastVideo's regions are fvbpf regions now", t->proc->pid, msg);
		return;
	case FVBPF_PY_FUNC:
		log_info("PID %d: %s is a region now%s", t->proc->pid, msg,
			 ev->detail ? "" : " (wrapped by an earlier attach)");
		return;
	case FVBPF_PY_WAITING:
		py->waiting++;
		log_warn("PID %d: %s", t->proc->pid, msg);
		return;
	case FVBPF_PY_UNRESOLVED:
		if (ev->detail == FVBPF_PY_NOT_A_REGION) {
			py->refused++;
			note_refused(py, raw);
			log_warn("PID %d: %s", t->proc->pid, msg);
			return;
		}
		py->unresolved++;
		log_warn("PID %d: %s; check the name (module:Class.method) against the job's code",
			 t->proc->pid, msg);
		return;
	case FVBPF_PY_REFUSED:
		py->heard = true;
		snprintf(py->status, sizeof(py->status), "refused: %s", msg);
		log_warn("PID %d: %s; operators, CUDA calls and markers are still traced",
			 t->proc->pid, msg);
		return;
	default:
		py->heard = true;
		snprintf(py->status, sizeof(py->status), "error: %s", msg);
		log_warn("PID %d: the Python shim failed (%s); Python regions are off, the job runs "
			 "on", t->proc->pid, msg);
		return;
	}
}

void py_status_tick(struct session_target *t, uint64_t now_ns)
{
	struct py_state *py = t->py;

	if (!py->asked || py->heard || py->wait_warned || t->finished ||
	    now_ns - py->asked_ns < PY_WAIT_NS)
		return;
	py->wait_warned = true;
	snprintf(py->status, sizeof(py->status), "waiting for the main thread");
	log_warn("PID %d: its Python main thread has not run Python code for %llu s (blocked in C "
		 "code or a long sleep?): FastVideo and py: regions start when it does",
		 t->proc->pid, PY_WAIT_NS / 1000000000ULL);
}

struct py_state *py_state__new(void)
{
	return calloc(1, sizeof(struct py_state));
}

void py_state__free(struct py_state *p)
{
	free(p);
}
