// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Python multiprocessing's processes told by their command line. */
#include <string.h>
#include <unistd.h>

#include "proc/proc_mp.h"
#include "unit.h"

static void test_kinds(void)
{
	/* as CPython 3.11's spawn and forkserver start them, joined by spaces */
	CHECK_EQ(proc_mp_kind_of("/usr/bin/python3 -c from multiprocessing.spawn import spawn_main; "
				 "spawn_main(tracker_fd=5, pipe_handle=7) --multiprocessing-fork"),
		 PROC_MP_SPAWNED);
	CHECK_EQ(proc_mp_kind_of("/v/bin/python3 -s -B -c from multiprocessing.spawn import "
				 "spawn_main; spawn_main(tracker_fd=5, pipe_handle=9) --multiprocessing-fork"),
		 PROC_MP_SPAWNED);
	CHECK_EQ(proc_mp_kind_of("/usr/bin/python3 -c from multiprocessing.forkserver import main; "
				 "main(6, 7, ['__main__'], **{'sys_path': ['/x']})"),
		 PROC_MP_FORKSERVER);
	/* the resource tracker, a trainer, and look-alikes */
	CHECK_EQ(proc_mp_kind_of("/usr/bin/python3 -c from multiprocessing.resource_tracker import "
				 "main;main(5)"), PROC_MP_NONE);
	CHECK_EQ(proc_mp_kind_of("python3 train.py --multiprocessing-fork"), PROC_MP_NONE);
	CHECK_EQ(proc_mp_kind_of("python3 -c from multiprocessing.spawn import spawn_main; spawn_main() "
				 "--multiprocessing-fork x"), PROC_MP_NONE);
	CHECK_EQ(proc_mp_kind_of("multiprocessing.forkserver import main"), PROC_MP_NONE);
	CHECK_EQ(proc_mp_kind_of(""), PROC_MP_NONE);
	/* this process (the test) is neither; a PID that is gone is neither */
	CHECK_EQ(proc_mp_kind(getpid()), PROC_MP_NONE);
	CHECK_EQ(proc_mp_kind(0x7ffffff0), PROC_MP_NONE);
}

int main(void)
{
	RUN(test_kinds);
	UNIT_DONE();
}
