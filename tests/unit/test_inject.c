// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The pure parts of `fvbpf attach --inject` (user/inject.c): the call's
 * register set-up and stack layout for every stack alignment and string
 * length, and the resolution of dlopen against the real libc this test
 * runs on, checked against the address the dynamic loader gives.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_file.h"
#include "inject.h"
#include "proc_maps.h"
#include "unit.h"

static void fill_regs(struct user_regs_struct *r, uint64_t rsp)
{
	memset(r, 0xa5, sizeof(*r));
	r->rsp = rsp;
	r->orig_rax = 35;                 /* blocked in nanosleep */
	r->rax = (unsigned long long)-516; /* -ERESTART_RESTARTBLOCK */
	r->eflags = 0x246 | (1u << 10) | (1u << 8);
}

static void test_frame_layout(void)
{
	struct user_regs_struct saved, call;
	struct inject_frame fr;
	uint64_t base = 0x7ffc12345000ULL, rsp;
	size_t len;
	int mis;

	for (mis = 0; mis < 16; mis++) {
		for (len = 1; len <= 300; len += 7) {
			rsp = base + (uint64_t)mis;
			fill_regs(&saved, rsp);
			CHECK_EQ(inject_frame_layout(&saved, 0x7f0000001000ULL, len, 2, &fr, &call), 0);
			/* below the red zone, nothing of it touched */
			CHECK(fr.str_addr + len <= rsp - INJECT_RED_ZONE);
			CHECK(fr.low >= rsp - INJECT_RED_ZONE - len - 32);
			/* 16-aligned at the call: rsp + 8 aligned at the first instruction */
			CHECK_EQ(call.rsp % 16, 8);
			CHECK_EQ(fr.str_addr % 16, 0);
			CHECK_EQ(fr.ret_addr, call.rsp);
			CHECK_EQ(fr.str_addr - fr.ret_addr, 8);
			CHECK_EQ(fr.low, fr.ret_addr);
			CHECK_EQ(call.rip, 0x7f0000001000ULL);
			CHECK_EQ(call.rdi, fr.str_addr);
			CHECK_EQ(call.rsi, 2);
			CHECK_EQ(call.rax, 0);
			CHECK_EQ((long long)call.orig_rax, -1);
			CHECK_EQ(call.eflags & ((1u << 10) | (1u << 8)), 0);
			CHECK_EQ(call.eflags & 0xff, saved.eflags & 0xff);
			/* the rest as it was (callee-saved, segment bases) */
			CHECK_EQ(call.rbx, saved.rbx);
			CHECK_EQ(call.rbp, saved.rbp);
			CHECK_EQ(call.r12, saved.r12);
			CHECK_EQ(call.r15, saved.r15);
			CHECK_EQ(call.fs_base, saved.fs_base);
			CHECK_EQ(call.cs, saved.cs);
			/* the saved set itself is untouched */
			CHECK_EQ((long long)saved.orig_rax, 35);
			CHECK_EQ(saved.rsp, rsp);
		}
	}
}

static void test_frame_refused(void)
{
	struct user_regs_struct saved, call;
	struct inject_frame fr;

	fill_regs(&saved, 100);
	CHECK_EQ(inject_frame_layout(&saved, 1, 10, 2, &fr, &call), -EINVAL);
	fill_regs(&saved, 0x7ffc12345000ULL);
	CHECK_EQ(inject_frame_layout(&saved, 1, 0, 2, &fr, &call), -EINVAL);
	CHECK_EQ(inject_frame_layout(&saved, 1, PATH_MAX + 1, 2, &fr, &call), -EINVAL);
}

/* epoll_wait failed with EINTR by our stop alone: executed again. */
static void test_restart_eintr(void)
{
	static const uint8_t sys[2] = { 0x0f, 0x05 }, other[2] = { 0x90, 0x90 };
	struct user_regs_struct r;

	fill_regs(&r, 0x7ffc12345000ULL);
	r.orig_rax = 232; /* epoll_wait */
	r.rax = (unsigned long long)-EINTR;
	r.rip = 0x7f0000002002ULL;
	CHECK_EQ(inject_restart_eintr(&r, sys), 1);
	CHECK_EQ(r.rax, 232);
	CHECK_EQ(r.rip, 0x7f0000002000ULL);
	CHECK_EQ(r.orig_rax, 232);
	/* epoll_pwait, epoll_pwait2 alike */
	r.orig_rax = 281;
	r.rax = (unsigned long long)-EINTR;
	CHECK_EQ(inject_restart_eintr(&r, sys), 1);
	r.orig_rax = 441;
	r.rax = (unsigned long long)-EINTR;
	CHECK_EQ(inject_restart_eintr(&r, sys), 1);
	/* not a syscall instruction before rip: untouched */
	r.rax = (unsigned long long)-EINTR;
	r.rip = 0x7f0000002002ULL;
	CHECK_EQ(inject_restart_eintr(&r, other), 0);
	CHECK_EQ((long long)r.rax, -EINTR);
	CHECK_EQ(r.rip, 0x7f0000002002ULL);
	/* another syscall, or another result: the kernel's own restart rules */
	r.orig_rax = 0; /* read */
	CHECK_EQ(inject_restart_eintr(&r, sys), 0);
	r.orig_rax = 232;
	r.rax = (unsigned long long)-512; /* -ERESTARTSYS: the kernel restarts it */
	CHECK_EQ(inject_restart_eintr(&r, sys), 0);
	CHECK_EQ(r.rip, 0x7f0000002002ULL);
}

struct find_libc {
	uint64_t off;
	uint64_t addr;
	char path[PATH_MAX];
};

static int libc_cb(const struct proc_map *m, void *arg)
{
	struct find_libc *c = arg;

	if (!inject_is_libc_path(m->path) || m->perms[2] != 'x' || c->off < m->pgoff ||
	    c->off >= m->pgoff + (m->end - m->start))
		return 0;
	c->addr = m->start + (c->off - m->pgoff);
	return 1;
}

/* dlopen in this process's own libc, resolved as inject.c does for a
 * target, lands exactly where the dynamic loader says dlopen is. */
static void test_dlopen_real_libc(void)
{
	struct find_libc c = { 0 };
	struct elf_file *ef;
	struct stat st;
	Dl_info di;
	/* libc's own dlopen (under ASan, RTLD_DEFAULT finds its interceptor) */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *real = libc ? dlsym(libc, "dlopen") : NULL;
	int fd;

	CHECK(real != NULL);
	CHECK(dladdr(real, &di) && di.dli_fname);
	if (!real || !di.dli_fname)
		return;
	CHECK(inject_is_libc_path(di.dli_fname));
	fd = open(di.dli_fname, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(!fstat(fd, &st));
	CHECK_EQ(elf_file_open_fd(fd, (uint64_t)st.st_size, &ef), 0);
	CHECK_EQ(inject_find_dlopen(ef, &c.off), INJECT_FN_DLOPEN);
	elf_file_close(ef);
	close(fd);
	CHECK(proc_maps_foreach(getpid(), libc_cb, &c) >= 0);
	CHECK_EQ(c.addr, (uint64_t)(uintptr_t)real);
	dlclose(libc);
}

/* A library with neither dlopen nor __libc_dlopen_mode: this test binary. */
static void test_no_dlopen(void)
{
	struct elf_file *ef;
	struct stat st;
	uint64_t off = 0;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(!fstat(fd, &st));
	CHECK_EQ(elf_file_open_fd(fd, (uint64_t)st.st_size, &ef), 0);
	CHECK_EQ(inject_find_dlopen(ef, &off), INJECT_FN_NONE);
	elf_file_close(ef);
	close(fd);
}

static void test_names(void)
{
	struct inject_info in = { 0 };
	char buf[64];

	CHECK(inject_is_libc_path("/lib/x86_64-linux-gnu/libc.so.6"));
	CHECK(inject_is_libc_path("/usr/lib64/libc-2.28.so"));
	CHECK(inject_is_libc_path("/lib64/libdl.so.2"));
	CHECK(!inject_is_libc_path("/usr/lib/libcrypto.so.3"));
	CHECK(!inject_is_libc_path("/opt/libc.so.6.evil/x.so"));
	CHECK_STR(inject_origin(&in, false), "none");
	CHECK_STR(inject_origin(&in, true), "loaded by the job");
	in.state = INJECT_INJECTED;
	CHECK_STR(inject_origin(&in, true), "injected");
	inject_wallclock(&in, buf, sizeof(buf));
	CHECK_STR(buf, "");
	in.wallclock_ns = 1700000000123456789ULL;
	inject_wallclock(&in, buf, sizeof(buf));
	CHECK_STR(buf, "2023-11-14T22:13:20.123456Z");
}

int main(void)
{
	RUN(test_frame_layout);
	RUN(test_frame_refused);
	RUN(test_restart_eintr);
	RUN(test_dlopen_real_libc);
	RUN(test_no_dlopen);
	RUN(test_names);
	UNIT_DONE();
}
