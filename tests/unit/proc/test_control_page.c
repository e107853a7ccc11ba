// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Probe-site placement and the probe-text check/repair, on this process. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/proc_info.h"
#include "proc/control/control_page.h"
#include "proc/elf/uprobe_site.h"
#include "unit.h"

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static int temp_file(const uint8_t *bytes, size_t len)
{
	char path[] = "/tmp/fvbpf-unit-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	unlink(path);
	if (write(fd, bytes, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return fd;
}

static void test_site_skips_nop5(void)
{
	uint8_t code[32] = { 0 };
	int fd;

	memcpy(code, nop5, 5);
	memcpy(code + 5, nop5, 5);
	code[10] = 0x55; /* push %rbp */
	code[16] = 0x55;
	memcpy(code + 27, nop5, 5); /* at the very end of the file */
	fd = temp_file(code, sizeof(code));
	CHECK(fd >= 0);
	CHECK_EQ(uprobe_site_offset(fd, 0), 10);
	CHECK_EQ(uprobe_site_offset(fd, 16), 16);
	CHECK_EQ(uprobe_site_offset(fd, 27), 32);  /* past it; nothing follows */
	CHECK_EQ(uprobe_site_offset(fd, 30), 30);  /* a short read is not a NOP */
	CHECK_EQ(uprobe_site_offset(fd, 1000), 1000);
	close(fd);
}

static void test_site_bounded(void)
{
	uint8_t code[60];
	int i, fd;

	for (i = 0; i < 12; i++)
		memcpy(code + 5 * i, nop5, 5);
	fd = temp_file(code, sizeof(code));
	CHECK(fd >= 0);
	/* a run of NOPs is followed a few steps only */
	CHECK_EQ(uprobe_site_offset(fd, 0), 20);
	close(fd);
}

static void test_text_check_and_repair(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	const uint8_t stale[5] = { 0xe8, 0x11, 0x22, 0x33, 0x44 }; /* call rel32 */

	CHECK(p != MAP_FAILED);
	memcpy(p, nop5, 5);
	CHECK_EQ(text_check_bytes(getpid(), (uintptr_t)p, nop5, 5, false), 0);
	memcpy(p, stale, 5);
	CHECK_EQ(text_check_bytes(getpid(), (uintptr_t)p, nop5, 5, false), 1);
	CHECK(!memcmp(p, stale, 5));
	/* read-only, as text is: the repair writes through /proc/PID/mem */
	CHECK(!mprotect(p, (size_t)page, PROT_READ));
	CHECK_EQ(text_check_bytes(getpid(), (uintptr_t)p, nop5, 5, true), 1);
	CHECK(!memcmp(p, nop5, 5));
	CHECK_EQ(text_check_bytes(getpid(), (uintptr_t)p, nop5, 5, true), 0);
	CHECK_EQ(text_check_bytes(getpid(), (uintptr_t)p, nop5, 17, false), -EINVAL);
	munmap(p, (size_t)page);
	/* unmapped memory is an error, not a difference */
	CHECK(text_check_bytes(getpid(), (uintptr_t)p, nop5, 5, false) < 0);
}

/* A comm with ')', a newline and a fake state cannot mislead the parser. */
static void test_stat_hostile_comm(void)
{
	unsigned long long start = 0, own = 0;
	int go[2], st;
	char state = 0, c;
	pid_t p;

	CHECK(!pipe(go));
	p = fork();
	if (p == 0) {
		prctl(PR_SET_NAME, "x) Z 1\n) X 9", 0, 0, 0);
		close(go[0]);
		if (write(go[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(go[1]);
	CHECK(read(go[0], &c, 1) == 1);
	CHECK_EQ(proc_read_stat(p, &state, &start), 0);
	CHECK(state == 'S' || state == 'R');
	CHECK_EQ(proc_read_stat(getpid(), NULL, &own), 0);
	CHECK(start >= own && start > 0);
	CHECK(proc_alive(p));
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	CHECK(!proc_alive(p));
	close(go[0]);
}

int main(void)
{
	RUN(test_stat_hostile_comm);
	RUN(test_site_skips_nop5);
	RUN(test_site_bounded);
	RUN(test_text_check_and_repair);
	UNIT_DONE();
}
