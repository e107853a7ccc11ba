// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The pure parts of `fvbpf attach --inject` (user/inject*.c): the mapping's
 * layout, the code page, the registers the thread starts and ends with
 * (every restart code), the copy's name; the code itself run in this
 * process; and the resolution of dlopen against the real libc this test
 * runs on, checked against the address the dynamic loader gives.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include "proc/elf/elf_file.h"
#include "proc/inject/inject.h"
#include "proc/inject/inject_copy.h"
#include "proc/inject/inject_tramp.h"
#include "proc/proc_maps.h"
#include "unit.h"

static void fill_regs(struct user_regs_struct *r, uint64_t rsp)
{
	memset(r, 0xa5, sizeof(*r));
	r->rsp = rsp;
	r->orig_rax = 35;                 /* blocked in nanosleep */
	r->rax = (unsigned long long)-516; /* -ERESTART_RESTARTBLOCK */
	r->eflags = 0x246 | (1u << 10) | (1u << 8);
}

static void test_layout(void)
{
	struct tramp_layout lo;
	uint32_t xs;

	for (xs = 0; xs <= INJECT_XSAVE_MAX; xs += 1000) {
		CHECK_EQ(tramp_layout_for(xs, &lo), 0);
		tramp_layout_place(&lo, 0x7f1234560000ULL);
		CHECK_EQ(lo.base, 0x7f1234560000ULL);
		CHECK_EQ(lo.len % INJECT_PAGE, 0);
		CHECK_EQ(lo.guard, lo.base);
		CHECK_EQ(lo.stack_top - lo.guard, INJECT_GUARD_SIZE + INJECT_STACK_SIZE);
		CHECK_EQ(lo.stack_top % 16, 0);
		CHECK_EQ(lo.code, lo.stack_top);
		CHECK_EQ(lo.state, lo.code + INJECT_PAGE);
		/* the XSAVE area fits in the mapping */
		CHECK(lo.code + TW_XSAVE + (xs ? xs : 512) <= lo.base + lo.len);
	}
	CHECK_EQ(tramp_layout_for(INJECT_XSAVE_MAX + 1, &lo), -EINVAL);
}

static void test_page_build(void)
{
	static unsigned char page[INJECT_PAGE];
	struct tramp_params p = { .fn = 0x7f0000001000ULL, .mode = 2, .xsave = true,
				  .xmask = 0xff, .spins = 7, .path = "/dev/shm/x.so" };
	static const uint8_t sys[2] = { 0x0f, 0x05 };
	struct user_regs_struct back;
	struct tramp_layout lo;
	struct tramp_regs t;
	size_t code_len = (size_t)(inject_tramp_end - inject_tramp_code);
	uint64_t v;
	char longp[TP_PATH_MAX + 1];

	CHECK(code_len > 64 && code_len <= TP_PARAMS);
	CHECK(&inject_tramp_wait[0] > &inject_tramp_code[0] && &inject_tramp_wait[0] < &inject_tramp_end[0]);
	tramp_layout_for(0, &lo);
	tramp_layout_place(&lo, 0x7f0000100000ULL);
	fill_regs(&back, 0x7ffc00000008ULL);
	back.rip = 0x401234;
	back.rbx = 11;
	back.r15 = 15;
	back.orig_rax = 0; /* in read, to be restarted (-ERESTARTSYS) */
	back.rax = (unsigned long long)-512;
	CHECK_EQ(tramp_page_build(page, &lo, &p, &back, sys), 0);
	CHECK(!memcmp(page, inject_tramp_code, code_len));
	/* alone and no signal pending: read runs again */
	memcpy(&t, page + TP_REGS, sizeof(t));
	CHECK_EQ(t.rip, 0x401232);
	CHECK_EQ(t.rax, 0);
	CHECK_EQ(t.rflags, back.eflags & ~(1ULL << 8));
	/* a signal pending: its handler runs first, read fails with EINTR */
	memcpy(&t, page + TP_REGS_INTR, sizeof(t));
	CHECK_EQ(t.rip, 0x401234);
	CHECK_EQ(t.rsp, 0x7ffc00000008ULL);
	CHECK_EQ(t.rbx, 11);
	CHECK_EQ(t.r15, 15);
	memcpy(&v, page + TP_FN, 8);
	CHECK_EQ(v, 0x7f0000001000ULL);
	memcpy(&v, page + TP_GUARD, 8);
	CHECK_EQ(v, lo.guard);
	memcpy(&v, page + TP_BLOCK, 8);
	CHECK_EQ(v, (long long)tramp_block_mask());
	/* glibc's own SIGCANCEL/SIGSETXID and the faults stay deliverable */
	CHECK(!(v & (1ULL << 31)) && !(v & (1ULL << 32)) && !(v & (1ULL << 10)));
	CHECK(v & (1ULL << 9)); /* SIGUSR1 is held */
	memcpy(&v, page + TP_SPINS, 8);
	CHECK_EQ(v, 7);
	CHECK_STR((const char *)page + TP_PATH, "/dev/shm/x.so");
	CHECK_STR((const char *)page + TP_NAME, "fvbpf-inject");
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	p.path = longp;
	CHECK_EQ(tramp_page_build(page, &lo, &p, &back, sys), -ENAMETOOLONG);
}

static void test_start_regs(void)
{
	struct user_regs_struct saved, start;
	struct tramp_layout lo;

	tramp_layout_for(2696, &lo);
	tramp_layout_place(&lo, 0x7f0000100000ULL);
	fill_regs(&saved, 0x7ffc12345003ULL);
	tramp_start_regs(&saved, &lo, &start);
	CHECK_EQ(start.rip, lo.code);
	CHECK_EQ(start.rsp, lo.stack_top);
	CHECK_EQ(start.rsp % 16, 0); /* as at a call: the code calls with it */
	CHECK_EQ((long long)start.orig_rax, -1);
	CHECK_EQ(start.eflags & ((1u << 10) | (1u << 8)), 0);
	CHECK_EQ(start.eflags & 0xff, saved.eflags & 0xff);
	CHECK_EQ(start.fs_base, saved.fs_base);
	CHECK_EQ(start.cs, saved.cs);
	/* the thread's own stack is never written: the saved set is untouched */
	CHECK_EQ(saved.rsp, 0x7ffc12345003ULL);
	CHECK_EQ((long long)saved.orig_rax, 35);
}

static void in_syscall(struct user_regs_struct *r, long nr, long ret)
{
	fill_regs(r, 0x7ffc12345000ULL);
	r->orig_rax = (unsigned long long)nr;
	r->rax = (unsigned long long)ret;
	r->rip = 0x7f0000002002ULL;
}

/* What the thread goes back to: through ptrace the kernel restarts its
 * own codes; alone, the code must do what the kernel would. */
static void test_resume_regs(void)
{
	static const uint8_t sys[2] = { 0x0f, 0x05 }, other[2] = { 0x90, 0x90 };
	static const long eintr_waits[] = { 232, 281, 441, 128, 65, 220, 45, 47, 299, 43, 288,
					    208, 333, 44, 46, 307 };
	struct user_regs_struct r, out;
	size_t i;

	/* the waits Linux fails with EINTR after any stop: run again */
	for (i = 0; i < sizeof(eintr_waits) / sizeof(eintr_waits[0]); i++) {
		in_syscall(&r, eintr_waits[i], -EINTR);
		CHECK(tramp_eintr_by_stop(&r, sys));
		CHECK(tramp_ptrace_regs(&r, sys, &out));
		CHECK_EQ(out.rax, eintr_waits[i]);
		CHECK_EQ(out.rip, 0x7f0000002000ULL);
		CHECK_EQ(out.orig_rax, eintr_waits[i]);
		tramp_self_regs(&r, sys, &out);
		CHECK_EQ(out.rax, eintr_waits[i]);
		CHECK_EQ(out.rip, 0x7f0000002000ULL);
	}
	/* EINTR from a call that may have done something (close, read): as is */
	in_syscall(&r, 3, -EINTR);
	CHECK(!tramp_ptrace_regs(&r, sys, &out));
	CHECK_EQ((long long)out.rax, -EINTR);
	/* not a syscall instruction before rip: untouched */
	in_syscall(&r, 232, -EINTR);
	CHECK(!tramp_ptrace_regs(&r, other, &out));
	CHECK_EQ(out.rip, 0x7f0000002002ULL);
	/* the kernel's restart codes: left to the kernel through ptrace ... */
	in_syscall(&r, 0, -512);
	CHECK(!tramp_ptrace_regs(&r, sys, &out));
	CHECK_EQ((long long)out.rax, -512);
	CHECK_EQ(out.rip, 0x7f0000002002ULL);
	CHECK_EQ(out.orig_rax, 0);
	/* ... and done by the code alone as the kernel would */
	for (i = 512; i <= 514; i++) {
		in_syscall(&r, 7, -(long)i);
		tramp_self_regs(&r, sys, &out);
		CHECK_EQ(out.rax, 7);
		CHECK_EQ(out.rip, 0x7f0000002000ULL);
		CHECK_EQ(out.eflags & (1u << 8), 0);
	}
	in_syscall(&r, 35, -516);
	tramp_self_regs(&r, sys, &out);
	CHECK_EQ(out.rax, 219); /* restart_syscall */
	CHECK_EQ(out.rip, 0x7f0000002000ULL);
	/* a result, or not in a syscall: as is */
	in_syscall(&r, 0, 5);
	tramp_self_regs(&r, sys, &out);
	CHECK_EQ(out.rax, 5);
	CHECK_EQ(out.rip, 0x7f0000002002ULL);
	in_syscall(&r, -1, -512);
	tramp_self_regs(&r, sys, &out);
	CHECK_EQ((long long)out.rax, -512);
	CHECK_EQ(out.rip, 0x7f0000002002ULL);
}

static void test_copy_owner(void)
{
	CHECK_EQ(lib_copy_owner(".fvbpf-inject-123-456-0123456789abcdef.so"), 456);
	CHECK_EQ(lib_copy_owner(".fvbpf-inject-123-0123456789abcdef.so"), 0); /* older form */
	CHECK_EQ(lib_copy_owner(".fvbpf-inject-123-456-0123456789abcdef.so.x"), 0);
	CHECK_EQ(lib_copy_owner(".fvbpf-inject--1-456-0123456789abcdef.so"), 0);
	CHECK_EQ(lib_copy_owner(".fvbpf-inject-1-0-0.so"), 0);
	CHECK_EQ(lib_copy_owner("libfvbpf.so"), 0);
	CHECK_EQ(lib_copy_owner(".fvbpf-inject-99999999999-1-1.so"), 0);
}

/*
 * The code itself, run in this process as fvbpf runs it in a target whose
 * fvbpf died: a signal handler sends the thread to it instead of back
 * (as PTRACE_SETREGS would), with a stand-in for dlopen.  The thread must
 * come back to where the signal found it, every register and the signal
 * mask as they were, having called the stand-in on our stack with every
 * signal blocked.
 */
static struct tramp_layout run_lo;
static unsigned char *run_map;
static volatile uint64_t fake_rsp, fake_mode;
static char fake_path[64];
static int fake_blocked_usr2, fake_raise_usr2;
static volatile sig_atomic_t usr2_seen;

static void on_usr2(int sig)
{
	(void)sig;
	usr2_seen++;
}

static void *fake_dlopen(const char *path, int mode)
{
	sigset_t cur;
	double d = 3.25;

	fake_rsp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
	fake_mode = (uint64_t)mode;
	snprintf(fake_path, sizeof(fake_path), "%s", path);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	fake_blocked_usr2 = sigismember(&cur, SIGUSR2);
	/* held while we run: delivered once the code has put the mask back */
	if (fake_raise_usr2)
		raise(SIGUSR2);
	/* clobber vector registers as a loader might */
	__asm__ volatile("movsd %0, %%xmm0\n\tmovsd %0, %%xmm7\n\tmovsd %0, %%xmm15" : : "m"(d)
			 : "xmm0", "xmm7", "xmm15");
	return (void *)0x1234;
}

static void send_to_code(int sig, siginfo_t *si, void *ucv)
{
	static unsigned char page[INJECT_PAGE];
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	struct user_regs_struct saved = { 0 };
	struct tramp_params p = { .fn = (uint64_t)(uintptr_t)fake_dlopen, .mode = 0x102,
				  .xsave = false, .spins = 3, .path = "/the/lib.so" };
	static const uint8_t none[2] = { 0, 0 };
	unsigned int a, b, c, d;
	uint32_t xs = 0;

	(void)sig;
	(void)si;
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27)) &&
	    __get_cpuid_count(0xd, 0, &a, &b, &c, &d)) {
		p.xsave = true;
		p.xmask = 0xff;
		xs = b;
	}
	saved.r8 = g[REG_R8]; saved.r9 = g[REG_R9]; saved.r10 = g[REG_R10];
	saved.r11 = g[REG_R11]; saved.r12 = g[REG_R12]; saved.r13 = g[REG_R13];
	saved.r14 = g[REG_R14]; saved.r15 = g[REG_R15]; saved.rdi = g[REG_RDI];
	saved.rsi = g[REG_RSI]; saved.rbp = g[REG_RBP]; saved.rbx = g[REG_RBX];
	saved.rdx = g[REG_RDX]; saved.rax = g[REG_RAX]; saved.rcx = g[REG_RCX];
	saved.rsp = g[REG_RSP]; saved.rip = g[REG_RIP]; saved.eflags = g[REG_EFL];
	saved.orig_rax = (unsigned long long)-1;
	tramp_layout_for(xs, &run_lo);
	run_map = mmap(NULL, run_lo.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (run_map == MAP_FAILED)
		return;
	tramp_layout_place(&run_lo, (uint64_t)(uintptr_t)run_map);
	if (tramp_page_build(page, &run_lo, &p, &saved, none))
		return;
	memcpy((void *)(uintptr_t)run_lo.code, page, sizeof(page));
	if (mprotect((void *)(uintptr_t)run_lo.code, INJECT_PAGE, PROT_READ | PROT_EXEC))
		return;
	g[REG_RIP] = (greg_t)run_lo.code;
	g[REG_RSP] = (greg_t)run_lo.stack_top;
}

static void test_code_runs_and_returns(void)
{
	struct sigaction sa = { .sa_sigaction = send_to_code, .sa_flags = SA_SIGINFO };
	sigset_t before, after;
	volatile double keep = 1.5;
	uint64_t state = 0, handle = 0;
	double got;

	sigemptyset(&before);
	sigemptyset(&after);
	sigaddset(&before, SIGUSR2);
	sigprocmask(SIG_UNBLOCK, &before, NULL);
	sigprocmask(SIG_SETMASK, NULL, &before);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	__asm__ volatile("movsd %0, %%xmm15" : : "m"(keep) : "xmm15");
	raise(SIGUSR1);
	__asm__ volatile("movsd %%xmm15, %0" : "=m"(got));
	/* back where the signal found us, with the mask and registers */
	CHECK(run_map && run_map != MAP_FAILED);
	sigprocmask(SIG_SETMASK, NULL, &after);
	CHECK(!memcmp(&before, &after, 8)); /* the kernel's sigset: 64 signals */
	CHECK(!sigismember(&after, SIGUSR2));
	CHECK(got == 1.5);
	CHECK_STR(fake_path, "/the/lib.so");
	CHECK_EQ(fake_mode, 0x102);
	CHECK(fake_blocked_usr2);
	/* on our stack, below its top */
	CHECK(fake_rsp < run_lo.stack_top && fake_rsp > run_lo.stack_top - INJECT_STACK_SIZE);
	memcpy(&state, (void *)(uintptr_t)(run_lo.code + TW_STATE), 8);
	memcpy(&handle, (void *)(uintptr_t)(run_lo.code + TW_HANDLE), 8);
	CHECK_EQ(state, TRAMP_LEAVING);
	CHECK_EQ(handle, 0x1234);
	signal(SIGUSR1, SIG_DFL);
	munmap(run_map, run_lo.len);
}

/* The same with a signal arriving during the call: held, then delivered
 * once (the code takes its pending-signal branch), and back as before. */
static void test_code_delivers_held_signal(void)
{
	struct sigaction sa = { .sa_sigaction = send_to_code, .sa_flags = SA_SIGINFO };
	volatile double keep = 2.5;
	uint64_t state = 0;
	double got;

	signal(SIGUSR2, on_usr2);
	usr2_seen = 0;
	fake_raise_usr2 = 1;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	__asm__ volatile("movsd %0, %%xmm14" : : "m"(keep) : "xmm14");
	raise(SIGUSR1);
	__asm__ volatile("movsd %%xmm14, %0" : "=m"(got));
	fake_raise_usr2 = 0;
	CHECK_EQ(usr2_seen, 1);
	CHECK(got == 2.5);
	memcpy(&state, (void *)(uintptr_t)(run_lo.code + TW_STATE), 8);
	CHECK_EQ(state, TRAMP_LEAVING);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
	munmap(run_map, run_lo.len);
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
	RUN(test_layout);
	RUN(test_page_build);
	RUN(test_start_regs);
	RUN(test_resume_regs);
	RUN(test_copy_owner);
	RUN(test_code_runs_and_returns);
	RUN(test_code_delivers_held_signal);
	RUN(test_dlopen_real_libc);
	RUN(test_no_dlopen);
	RUN(test_names);
	UNIT_DONE();
}
