// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Hostile and fragile targets for `fvbpf attach --inject`, started WITHOUT
 * fvbpf (not linked with libfvbpf.so).  Like inject_target.c each prints
 * "pid=N" first, then only deterministic lines; each mode checks its own
 * behaviour and prints "... ok" or a line with "ERROR".  tests/bats/
 * inject_harm.bats drives them.
 *
 *   --mode small-stack      the main thread runs on an 8 KiB stack (a guard
 *                           page below) with about 3 KiB free, busy in
 *                           malloc/free; "tick N" every 10 ms for --count
 *   --mode seccomp-strict   SECCOMP_MODE_STRICT after "pid=", then ticks
 *                           paced by a calibrated spin (no clock is
 *                           allowed), written with write(), SYS_exit
 *   --mode seccomp-filter   an allow-list filter (anything else kills the
 *                           process), ticks with clock_nanosleep
 *   --mode libc-spin        the main thread nearly always inside libc
 *                           (a slow regexec); "usr1 N" when the Nth
 *                           SIGUSR1 was handled; SIGUSR2 ends it.  No
 *                           SIGTERM handler (default action)
 *   --mode siginfo          ticks; SA_SIGINFO handlers record SIGUSR1 and
 *                           SIGRTMIN+1..+4 (value, sender pid, code)
 *   --mode sigmask          SIGSEGV ignored, every signal blocked, waits on
 *                           a signalfd: "got usr1 N"; SIGUSR2 ends it
 *   --mode wait-CALL        the main thread blocks in CALL until a helper
 *                           (thread or child) makes it return once the
 *                           file --go exists; "CALL ok" when the call
 *                           returned its normal result, after the event
 *                           (it then waits for --go before it exits).
 *                           CALL: read recv recv-timeout accept poll select
 *                           epoll futex sigwaitinfo sigsuspend semop msgrcv
 *                           waitpid pause; nanosleep and clock-nanosleep
 *                           sleep --ms instead
 *   --mode exec-thread      a second thread execs this program in mode
 *                           exec-child once --go exists (the main thread
 *                           sleeps in 10 ms steps)
 *   --mode exec-child       "exec'd", then ticks as in tick mode
 *   --mode regs             the main thread spins with known values in
 *                           every general register, xmm/ymm/zmm and MXCSR
 *                           for --ms, checking them after each spin
 *   --send PID SIG VALUE COUNT [SIG VALUE COUNT]...
 *                           sigqueue() SIG (USR1, USR2 or RTMIN+K) COUNT
 *                           times with values VALUE, VALUE+1, ...; prints
 *                           "sender=PID" first
 *
 * The tick modes print "tick 0" .. "tick N-1" then "done ticks=N".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "workload.h"

static const char *mode = "tick";
static const char *go_path;
static long opt_count = 200, opt_ms = 2000;
static char self_exe[4096];



static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* ---- stdio-free output: for small stacks and seccomp ---- */

static size_t put_str(char *b, size_t at, const char *s)
{
	while (*s)
		b[at++] = *s++;
	return at;
}

static size_t put_long(char *b, size_t at, long v)
{
	char d[24];
	int n = 0;

	if (v < 0) {
		b[at++] = '-';
		v = -v;
	}
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		b[at++] = d[--n];
	return at;
}

/* write(1, PREFIX N SUFFIX): a few hundred bytes of stack at most. */
static void raw_line(const char *prefix, long n, const char *suffix)
{
	char b[128];
	size_t at = put_str(b, 0, prefix);

	if (n >= 0)
		at = put_long(b, at, n);
	at = put_str(b, at, suffix);
	b[at++] = '\n';
	if (write(1, b, at) != (ssize_t)at)
		return;
}

/* ---- the go file ---- */

static void wait_go(void)
{
	struct stat st;
	double until = wl_now_ms() + 300000;

	while (go_path && stat(go_path, &st) && wl_now_ms() < until)
		wl_sleep_ms(10);
}

/* ---- tick: the plain tick loop (siginfo, exec-child) ---- */

static int run_ticks(long count)
{
	struct timespec next;
	long i, errors = 0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0; i < count; i++) {
		say("tick %ld\n", i);
		next.tv_nsec += 10000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL)) == EINTR)
			;
		if (r) {
			say("tick ERROR clock_nanosleep: %s\n", strerror(r));
			errors++;
		}
	}
	say("done ticks=%ld\n", i);
	return errors != 0;
}

/* ---- small-stack ---- */

#define SMALL_STACK 8192
#define SMALL_FREE 3072
static ucontext_t main_uc, small_uc;
static uintptr_t small_lo;
static int small_errors;

static __attribute__((noinline)) void small_loop(void)
{
	volatile char here = 0;
	uintptr_t free_bytes = (uintptr_t)&here - small_lo;
	double next = wl_now_ms();
	volatile unsigned long sink = 0;
	unsigned long j = 0;
	long i;
	size_t sz = 16;

	if (free_bytes < 2048 || free_bytes > 4096) {
		raw_line("small-stack ERROR free bytes ", (long)free_bytes, "");
		small_errors++;
	}
	raw_line("small-stack running", -1, "");
	for (i = 0; i < opt_count; i++) {
		raw_line("tick ", i, "");
		next += 10;
		while (wl_now_ms() < next) {
			char *p = malloc(sz);

			if (!p) {
				raw_line("small-stack ERROR malloc", -1, "");
				small_errors++;
				break;
			}
			p[0] = (char)i;
			p[sz - 1] = (char)j;
			sink += (unsigned char)p[0];
			free(p);
			sz = sz >= 4096 ? 16 : sz * 2;
			for (j = 0; j < 2000; j++)
				sink += j * 7;
		}
	}
	raw_line("done ticks=", i, "");
	(void)here;
}

static void small_entry(void)
{
	volatile char here = 0;
	uintptr_t avail = (uintptr_t)&here - small_lo;
	volatile char *pad = NULL;

	/* Leave about SMALL_FREE bytes below small_loop()'s frame. */
	if (avail > SMALL_FREE + 512) {
		pad = __builtin_alloca(avail - SMALL_FREE - 256);
		pad[0] = 1;
	}
	small_loop();
	__asm__ volatile("" : : "r"(pad) : "memory");
	(void)here;
}

static int run_small_stack(void)
{
	char *m = mmap(NULL, SMALL_STACK + 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *warm;

	if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE)) {
		say("small-stack ERROR mmap: %s\n", strerror(errno));
		return 1;
	}
	/* On the big stack: malloc's first call (arena set-up), and the lazy
	 * binding of every libc function the loop calls (the resolver saves
	 * the whole extended FP state on the stack: 2-3 KiB with AVX-512). */
	warm = malloc(4096);
	free(warm);
	if (write(1, "", 0) < 0)
		return 1;
	wl_now_ms();
	small_lo = (uintptr_t)m + 4096;
	getcontext(&small_uc);
	small_uc.uc_stack.ss_sp = m + 4096;
	small_uc.uc_stack.ss_size = SMALL_STACK;
	small_uc.uc_link = &main_uc;
	makecontext(&small_uc, small_entry, 0);
	if (swapcontext(&main_uc, &small_uc)) {
		say("small-stack ERROR swapcontext\n");
		return 1;
	}
	if (!small_errors)
		say("small-stack ok\n");
	return small_errors != 0;
}

/* ---- seccomp ---- */

/* Spin @n rounds: the strict mode's only clock (it disables rdtsc). */
static __attribute__((noinline)) void spin(uint64_t n)
{
	volatile uint64_t i;

	for (i = 0; i < n; i++)
		;
}

static __attribute__((noreturn)) void run_seccomp_strict(void)
{
	uint64_t per10ms, rounds = 0;
	double m0, el;
	long i;

	/* Spin rounds per 10 ms, measured over 50 ms before the lock-down
	 * (SECCOMP_MODE_STRICT allows no clock: the vDSO may need a syscall,
	 * rdtsc faults). */
	m0 = wl_now_ms();
	while ((el = wl_now_ms() - m0) < 50) {
		spin(10000);
		rounds += 10000;
	}
	per10ms = (uint64_t)((double)rounds * 10 / el) + 1;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)) {
		say("seccomp ERROR strict: %s\n", strerror(errno));
		exit(1);
	}
	/* From here: read, write, exit, rt_sigreturn only. */
	raw_line("seccomp on", -1, "");
	for (i = 0; i < opt_count; i++) {
		raw_line("tick ", i, "");
		spin(per10ms);
	}
	raw_line("done ticks=", i, "");
	syscall(SYS_exit, 0);
	for (;;)
		;
}

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		  BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static int run_seccomp_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW(SYS_write),
		ALLOW(SYS_read),
		ALLOW(SYS_clock_nanosleep),
		ALLOW(SYS_nanosleep),
		ALLOW(SYS_clock_gettime),
		ALLOW(SYS_gettimeofday),
		ALLOW(SYS_restart_syscall),
		ALLOW(SYS_futex),
		ALLOW(SYS_rt_sigreturn),
		ALLOW(SYS_exit),
		ALLOW(SYS_exit_group),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct timespec next;
	long i;
	int r;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		say("seccomp ERROR filter: %s\n", strerror(errno));
		return 1;
	}
	raw_line("seccomp on", -1, "");
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0; i < opt_count; i++) {
		raw_line("tick ", i, "");
		next.tv_nsec += 10000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL)) == EINTR)
			;
		if (r)
			raw_line("tick ERROR clock_nanosleep ", r, "");
	}
	raw_line("done ticks=", i, "");
	_exit(0);
}

/* ---- libc-spin ---- */

static atomic_int usr1_count, usr2_stop;

static void on_usr1_count(int sig)
{
	(void)sig;
	atomic_fetch_add(&usr1_count, 1);
}

static void on_usr2_stop(int sig)
{
	(void)sig;
	atomic_store(&usr2_stop, 1);
}

static int run_libc_spin(void)
{
	struct sigaction sa = { .sa_handler = on_usr1_count, .sa_flags = SA_RESTART };
	char subject[128];
	regex_t re;
	int seen = 0, n;

	/* A backtracking match: about 50 ms per call, all of it in libc's
	 * regexec (and its malloc), the loop around it a few instructions. */
	memset(subject, 'a', 100);
	subject[100] = '\0';
	if (regcomp(&re, "^(a*)(a*)\\2\\1b$", REG_EXTENDED | REG_NOSUB))
		return say("libc-spin ERROR regcomp\n"), 1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2_stop;
	sigaction(SIGUSR2, &sa, NULL);
	say("spinning\n");
	while (!atomic_load(&usr2_stop)) {
		if (regexec(&re, subject, 0, NULL, 0) != REG_NOMATCH)
			return say("libc-spin ERROR regexec matched\n"), 1;
		n = atomic_load(&usr1_count);
		while (seen < n)
			say("usr1 %d\n", ++seen);
	}
	say("done sigusr1=%d\n", atomic_load(&usr1_count));
	regfree(&re);
	return 0;
}

/* ---- siginfo ---- */

#define RT_N 4
#define RT1_MAX 256
struct sig_rec {
	atomic_int count;
	atomic_int last_value;
	atomic_int pid;        /* the first sender's; -1 when they differ */
	atomic_int code;       /* the first code; INT32_MIN when they differ */
};
static struct sig_rec rec_usr1, rec_rt[RT_N + 1];
static int rt1_values[RT1_MAX];

static void record(struct sig_rec *r, const siginfo_t *si)
{
	int n = atomic_fetch_add(&r->count, 1), expect = 0;

	atomic_store(&r->last_value, si->si_value.sival_int);
	if (!n) {
		atomic_store(&r->pid, si->si_pid);
		atomic_store(&r->code, si->si_code);
		return;
	}
	expect = atomic_load(&r->pid);
	if (expect != si->si_pid)
		atomic_store(&r->pid, -1);
	expect = atomic_load(&r->code);
	if (expect != si->si_code)
		atomic_store(&r->code, INT32_MIN);
}

static void on_info(int sig, siginfo_t *si, void *uc)
{
	int k = sig - SIGRTMIN, n;

	(void)uc;
	if (sig == SIGUSR1) {
		record(&rec_usr1, si);
		return;
	}
	if (k < 1 || k > RT_N)
		return;
	if (k == 1) {
		n = atomic_load(&rec_rt[1].count);
		if (n < RT1_MAX)
			rt1_values[n] = si->si_value.sival_int;
	}
	record(&rec_rt[k], si);
}

static const char *code_name(int code)
{
	static char buf[32];

	switch (code) {
	case SI_QUEUE: return "queue";
	case SI_USER: return "user";
	case SI_TKILL: return "tkill";
	case SI_KERNEL: return "kernel";
	case INT32_MIN: return "mixed";
	default:
		snprintf(buf, sizeof(buf), "%d", code);
		return buf;
	}
}

static void print_rec(const char *name, struct sig_rec *r)
{
	int n = atomic_load(&r->count);

	if (!n) {
		say("%s count=0\n", name);
		return;
	}
	say("%s count=%d value=%d code=%s pid=%d\n", name, n, atomic_load(&r->last_value),
	    code_name(atomic_load(&r->code)), atomic_load(&r->pid));
}

static int run_siginfo(void)
{
	struct sigaction sa = { .sa_sigaction = on_info, .sa_flags = SA_SIGINFO | SA_RESTART };
	int k, n, i, inorder = 1, ret;
	char name[16];

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	for (k = 1; k <= RT_N; k++)
		sigaction(SIGRTMIN + k, &sa, NULL);
	ret = run_ticks(opt_count);
	print_rec("usr1", &rec_usr1);
	for (k = 1; k <= RT_N; k++) {
		snprintf(name, sizeof(name), "rt%d", k);
		print_rec(name, &rec_rt[k]);
	}
	/* SIGRTMIN+1's values, in the order sent: 0, 1, 2, ... */
	n = atomic_load(&rec_rt[1].count);
	for (i = 0; i < n && i < RT1_MAX; i++)
		if (rt1_values[i] != i)
			inorder = 0;
	say("rt1 values %s\n", inorder ? "in order" : "ERROR out of order or wrong");
	return ret;
}

/* ---- sigmask ---- */

static int run_sigmask(void)
{
	struct sigaction sa = { .sa_handler = SIG_IGN }, cur;
	sigset_t all, want, now;
	struct signalfd_siginfo si;
	struct pollfd p;
	int n = 0, r, sig, errors = 0, sfd;
	ssize_t got;

	sigaction(SIGSEGV, &sa, NULL);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	sigemptyset(&want);
	sigaddset(&want, SIGUSR1);
	sigaddset(&want, SIGUSR2);
	/* A signalfd: waiting on it leaves the mask as it is (sigtimedwait
	 * would unblock what it waits for while it waits). */
	sfd = signalfd(-1, &want, SFD_CLOEXEC);
	if (sfd < 0)
		return say("sigmask ERROR signalfd: %s\n", strerror(errno)), 1;
	p.fd = sfd;
	p.events = POLLIN;
	say("ready\n");
	for (;;) {
		r = poll(&p, 1, 100);
		if (r == 0 || (r < 0 && errno == EINTR))
			continue;
		got = r > 0 ? read(sfd, &si, sizeof(si)) : -1;
		if (got != (ssize_t)sizeof(si)) {
			say("sigmask ERROR poll %d read %zd: %s\n", r, got, strerror(errno));
			errors++;
			break;
		}
		if (si.ssi_signo == SIGUSR2)
			break;
		if (si.ssi_signo == SIGUSR1)
			say("got usr1 %d\n", ++n);
	}
	sigaction(SIGSEGV, NULL, &cur);
	if (cur.sa_handler != SIG_IGN) {
		say("sigmask ERROR SIGSEGV no longer ignored\n");
		errors++;
	}
	sigprocmask(SIG_BLOCK, NULL, &now);
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || (sig > 31 && sig < SIGRTMIN))
			continue;
		if (!sigismember(&now, sig)) {
			say("sigmask ERROR signal %d no longer blocked\n", sig);
			errors++;
		}
	}
	if (!errors)
		say("sigmask ok\n");
	say("done usr1=%d\n", n);
	return errors != 0;
}

/* ---- wait-CALL ---- */

static atomic_int triggered, handled;
static pid_t main_tid;
static int pfd[2], sv[2], lfd, ipc_id, child_pid;
static _Atomic uint32_t fword;
static struct sockaddr_un addr;
static socklen_t addr_len;

static void on_usr1_handled(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static void *trigger(void *arg)
{
	const char *call = arg;

	wait_go();
	atomic_store(&triggered, 1);
	if (!strcmp(call, "read") || !strcmp(call, "poll") || !strcmp(call, "select") ||
	    !strcmp(call, "epoll")) {
		if (write(pfd[1], "x", 1) != 1)
			say("trigger ERROR write: %s\n", strerror(errno));
	} else if (!strcmp(call, "recv") || !strcmp(call, "recv-timeout")) {
		if (send(sv[1], "x", 1, 0) != 1)
			say("trigger ERROR send: %s\n", strerror(errno));
	} else if (!strcmp(call, "accept")) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&addr, addr_len))
			say("trigger ERROR connect: %s\n", strerror(errno));
	} else if (!strcmp(call, "futex")) {
		atomic_store(&fword, 1);
		syscall(SYS_futex, &fword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	} else if (!strcmp(call, "sigwaitinfo") || !strcmp(call, "sigsuspend") ||
		   !strcmp(call, "pause")) {
		syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
	} else if (!strcmp(call, "semop")) {
		struct sembuf op = { 0, 1, 0 };

		if (semop(ipc_id, &op, 1))
			say("trigger ERROR semop: %s\n", strerror(errno));
	} else if (!strcmp(call, "msgrcv")) {
		struct { long type; char text[8]; } m = { 1, "x" };

		if (msgsnd(ipc_id, &m, 1, 0))
			say("trigger ERROR msgsnd: %s\n", strerror(errno));
	}
	return NULL;
}

/* The syscalls the main thread may block in for @call, as printed for
 * the test (/proc/PID/syscall's first field). */
static void print_waiting(const char *call)
{
	static const struct { const char *call; int n; long nr[3]; } t[] = {
		{ "read", 1, { SYS_read } },
		{ "recv", 1, { SYS_recvfrom } },
		{ "recv-timeout", 1, { SYS_recvfrom } },
		{ "accept", 2, { SYS_accept, SYS_accept4 } },
		{ "poll", 2, { SYS_poll, SYS_ppoll } },
		{ "select", 2, { SYS_select, SYS_pselect6 } },
		{ "epoll", 2, { SYS_epoll_wait, SYS_epoll_pwait } },
		{ "futex", 1, { SYS_futex } },
		{ "sigwaitinfo", 1, { SYS_rt_sigtimedwait } },
		{ "sigsuspend", 1, { SYS_rt_sigsuspend } },
		{ "semop", 2, { SYS_semop, SYS_semtimedop } },
		{ "msgrcv", 1, { SYS_msgrcv } },
		{ "nanosleep", 2, { SYS_nanosleep, SYS_clock_nanosleep } },
		{ "clock-nanosleep", 1, { SYS_clock_nanosleep } },
		{ "waitpid", 2, { SYS_wait4, SYS_waitid } },
		{ "pause", 3, { SYS_pause, SYS_ppoll, SYS_rt_sigsuspend } },
	};
	size_t i;
	int j;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(t[i].call, call))
			continue;
		printf("waiting %s nr=%d", call, SYS_restart_syscall);
		for (j = 0; j < t[i].n; j++)
			printf(",%ld", t[i].nr[j]);
		say("\n");
		return;
	}
	say("waiting ERROR unknown call %s\n", call);
}

/* The call's own verdict: 1 when it returned its normal result. */
static int run_wait(const char *call)
{
	struct sigaction sa = { .sa_handler = on_usr1_handled };
	sigset_t usr1, empty;
	pthread_t th;
	double t0, el;
	long r = -2;
	int err = 0, ok = 0, sleeps;
	char detail[160] = "";

	main_tid = (pid_t)syscall(SYS_gettid);
	sleeps = !strcmp(call, "nanosleep") || !strcmp(call, "clock-nanosleep");
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigemptyset(&empty);
	sigaction(SIGUSR1, &sa, NULL);
	/* SIGUSR1 blocked in the helper thread (it inherits the mask). */
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	if (pipe2(pfd, O_CLOEXEC) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return say("%s ERROR set-up: %s\n", call, strerror(errno)), 1;
	if (!strcmp(call, "recv-timeout")) {
		struct timeval tv = { 30, 0 };

		setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	} else if (!strcmp(call, "accept")) {
		addr.sun_family = AF_UNIX;
		snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "fvbpf-victim-%d", getpid());
		addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				       strlen(addr.sun_path + 1));
		lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, addr_len) || listen(lfd, 4))
			return say("%s ERROR set-up: %s\n", call, strerror(errno)), 1;
	} else if (!strcmp(call, "semop")) {
		ipc_id = semget(IPC_PRIVATE, 1, 0600);
		if (ipc_id < 0)
			return say("%s ERROR semget: %s\n", call, strerror(errno)), 1;
		say("ipc sem %d\n", ipc_id);
	} else if (!strcmp(call, "msgrcv")) {
		ipc_id = msgget(IPC_PRIVATE, 0600);
		if (ipc_id < 0)
			return say("%s ERROR msgget: %s\n", call, strerror(errno)), 1;
		say("ipc msg %d\n", ipc_id);
	} else if (!strcmp(call, "waitpid")) {
		child_pid = fork();
		if (child_pid < 0)
			return say("%s ERROR fork: %s\n", call, strerror(errno)), 1;
		if (!child_pid) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			wait_go();
			_exit(7);
		}
	}
	if (!sleeps && strcmp(call, "waitpid"))
		pthread_create(&th, NULL, trigger, (void *)call);
	if (!strcmp(call, "pause"))
		sigprocmask(SIG_UNBLOCK, &usr1, NULL);
	print_waiting(call);
	t0 = wl_now_ms();
	errno = 0;
	if (!strcmp(call, "read")) {
		char c = 0;

		r = read(pfd[0], &c, 1);
		ok = r == 1 && c == 'x';
	} else if (!strcmp(call, "recv") || !strcmp(call, "recv-timeout")) {
		char c = 0;

		r = recv(sv[0], &c, 1, 0);
		ok = r == 1 && c == 'x';
	} else if (!strcmp(call, "accept")) {
		r = accept(lfd, NULL, NULL);
		ok = r >= 0;
	} else if (!strcmp(call, "poll")) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };

		r = poll(&p, 1, -1);
		ok = r == 1 && (p.revents & POLLIN);
	} else if (!strcmp(call, "select")) {
		fd_set rf;

		FD_ZERO(&rf);
		FD_SET(pfd[0], &rf);
		r = select(pfd[0] + 1, &rf, NULL, NULL, NULL);
		ok = r == 1 && FD_ISSET(pfd[0], &rf);
	} else if (!strcmp(call, "epoll")) {
		struct epoll_event ev = { .events = EPOLLIN }, got;
		int ep = epoll_create1(EPOLL_CLOEXEC);

		epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev);
		r = epoll_wait(ep, &got, 1, -1);
		ok = r == 1;
	} else if (!strcmp(call, "futex")) {
		r = syscall(SYS_futex, &fword, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		ok = r == 0 && atomic_load(&fword) == 1;
	} else if (!strcmp(call, "sigwaitinfo")) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		r = sigwaitinfo(&usr1, &si);
		ok = r == SIGUSR1 && si.si_pid == getpid();
		snprintf(detail, sizeof(detail), " si_code=%d si_pid=%d", si.si_code, si.si_pid);
	} else if (!strcmp(call, "sigsuspend")) {
		r = sigsuspend(&empty);
		ok = r == -1 && errno == EINTR && atomic_load(&handled) == 1;
	} else if (!strcmp(call, "semop")) {
		struct sembuf op = { 0, -1, 0 };

		r = semop(ipc_id, &op, 1);
		ok = r == 0;
	} else if (!strcmp(call, "msgrcv")) {
		struct { long type; char text[8]; } m = { 0, "" };

		r = msgrcv(ipc_id, &m, sizeof(m.text), 0, 0);
		ok = r == 1 && m.type == 1 && m.text[0] == 'x';
	} else if (!strcmp(call, "nanosleep")) {
		struct timespec ts = { opt_ms / 1000, (opt_ms % 1000) * 1000000L };

		r = nanosleep(&ts, NULL);
		ok = r == 0;
	} else if (!strcmp(call, "clock-nanosleep")) {
		struct timespec ts = { opt_ms / 1000, (opt_ms % 1000) * 1000000L };

		r = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		ok = r == 0;
		if (r)
			errno = (int)r;
	} else if (!strcmp(call, "waitpid")) {
		int st = 0;

		r = waitpid(child_pid, &st, 0);
		ok = r == child_pid && WIFEXITED(st) && WEXITSTATUS(st) == 7;
		if (r == child_pid)
			snprintf(detail, sizeof(detail), " status=0x%x", st);
	} else if (!strcmp(call, "pause")) {
		r = pause();
		ok = r == -1 && errno == EINTR && atomic_load(&handled) == 1;
	} else {
		say("%s ERROR no such call\n", call);
		return 1;
	}
	err = errno;
	el = wl_now_ms() - t0;
	if (ok && sleeps && (el < (double)opt_ms - 1 || el > (double)opt_ms + 1500)) {
		ok = 0;
		snprintf(detail, sizeof(detail), " slept %.0f ms for %ld", el, opt_ms);
	}
	if (ok && !sleeps && !atomic_load(&triggered) && strcmp(call, "waitpid")) {
		ok = 0;
		snprintf(detail, sizeof(detail), " returned before the event");
	}
	if (!strcmp(call, "sigsuspend") || !strcmp(call, "pause"))
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail), " handled=%d",
			 atomic_load(&handled));
	if (ok)
		say("%s ok\n", call);
	else
		say("%s ERROR r=%ld errno=%s%s after %.0f ms\n", call, r, err ? strerror(err) : "0",
		    detail, el);
	/* Alive until the test lets go: an early return is reported, not an
	 * exit in the middle of the attach. */
	if (!sleeps)
		wait_go();
	if (!strcmp(call, "semop"))
		semctl(ipc_id, 0, IPC_RMID);
	else if (!strcmp(call, "msgrcv"))
		msgctl(ipc_id, IPC_RMID, NULL);
	say("done\n");
	return !ok;
}

/* ---- exec-thread ---- */

static void *exec_later(void *arg)
{
	char count[32];
	char *args[] = { self_exe, "--mode", "exec-child", "--count", count, NULL };

	(void)arg;
	snprintf(count, sizeof(count), "%ld", opt_count);
	wait_go();
	execv(self_exe, args);
	say("exec-thread ERROR execv %s: %s\n", self_exe, strerror(errno));
	exit(1);
}

static __attribute__((noreturn)) void run_exec_thread(void)
{
	pthread_t th;

	pthread_create(&th, NULL, exec_later, NULL);
	say("exec-thread ready\n");
	for (;;)
		wl_sleep_ms(10);
}

/* ---- regs ---- */

/*
 * reg_spin(iterations, level): load regs_expect into rax, rbx, rcx, rdx,
 * rsi, rdi, rbp, r8-r15, the vector registers (level 0: xmm0-15, 1:
 * ymm0-15, 2: zmm0-31) and MXCSR; spin (the counter in memory); store
 * them all in regs_seen; put MXCSR back.  A stop anywhere in the spin must
 * leave every one of them as it was.
 */
#define VEC_OFF 128
#define MXCSR_OFF 2176 /* VEC_OFF + 32 * 64, a literal for the assembler */
#define REGS_SIZE (MXCSR_OFF + 64)
_Static_assert(MXCSR_OFF == VEC_OFF + 32 * 64, "layout");
unsigned char regs_expect[REGS_SIZE] __attribute__((aligned(64)));
unsigned char regs_seen[REGS_SIZE] __attribute__((aligned(64)));
void reg_spin(uint64_t iterations, int level);

#define S(x) #x
#define XS(x) S(x)
#define GPR_LOAD(r, i) "mov regs_expect+" #i "*8(%rip), %" #r "\n"
#define GPR_STORE(r, i) "mov %" #r ", regs_seen+" #i "*8(%rip)\n"
#define V16(op, reg, table) \
	op " " table "+128+0*64(%rip), %" reg "0\n" op " " table "+128+1*64(%rip), %" reg "1\n" \
	op " " table "+128+2*64(%rip), %" reg "2\n" op " " table "+128+3*64(%rip), %" reg "3\n" \
	op " " table "+128+4*64(%rip), %" reg "4\n" op " " table "+128+5*64(%rip), %" reg "5\n" \
	op " " table "+128+6*64(%rip), %" reg "6\n" op " " table "+128+7*64(%rip), %" reg "7\n" \
	op " " table "+128+8*64(%rip), %" reg "8\n" op " " table "+128+9*64(%rip), %" reg "9\n" \
	op " " table "+128+10*64(%rip), %" reg "10\n" op " " table "+128+11*64(%rip), %" reg "11\n" \
	op " " table "+128+12*64(%rip), %" reg "12\n" op " " table "+128+13*64(%rip), %" reg "13\n" \
	op " " table "+128+14*64(%rip), %" reg "14\n" op " " table "+128+15*64(%rip), %" reg "15\n"
#define V16HI(op, reg, table) \
	op " " table "+128+16*64(%rip), %" reg "16\n" op " " table "+128+17*64(%rip), %" reg "17\n" \
	op " " table "+128+18*64(%rip), %" reg "18\n" op " " table "+128+19*64(%rip), %" reg "19\n" \
	op " " table "+128+20*64(%rip), %" reg "20\n" op " " table "+128+21*64(%rip), %" reg "21\n" \
	op " " table "+128+22*64(%rip), %" reg "22\n" op " " table "+128+23*64(%rip), %" reg "23\n" \
	op " " table "+128+24*64(%rip), %" reg "24\n" op " " table "+128+25*64(%rip), %" reg "25\n" \
	op " " table "+128+26*64(%rip), %" reg "26\n" op " " table "+128+27*64(%rip), %" reg "27\n" \
	op " " table "+128+28*64(%rip), %" reg "28\n" op " " table "+128+29*64(%rip), %" reg "29\n" \
	op " " table "+128+30*64(%rip), %" reg "30\n" op " " table "+128+31*64(%rip), %" reg "31\n"
/* stores: register first */
#define VS(op, reg, i) op " %" reg #i ", regs_seen+128+" #i "*64(%rip)\n"
#define VS16(op, reg) \
	VS(op, reg, 0) VS(op, reg, 1) VS(op, reg, 2) VS(op, reg, 3) VS(op, reg, 4) VS(op, reg, 5) \
	VS(op, reg, 6) VS(op, reg, 7) VS(op, reg, 8) VS(op, reg, 9) VS(op, reg, 10) \
	VS(op, reg, 11) VS(op, reg, 12) VS(op, reg, 13) VS(op, reg, 14) VS(op, reg, 15)
#define VS16HI(op, reg) \
	VS(op, reg, 16) VS(op, reg, 17) VS(op, reg, 18) VS(op, reg, 19) VS(op, reg, 20) \
	VS(op, reg, 21) VS(op, reg, 22) VS(op, reg, 23) VS(op, reg, 24) VS(op, reg, 25) \
	VS(op, reg, 26) VS(op, reg, 27) VS(op, reg, 28) VS(op, reg, 29) VS(op, reg, 30) \
	VS(op, reg, 31)

__asm__(
	".text\n"
	".globl reg_spin\n"
	".type reg_spin, @function\n"
	"reg_spin:\n"
	"push %rbx\n push %rbp\n push %r12\n push %r13\n push %r14\n push %r15\n"
	"sub $24, %rsp\n"
	"mov %rdi, 0(%rsp)\n"
	"mov %esi, 12(%rsp)\n"
	"stmxcsr 8(%rsp)\n"
	"ldmxcsr regs_expect+" XS(MXCSR_OFF) "(%rip)\n"
	"cmpl $2, 12(%rsp)\n je 2f\n"
	"cmpl $1, 12(%rsp)\n je 1f\n"
	V16("movdqu", "xmm", "regs_expect")
	"jmp 3f\n"
	"1:\n"
	V16("vmovdqu", "ymm", "regs_expect")
	"jmp 3f\n"
	"2:\n"
	V16("vmovdqu64", "zmm", "regs_expect")
	V16HI("vmovdqu64", "zmm", "regs_expect")
	"3:\n"
	GPR_LOAD(rax, 0) GPR_LOAD(rbx, 1) GPR_LOAD(rcx, 2) GPR_LOAD(rdx, 3) GPR_LOAD(rsi, 4)
	GPR_LOAD(rdi, 5) GPR_LOAD(rbp, 6) GPR_LOAD(r8, 7) GPR_LOAD(r9, 8) GPR_LOAD(r10, 9)
	GPR_LOAD(r11, 10) GPR_LOAD(r12, 11) GPR_LOAD(r13, 12) GPR_LOAD(r14, 13) GPR_LOAD(r15, 14)
	"4:\n"
	"decq 0(%rsp)\n"
	"jnz 4b\n"
	GPR_STORE(rax, 0) GPR_STORE(rbx, 1) GPR_STORE(rcx, 2) GPR_STORE(rdx, 3) GPR_STORE(rsi, 4)
	GPR_STORE(rdi, 5) GPR_STORE(rbp, 6) GPR_STORE(r8, 7) GPR_STORE(r9, 8) GPR_STORE(r10, 9)
	GPR_STORE(r11, 10) GPR_STORE(r12, 11) GPR_STORE(r13, 12) GPR_STORE(r14, 13) GPR_STORE(r15, 14)
	"stmxcsr regs_seen+" XS(MXCSR_OFF) "(%rip)\n"
	"ldmxcsr 8(%rsp)\n"
	"cmpl $2, 12(%rsp)\n je 6f\n"
	"cmpl $1, 12(%rsp)\n je 5f\n"
	VS16("movdqu", "xmm")
	"jmp 7f\n"
	"5:\n"
	VS16("vmovdqu", "ymm")
	"vzeroupper\n"
	"jmp 7f\n"
	"6:\n"
	VS16("vmovdqu64", "zmm")
	VS16HI("vmovdqu64", "zmm")
	"vzeroupper\n"
	"7:\n"
	"add $24, %rsp\n"
	"pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbp\n pop %rbx\n"
	"ret\n"
	".size reg_spin, .-reg_spin\n");

static int run_regs(void)
{
	static const char *const gpr[15] = { "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp",
					     "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
	int level = 0, nvec = 16, vbytes = 16, i, b, errors = 0, rounds = 0;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	uint32_t mxcsr = 0x1f80 | 0x8040 | 0x6000; /* masked, FTZ+DAZ, round to zero */
	double until;

	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		level = 2;
		nvec = 32;
		vbytes = 64;
	} else if (__builtin_cpu_supports("avx")) {
		level = 1;
		vbytes = 32;
	}
	for (i = 0; i < MXCSR_OFF; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		regs_expect[i] = (unsigned char)(x | 1);
	}
	memcpy(regs_expect + MXCSR_OFF, &mxcsr, 4);
	say("regs spinning level=%s\n", level == 2 ? "avx512" : level ? "avx" : "sse");
	until = wl_now_ms() + (double)opt_ms;
	while (wl_now_ms() < until && errors < 10) {
		memset(regs_seen, 0, sizeof(regs_seen));
		reg_spin(20000000, level);
		rounds++;
		for (i = 0; i < 15; i++)
			if (memcmp(regs_expect + 8 * i, regs_seen + 8 * i, 8)) {
				say("regs ERROR %s changed\n", gpr[i]);
				errors++;
			}
		for (i = 0; i < nvec; i++)
			for (b = 0; b < vbytes; b += 16)
				if (memcmp(regs_expect + VEC_OFF + 64 * i + b, regs_seen + VEC_OFF + 64 * i + b,
					   16)) {
					say("regs ERROR %cmm%d bytes %d-%d changed\n",
					    level == 2 ? 'z' : level ? 'y' : 'x', i, b, b + 15);
					errors++;
				}
		if (memcmp(regs_expect + MXCSR_OFF, regs_seen + MXCSR_OFF, 4)) {
			uint32_t seen;

			memcpy(&seen, regs_seen + MXCSR_OFF, 4);
			say("regs ERROR mxcsr 0x%x, was 0x%x\n", seen, mxcsr);
			errors++;
		}
	}
	if (!errors)
		say("regs ok\n");
	say("done\n");
	(void)rounds;
	return errors != 0;
}

/* ---- --send ---- */

static int sig_by_name(const char *s)
{
	if (!strcmp(s, "USR1"))
		return SIGUSR1;
	if (!strcmp(s, "USR2"))
		return SIGUSR2;
	if (!strncmp(s, "RTMIN+", 6))
		return SIGRTMIN + atoi(s + 6);
	return -1;
}

static int run_send(int argc, char **argv)
{
	pid_t pid;
	int i, sig, errors = 0;
	long v, n, k;

	if (argc < 5)
		return 2;
	pid = (pid_t)atoi(argv[2]);
	say("sender=%d\n", getpid());
	for (i = 3; i + 2 < argc; i += 3) {
		sig = sig_by_name(argv[i]);
		v = atol(argv[i + 1]);
		n = atol(argv[i + 2]);
		if (sig < 0)
			return say("send ERROR signal %s\n", argv[i]), 2;
		for (k = 0; k < n; k++) {
			union sigval sv = { .sival_int = (int)(v + k) };

			if (sigqueue(pid, sig, sv)) {
				say("send ERROR sigqueue %s %ld: %s\n", argv[i], v + k, strerror(errno));
				errors++;
			}
		}
	}
	say("sent\n");
	return errors != 0;
}

int main(int argc, char **argv)
{
	ssize_t n;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--send"))
		return run_send(argc, argv);
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--mode"))
			mode = argv[i + 1];
		else if (!strcmp(argv[i], "--count"))
			opt_count = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--ms"))
			opt_ms = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--go"))
			go_path = argv[i + 1];
	}
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	self_exe[n > 0 ? n : 0] = '\0';
	if (!strcmp(mode, "exec-child"))
		say("exec'd\n");
	say("pid=%d\n", getpid());
	if (!strcmp(mode, "tick") || !strcmp(mode, "exec-child"))
		return run_ticks(opt_count);
	if (!strcmp(mode, "small-stack"))
		return run_small_stack();
	if (!strcmp(mode, "seccomp-strict"))
		run_seccomp_strict();
	if (!strcmp(mode, "seccomp-filter"))
		return run_seccomp_filter();
	if (!strcmp(mode, "libc-spin"))
		return run_libc_spin();
	if (!strcmp(mode, "siginfo"))
		return run_siginfo();
	if (!strcmp(mode, "sigmask"))
		return run_sigmask();
	if (!strcmp(mode, "exec-thread"))
		run_exec_thread();
	if (!strcmp(mode, "regs"))
		return run_regs();
	if (!strncmp(mode, "wait-", 5))
		return run_wait(mode + 5);
	say("ERROR unknown mode %s\n", mode);
	return 2;
}
