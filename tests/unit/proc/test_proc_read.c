// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* /proc/PID/status read by proc_read_status(), on this very process. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "proc/proc_read.h"
#include "unit.h"

static void test_status_self(void)
{
	struct proc_status st;
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, &old);
	raise(SIGUSR2); /* held: pending while blocked */
	CHECK_EQ(proc_read_status(getpid(), 0, &st), 0);
	CHECK_EQ(st.state, 'R');
	CHECK_EQ(st.tracer, 0);
	CHECK(st.sig_blocked & (1ULL << (SIGUSR2 - 1)));
	CHECK(st.sig_pending & (1ULL << (SIGUSR2 - 1)));
	CHECK_EQ(proc_read_status(getpid(), gettid(), &st), 0);
	CHECK(st.sig_pending & (1ULL << (SIGUSR2 - 1)));
	signal(SIGUSR2, SIG_IGN); /* the pending one is dropped */
	sigprocmask(SIG_SETMASK, &old, NULL);
	CHECK_EQ(proc_read_status(getpid(), 0, &st), 0);
	CHECK(!(st.sig_pending & (1ULL << (SIGUSR2 - 1))));
	CHECK(!(st.sig_blocked & (1ULL << (SIGUSR2 - 1))));
}

static void test_status_gone(void)
{
	struct proc_status st;

	CHECK_EQ(proc_read_status(0x3fffffff, 0, &st), -ESRCH);
}

int main(void)
{
	RUN(test_status_self);
	RUN(test_status_gone);
	UNIT_DONE();
}
