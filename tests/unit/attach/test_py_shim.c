// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The loader's side of the Python shim: -r py: items (attach/py_request.c)
 * and the shim's answers, which are the target's bytes
 * (pipeline/py_status.c): unterminated, with terminal escapes, unknown
 * codes, absurd counts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attach/py_request.h"
#include "attach/target.h"
#include "fvbpf_pyshim.h"
#include "model/session.h"
#include "pipeline/py_status.h"
#include "unit.h"
#include "pipeline/registry.h"
#include "proc/proc_info.h"

static struct session s;
static struct session_target t;

static void reset(void)
{
	target_states_free(&t);
	registry__free(s.reg);
	memset(&s, 0, sizeof(s));
	memset(&t, 0, sizeof(t));
	s.reg = registry__new();
	CHECK(s.reg != NULL);
	registry_init(s.reg);
	CHECK_EQ(target_states_alloc(&t), 0);
	t.session = &s;
	t.proc->pid = 4242;
}

static void test_items(void)
{
	static const char *const good[] = {
		"py:transformers.trainer:Trainer.training_step",
		"py:__main__:step",
		"py:a:B.c_1",
	};
	static const char *const bad[] = {
		"py:", "py:mod", "py:mod:", "py::f", "py:mod:f.", "py:.mod:f", "py:mod:1f",
		"py:mod:f..g", "py:m-od:f", "py:mod:f:g", "py:mod:f g", "py:m\xc3\xa9:f",
		/* 64 characters: one over a region name's limit */
		"py:a:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
	};
	size_t i;
	int idx;

	reset();
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(py_request_item(good[i]));
		CHECK_EQ(py_request_add(&s, good[i]), 0);
		idx = registry_find(s.reg, good[i]);
		CHECK(idx >= 0);
		if (idx >= 0)
			CHECK(s.reg->defs[idx].enabled);
	}
	CHECK_EQ(s.npy_specs, 3);
	CHECK_STR(s.py_specs[0], "transformers.trainer:Trainer.training_step");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (py_request_add(&s, bad[i]) != -EINVAL)
			printf("# accepted: %s\n", bad[i]);
		CHECK_EQ(py_request_add(&s, bad[i]), -EINVAL);
	}
	CHECK_EQ(s.npy_specs, 3);
	CHECK(!py_request_item("torch:Optimizer.step*"));
	CHECK(!py_request_item("training_forward"));
}

static void test_too_many(void)
{
	char item[32];
	int i;

	reset();
	for (i = 0; i < FVBPF_PY_SPECS_MAX; i++) {
		snprintf(item, sizeof(item), "py:m:f%d", i);
		CHECK_EQ(py_request_add(&s, item), 0);
	}
	CHECK_EQ(py_request_add(&s, "py:m:one_more"), -EINVAL);
	CHECK_EQ(s.npy_specs, FVBPF_PY_SPECS_MAX);
}

static void event(uint32_t code, int32_t detail, int64_t value, const char *msg, size_t len)
{
	struct fvbpf_agent_status_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.code = code;
	ev.detail = detail;
	ev.value = value;
	memcpy(ev.msg, msg, len < sizeof(ev.msg) ? len : sizeof(ev.msg));
	py_status_event(&t, &ev);
}

static bool clean(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static void test_hostile_answers(void)
{
	char full[FVBPF_STATUS_MSG];

	reset();
	t.py->asked = true;
	/* every byte used, no NUL, escapes inside */
	memset(full, 'A', sizeof(full));
	memcpy(full, "\x1b[2J\x1b]0;pwn\x07", 12);
	event(FVBPF_PY_READY, 3, 2, full, sizeof(full));
	CHECK(t.py->heard);
	CHECK_EQ(t.py->fastvideo, 3);
	CHECK_EQ(t.py->funcs, 2);
	CHECK(strlen(t.py->status) < sizeof(t.py->status));
	CHECK(clean(t.py->status));
	/* an absurd count is not believed */
	event(FVBPF_PY_READY, -5, 1LL << 40, "x", 1);
	CHECK_EQ(t.py->fastvideo, -1);
	CHECK_EQ(t.py->funcs, 2);
	event(FVBPF_PY_WAITING, 0, 0, "w", 1);
	event(FVBPF_PY_UNRESOLVED, 0, 0, "u\n\r", 3);
	CHECK_EQ(t.py->waiting, 1);
	CHECK_EQ(t.py->unresolved, 1);
	/* a name that resolves to what cannot be a region: counted apart */
	event(FVBPF_PY_UNRESOLVED, FVBPF_PY_NOT_A_REGION, 0, "g\x1b", 2);
	CHECK_EQ(t.py->unresolved, 1);
	CHECK_EQ(t.py->refused, 1);
	/* its region's "never entered" is said by the refusal */
	event(FVBPF_PY_UNRESOLVED, FVBPF_PY_NOT_A_REGION, 0, "py:m:gen is a generator function", 33);
	CHECK_EQ(t.py->refused, 2);
	CHECK(py_status_refused(t.py, fvbpf_region_hash("py:m:gen")));
	CHECK(!py_status_refused(t.py, fvbpf_region_hash("py:m:other")));
	event(FVBPF_PY_REFUSED, 0, 0, full, sizeof(full));
	CHECK(!strncmp(t.py->status, "refused: ", 9));
	CHECK(clean(t.py->status));
	event(FVBPF_PY_ERROR, 0, 0, "\x9b" "31m", 4);
	CHECK(!strncmp(t.py->status, "error: ", 7));
	CHECK(clean(t.py->status));
}

static void test_wait(void)
{
	reset();
	py_status_tick(&t, 10 * PY_WAIT_NS); /* nothing asked: nothing said */
	CHECK(!t.py->wait_warned);
	t.py->asked = true;
	t.py->asked_ns = 1000;
	py_status_tick(&t, 1000 + PY_WAIT_NS - 1);
	CHECK(!t.py->wait_warned);
	py_status_tick(&t, 1000 + PY_WAIT_NS);
	CHECK(t.py->wait_warned);
	CHECK_STR(t.py->status, "waiting for the main thread");
	/* the answer after the warning */
	event(FVBPF_PY_READY, 3, 0, "fastvideo.profiler wrapped", 26);
	CHECK_STR(t.py->status, "fastvideo.profiler wrapped");
	/* answered in time: no warning */
	reset();
	t.py->asked = true;
	event(FVBPF_PY_READY, 0, 0, "ok", 2);
	py_status_tick(&t, 100 * PY_WAIT_NS);
	CHECK(!t.py->wait_warned);
}

int main(void)
{
	RUN(test_items);
	RUN(test_too_many);
	RUN(test_hostile_answers);
	RUN(test_wait);
	target_states_free(&t);
	UNIT_DONE();
}
