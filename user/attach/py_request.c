// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The request for a target's Python shim (include/fvbpf_pyshim.h), built
 * from -r and written into the library's control page (shim_channel.c).
 * A py: item is checked here, before anything attaches, so a typo in its
 * syntax is one line at start; whether it names a function only the job's
 * interpreter can tell (the shim's answer, py_status.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attach/py_request.h"
#include "fvbpf_pyshim.h"
#include "model/session.h"
#include "proc/control/shim_channel.h"
#include "util/clock.h"
#include "util/log.h"
#include "pipeline/py_status.h"
#include "pipeline/registry.h"

bool py_request_item(const char *item)
{
	return !strncmp(item, FVBPF_PY_PREFIX, FVBPF_PY_PREFIX_LEN);
}

static bool ident_char(char c, bool first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && c >= '0' && c <= '9');
}

/* A dotted name of Python identifiers ("a.b_c.D1"), ASCII only, ending at @end. */
static bool dotted(const char *p, const char *end)
{
	bool first = true;

	if (p == end)
		return false;
	for (; p < end; p++) {
		if (*p == '.') {
			if (first)
				return false;
			first = true;
			continue;
		}
		if (!ident_char(*p, first))
			return false;
		first = false;
	}
	return !first;
}

int py_request_add(struct session *s, const char *item)
{
	const char *spec = item + FVBPF_PY_PREFIX_LEN, *colon = strchr(spec, ':');
	size_t len = strlen(item);
	int idx;

	if (!colon || !dotted(spec, colon) || !dotted(colon + 1, spec + strlen(spec))) {
		log_error("'%.100s': give a Python function as py:MODULE:QUALNAME, e.g. "
			  "py:transformers.trainer:Trainer.training_step", item);
		return -EINVAL;
	}
	if (len > FVBPF_REGION_NAME_MAX) {
		log_error("'%.100s' is %zu characters; a region name has at most %d: name the "
			  "function by a shorter module path", item, len, FVBPF_REGION_NAME_MAX);
		return -EINVAL;
	}
	if (s->npy_specs == FVBPF_PY_SPECS_MAX) {
		log_error("more than %d py: items in -r", FVBPF_PY_SPECS_MAX);
		return -EINVAL;
	}
	idx = registry_add(s->reg, item, "Python function (-r py:)");
	if (idx < 0) {
		log_error("'%.100s' cannot be a region: %s", item, strerror(-idx));
		return idx;
	}
	s->reg->defs[idx].enabled = true;
	s->py_specs[s->npy_specs++] = spec;
	return 0;
}

/* "fastvideo\n" and "py MODULE:QUALNAME\n" lines; its length or -E2BIG. */
static int build(const struct session *s, char *buf, size_t cap)
{
	size_t used = 0;
	unsigned int i;
	int n;

	if (s->py_fastvideo) {
		n = snprintf(buf, cap, "fastvideo\n");
		used = (size_t)n;
	}
	for (i = 0; i < s->npy_specs && used < cap; i++) {
		n = snprintf(buf + used, cap - used, "py %s\n", s->py_specs[i]);
		if (n < 0 || (size_t)n >= cap - used)
			return -E2BIG;
		used += (size_t)n;
	}
	return used < cap ? (int)used : -E2BIG;
}

void py_request_send(struct session *s, struct session_target *t)
{
	char req[FVBPF_PY_REQ_MAX];
	int len, err;

	if (!s->py_fastvideo && !s->npy_specs)
		return;
	err = shim_channel_capable(t->ctl);
	if (err <= 0) {
		if (s->npy_specs)
			log_warn("PID %d (%s) has no CPython fvbpf can run its shim in: the py: "
				 "regions stay empty", t->proc->pid, t->proc->comm);
		return;
	}
	len = build(s, req, sizeof(req));
	if (len < 0) {
		log_warn("PID %d: the py: items do not fit the %d bytes of the request; "
			 "Python regions are off", t->proc->pid, FVBPF_PY_REQ_MAX);
		return;
	}
	err = shim_channel_request(t->ctl, req, (size_t)len, &t->py->gen);
	if (err) {
		log_warn("PID %d: cannot write the Python shim's request: %s", t->proc->pid,
			 strerror(-err));
		return;
	}
	t->py->asked = true;
	t->py->heard = false;
	t->py->wait_warned = false;
	t->py->asked_ns = clock_ns(CLOCK_MONOTONIC);
}
