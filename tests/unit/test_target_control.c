// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Probe-site placement and the probe-text check/repair, on this process. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "target_control.h"
#include "uprobe_multi.h"
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

int main(void)
{
	RUN(test_site_skips_nop5);
	RUN(test_site_bounded);
	RUN(test_text_check_and_repair);
	UNIT_DONE();
}
