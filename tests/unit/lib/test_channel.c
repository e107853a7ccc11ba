// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A control-page channel, both sides, on a page of this process: fvbpf's
 * post and answer read (proc/control/channel.c, through process_vm_*),
 * the library's request read and answer (lib/channel.h), and a page the
 * target scribbled on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fvbpf_events.h"
#include "lib/channel.h"
#include "proc/control/channel.h"
#include "proc/control/cuda_hook_channel.h"
#include "proc/control/shim_channel.h"
#include "unit.h"

static struct fvbpf_control page;

static struct control_page fresh(void)
{
	struct control_page c = { .pid = getpid(), .lock_fd = -1, .page = (uintptr_t)&page };

	memset(&page, 0, sizeof(page));
	page.magic = FVBPF_CONTROL_MAGIC;
	return c;
}

/* Each channel: a request, no answer yet, then the library's answer. */
static void test_round_trip(void)
{
	static const enum channel_id ids[] = { CHANNEL_PY, CHANNEL_FAST, CHANNEL_CUDA };
	struct fvbpf_channel *chs[] = { &page.py, &page.fast, &page.cuda };
	struct control_page c = fresh();
	struct channel_answer a = { 0 };
	uint32_t gen = 0, req = 0;
	size_t i;

	for (i = 0; i < 3; i++) {
		CHECK_EQ(channel_post(&c, ids[i], 7 + (uint32_t)i, &gen), 0);
		CHECK(gen != 0);
		CHECK_EQ(channel_request(chs[i], &req), gen);
		CHECK_EQ(req, 7 + (uint32_t)i);
		CHECK(channel_pending(chs[i], gen));
		CHECK_EQ(channel_answered(&c, ids[i], gen, &a), 0);
		channel_answer(chs[i], gen, &(struct channel_reply){
			.state = 1, .err = 12, .fd = 9, .bytes = 4096, .slots = 3 });
		CHECK(!channel_pending(chs[i], gen));
		CHECK_EQ(channel_answered(&c, ids[i], gen, &a), 1);
		CHECK_EQ(a.state, 1u);
		CHECK_EQ(a.err, 12u);
		CHECK_EQ(a.fd, 9);
		CHECK_EQ(a.bytes, 4096u);
		CHECK_EQ(a.slots, 3u);
	}
	/* the channels are apart: the others' answers are untouched */
	CHECK_EQ(page.py.asked, 1u);
	CHECK_EQ(page.cuda.req, 9u);
}

/* A new generation is never 0 nor the last answered one. */
static void test_generation_skips(void)
{
	struct control_page c = fresh();
	uint32_t gen = 0;

	page.fast.asked = 5;
	page.fast.answered = 6;
	CHECK_EQ(channel_post(&c, CHANNEL_FAST, 1, &gen), 0);
	CHECK_EQ(gen, 7u);
	page.fast.asked = UINT32_MAX;
	page.fast.answered = 1;
	CHECK_EQ(channel_post(&c, CHANNEL_FAST, 1, &gen), 0);
	CHECK_EQ(gen, 2u);
	CHECK_EQ(page.fast.asked, 2u);
}

/* The target's page is hostile: a changed magic or an overwritten request
 * is no answer of ours; an answer to another generation is none yet. */
static void test_scribbled_page(void)
{
	struct control_page c = fresh();
	struct channel_answer a = { 0 };
	uint32_t gen = 0;

	CHECK_EQ(channel_post(&c, CHANNEL_CUDA, 0, &gen), 0);
	page.cuda.answered = gen + 1;
	CHECK_EQ(channel_answered(&c, CHANNEL_CUDA, gen, &a), 0);
	page.cuda.answered = gen;
	page.magic = 0x63627666u; /* "fvbc": the layout before channels */
	CHECK_EQ(channel_answered(&c, CHANNEL_CUDA, gen, &a), -EPROTO);
	page.magic = FVBPF_CONTROL_MAGIC;
	page.cuda.asked = gen + 3;
	CHECK_EQ(channel_answered(&c, CHANNEL_CUDA, gen, &a), -EPROTO);
	c.page = 0;
	CHECK_EQ(channel_answered(&c, CHANNEL_CUDA, gen, &a), -ENOENT);
	CHECK_EQ(channel_post(&c, CHANNEL_CUDA, 0, &gen), -ENOENT);
}

/* The library clamps what does not fit the channel's fields. */
static void test_answer_clamped(void)
{
	struct control_page c = fresh();
	struct channel_answer a = { 0 };
	uint32_t gen = 0;

	CHECK_EQ(channel_post(&c, CHANNEL_FAST, 1, &gen), 0);
	channel_answer(&page.fast, gen, &(struct channel_reply){
		.state = 5, .err = 70000, .fd = -1, .bytes = 1ull << 33 });
	CHECK_EQ(channel_answered(&c, CHANNEL_FAST, gen, &a), 1);
	CHECK_EQ(a.err, 0xffffu);
	CHECK_EQ(a.bytes, 0u);
	CHECK_EQ(a.fd, -1);
}

/* The shim's text and the hook's live epoch go through their channels. */
static void test_shim_and_hook(void)
{
	struct control_page c = fresh();
	char big[FVBPF_PY_REQ_MAX + 1];
	uint32_t gen = 0, len = 0;

	CHECK_EQ(shim_channel_request(&c, "fastvideo\n", 10, &gen), 0);
	CHECK_EQ(channel_request(&page.py, &len), gen);
	CHECK_EQ(len, 10u);
	CHECK(!memcmp(page.py_req, "fastvideo\n", 10));
	memset(big, 'x', sizeof(big));
	CHECK_EQ(shim_channel_request(&c, big, sizeof(big), &gen), -E2BIG);
	CHECK_EQ(cuda_hook_channel_set_live(&c, 41), 0);
	CHECK_EQ(page.cuda.req, 41u);
	CHECK_EQ(cuda_hook_channel_request(&c, &(struct callback_tables){ 0 }, &gen), 0);
	CHECK_EQ(page.cuda.req, 0u); /* not live until fvbpf says so again */
	CHECK_EQ(page.cuda.asked, gen);
}

int main(void)
{
	RUN(test_round_trip);
	RUN(test_generation_skips);
	RUN(test_scribbled_page);
	RUN(test_answer_clamped);
	RUN(test_shim_and_hook);
	UNIT_DONE();
}
