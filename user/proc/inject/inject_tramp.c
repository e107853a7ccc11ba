// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The code `fvbpf attach --inject` runs in the target (see inject_tramp.h),
 * and the pure functions that lay it out and choose the registers the
 * thread goes back to.
 *
 * The code is assembled into fvbpf's read-only data and copied into the
 * target; it addresses its parameters and state relative to rip, so it
 * runs wherever the target's kernel placed the mapping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#include "proc/inject/inject_tramp.h"

#define STR_(x) #x
#define STR(x) STR_(x)
/* An operand at offset @off of the code page, rip-relative. */
#define AT(off) ".Ltramp+" STR(off) "(%rip)"

/* Byte offsets of struct tramp_regs for the assembler, which cannot use
 * offsetof: checked against the struct below. */
#define R_R15 0
#define R_R14 8
#define R_R13 16
#define R_R12 24
#define R_RBP 32
#define R_RBX 40
#define R_R11 48
#define R_R10 56
#define R_R9 64
#define R_R8 72
#define R_RAX 80
#define R_RCX 88
#define R_RDX 96
#define R_RSI 104
#define R_RDI 112
#define R_RIP 120
#define R_RFLAGS 128
#define R_RSP 136
#define RG(o) AT(TW_BACK + o)

_Static_assert(__builtin_offsetof(struct tramp_regs, rbx) == R_RBX, "tramp_regs layout");
_Static_assert(__builtin_offsetof(struct tramp_regs, rdi) == R_RDI, "tramp_regs layout");
_Static_assert(__builtin_offsetof(struct tramp_regs, rsp) == R_RSP, "tramp_regs layout");
_Static_assert(sizeof(struct tramp_regs) == R_RSP + 8, "tramp_regs layout");
_Static_assert(TP_REGS + sizeof(struct tramp_regs) <= TP_REGS_INTR, "tramp_regs overlaps");
_Static_assert(TP_REGS_INTR + sizeof(struct tramp_regs) <= TP_FN, "tramp_regs overlaps");
_Static_assert(TP_NAME + 16 <= TP_PATH, "the name overlaps the path");
_Static_assert(TW_BACK + sizeof(struct tramp_regs) <= TW_XSAVE, "tramp_regs overlaps");
_Static_assert(sizeof(struct tramp_regs) == 18 * 8, "rep movsq copies 18 words");
_Static_assert(TW_XSAVE % 64 == 0, "XSAVE needs 64-byte alignment");

#ifdef __x86_64__
/*
 * Syscall numbers are written out: the code runs in the target, whose
 * kernel is ours (x86-64 numbers never change).
 *   10 mprotect, 157 prctl, 14 rt_sigprocmask, 23 select, 127 rt_sigpending
 */
__asm__(
	"	.pushsection .rodata.fvbpf_inject_tramp,\"a\"\n"
	"	.balign 64\n"
	"	.globl inject_tramp_code, inject_tramp_wait, inject_tramp_end\n"
	"	.hidden inject_tramp_code, inject_tramp_wait, inject_tramp_end\n"
	"inject_tramp_code:\n"
	".Ltramp:\n"
	/* The page below the stack faults instead of being overwritten. */
	"	mov $10, %eax\n"
	"	mov " AT(TP_GUARD) ", %rdi\n"
	"	mov " AT(TP_GUARD_LEN) ", %rsi\n"
	"	xor %edx, %edx\n"
	"	syscall\n"
	/* Name the mapping in /proc/PID/maps: [anon:fvbpf-inject]. */
	"	mov $157, %eax\n"
	"	mov $0x53564d41, %edi\n"
	"	xor %esi, %esi\n"
	"	mov " AT(TP_REGION) ", %rdx\n"
	"	mov " AT(TP_REGION_LEN) ", %r10\n"
	"	lea " AT(TP_NAME) ", %r8\n"
	"	syscall\n"
	/* Block every signal: no handler of the job runs inside our dlopen,
	 * and what arrives is delivered where the thread was. */
	"	mov $14, %eax\n"
	"	mov $2, %edi\n"
	"	lea " AT(TP_BLOCK) ", %rsi\n"
	"	lea " AT(TW_OLDSET) ", %rdx\n"
	"	mov $8, %r10d\n"
	"	syscall\n"
	"	movq $1, " AT(TW_STATE) "\n"
	/* dlopen may use any vector register: keep them all. */
	"	cmpq $0, " AT(TP_XMODE) "\n"
	"	je 1f\n"
	"	mov " AT(TP_XMASK) ", %eax\n"
	"	mov " AT(TP_XMASK + 4) ", %edx\n"
	"	xsave64 " AT(TW_XSAVE) "\n"
	"	jmp 2f\n"
	"1:	fxsave64 " AT(TW_XSAVE) "\n"
	/* rsp is the stack's top, 16-aligned, as at a call. */
	"2:	lea " AT(TP_PATH) ", %rdi\n"
	"	mov " AT(TP_MODE) ", %esi\n"
	"	call *" AT(TP_FN) "\n"
	"	mov %rax, " AT(TW_HANDLE) "\n"
	"	cmpq $0, " AT(TP_XMODE) "\n"
	"	je 3f\n"
	"	mov " AT(TP_XMASK) ", %eax\n"
	"	mov " AT(TP_XMASK + 4) ", %edx\n"
	"	xrstor64 " AT(TW_XSAVE) "\n"
	"	jmp 4f\n"
	"3:	fxrstor64 " AT(TW_XSAVE) "\n"
	"4:	movq $2, " AT(TW_STATE) "\n"
	/* Wait for fvbpf to stop the thread and put it back through ptrace.
	 * select() because it leaves the thread's restart_block alone (a
	 * nanosleep the thread was in may need it). */
	"inject_tramp_wait:\n"
	"	mov " AT(TP_SPINS) ", %r12\n"
	"5:	test %r12, %r12\n"
	"	jz 6f\n"
	"	dec %r12\n"
	"	movq $0, " AT(TW_TV) "\n"
	"	movq $1000, " AT(TW_TV + 8) "\n"
	"	mov $23, %eax\n"
	"	xor %edi, %edi\n"
	"	xor %esi, %esi\n"
	"	xor %edx, %edx\n"
	"	xor %r10d, %r10d\n"
	"	lea " AT(TW_TV) ", %r8\n"
	"	syscall\n"
	"	jmp 5b\n"
	/* fvbpf is gone: back by ourselves, with the registers for a signal
	 * delivered there when one is pending (127: rt_sigpending). */
	"6:	movq $3, " AT(TW_STATE) "\n"
	"	mov $127, %eax\n"
	"	lea " AT(TW_PENDING) ", %rdi\n"
	"	mov $8, %esi\n"
	"	syscall\n"
	"	mov " AT(TW_OLDSET) ", %rcx\n"
	"	not %rcx\n"
	"	and " AT(TW_PENDING) ", %rcx\n"
	"	lea " AT(TP_REGS) ", %rsi\n"
	"	jz 7f\n"
	"	lea " AT(TP_REGS_INTR) ", %rsi\n"
	"7:	lea " AT(TW_BACK) ", %rdi\n"
	"	mov $18, %ecx\n"
	"	rep movsq\n"
	"	mov $14, %eax\n"
	"	mov $2, %edi\n"
	"	lea " AT(TW_OLDSET) ", %rsi\n"
	"	xor %edx, %edx\n"
	"	mov $8, %r10d\n"
	"	syscall\n"
	"	pushq " RG(R_RFLAGS) "\n"
	"	mov " RG(R_RAX) ", %rax\n"
	"	mov " RG(R_RBX) ", %rbx\n"
	"	mov " RG(R_RCX) ", %rcx\n"
	"	mov " RG(R_RDX) ", %rdx\n"
	"	mov " RG(R_RSI) ", %rsi\n"
	"	mov " RG(R_RDI) ", %rdi\n"
	"	mov " RG(R_RBP) ", %rbp\n"
	"	mov " RG(R_R8) ", %r8\n"
	"	mov " RG(R_R9) ", %r9\n"
	"	mov " RG(R_R10) ", %r10\n"
	"	mov " RG(R_R11) ", %r11\n"
	"	mov " RG(R_R12) ", %r12\n"
	"	mov " RG(R_R13) ", %r13\n"
	"	mov " RG(R_R14) ", %r14\n"
	"	mov " RG(R_R15) ", %r15\n"
	/* From here on nothing changes the flags. */
	"	popfq\n"
	"	mov " RG(R_RSP) ", %rsp\n"
	"	jmp *" RG(R_RIP) "\n"
	"inject_tramp_end:\n"
	/* An error ("moving .org backwards") if the code overlaps its
	 * parameters. */
	"	.org .Ltramp + " STR(TP_PARAMS) "\n"
	"	.popsection\n");
#else
const unsigned char inject_tramp_code[1], inject_tramp_wait[1], inject_tramp_end[1];
#endif

static uint64_t page_up(uint64_t n)
{
	return (n + INJECT_PAGE - 1) & ~(uint64_t)(INJECT_PAGE - 1);
}

int tramp_layout_for(uint32_t xsave_size, struct tramp_layout *lo)
{
	uint32_t xs = xsave_size ? xsave_size : 512;

	if (xs > INJECT_XSAVE_MAX)
		return -EINVAL;
	memset(lo, 0, sizeof(*lo));
	lo->xsave_size = xs;
	lo->len = INJECT_GUARD_SIZE + INJECT_STACK_SIZE + INJECT_PAGE +
		  page_up(TW_XSAVE - INJECT_PAGE + xs);
	return 0;
}

void tramp_layout_place(struct tramp_layout *lo, uint64_t base)
{
	lo->base = base;
	lo->guard = base;
	lo->code = base + INJECT_GUARD_SIZE + INJECT_STACK_SIZE;
	lo->stack_top = lo->code;
	lo->state = lo->code + INJECT_PAGE;
}

static void put64(unsigned char *page, unsigned int off, uint64_t v)
{
	memcpy(page + off, &v, sizeof(v));
}

static void regs_to_tramp(const struct user_regs_struct *r, struct tramp_regs *t)
{
	t->r15 = r->r15;
	t->r14 = r->r14;
	t->r13 = r->r13;
	t->r12 = r->r12;
	t->rbp = r->rbp;
	t->rbx = r->rbx;
	t->r11 = r->r11;
	t->r10 = r->r10;
	t->r9 = r->r9;
	t->r8 = r->r8;
	t->rax = r->rax;
	t->rcx = r->rcx;
	t->rdx = r->rdx;
	t->rsi = r->rsi;
	t->rdi = r->rdi;
	t->rip = r->rip;
	t->rflags = r->eflags;
	t->rsp = r->rsp;
}

/* Kernel signal bits: signal n is bit n - 1. */
#define SIGBIT(n) (1ULL << ((n) - 1))

uint64_t tramp_block_mask(void)
{
	/* SIGILL 4, SIGTRAP 5, SIGBUS 7, SIGFPE 8, SIGSEGV 11, SIGSYS 31;
	 * glibc's SIGCANCEL 32 and SIGSETXID 33. */
	return ~(SIGBIT(4) | SIGBIT(5) | SIGBIT(7) | SIGBIT(8) | SIGBIT(11) | SIGBIT(31) |
		 SIGBIT(32) | SIGBIT(33));
}

int tramp_page_build(unsigned char *page, const struct tramp_layout *lo,
		     const struct tramp_params *p, const struct user_regs_struct *saved,
		     const uint8_t insn[2])
{
	static const char name[16] = "fvbpf-inject";
	size_t code_len = (size_t)(inject_tramp_end - inject_tramp_code);
	size_t plen = strlen(p->path) + 1;
	struct user_regs_struct back;
	struct tramp_regs t;

	if (plen > TP_PATH_MAX)
		return -ENAMETOOLONG;
	if (code_len > TP_PARAMS)
		return -E2BIG;
	memset(page, 0, INJECT_PAGE);
	memcpy(page, inject_tramp_code, code_len);
	tramp_self_regs(saved, insn, &back);
	regs_to_tramp(&back, &t);
	memcpy(page + TP_REGS, &t, sizeof(t));
	tramp_self_regs_intr(saved, &back);
	regs_to_tramp(&back, &t);
	memcpy(page + TP_REGS_INTR, &t, sizeof(t));
	put64(page, TP_FN, p->fn);
	put64(page, TP_MODE, (uint64_t)(unsigned int)p->mode);
	put64(page, TP_GUARD, lo->guard);
	put64(page, TP_GUARD_LEN, INJECT_GUARD_SIZE);
	put64(page, TP_XMODE, p->xsave);
	put64(page, TP_XMASK, p->xmask);
	put64(page, TP_BLOCK, tramp_block_mask());
	put64(page, TP_REGION, lo->base);
	put64(page, TP_REGION_LEN, lo->len);
	put64(page, TP_SPINS, p->spins);
	memcpy(page + TP_NAME, name, sizeof(name));
	memcpy(page + TP_PATH, p->path, plen);
	return 0;
}

#define FLAG_TF (1ULL << 8)
#define FLAG_DF (1ULL << 10)

void tramp_start_regs(const struct user_regs_struct *saved, const struct tramp_layout *lo,
		      struct user_regs_struct *start)
{
	*start = *saved;
	start->rip = lo->code;
	start->rsp = lo->stack_top;
	start->rax = 0;
	/* Not in a syscall: no restart logic applies to the code. */
	start->orig_rax = (unsigned long long)-1;
	start->eflags &= ~(FLAG_DF | FLAG_TF);
}

static bool is_syscall_insn(const uint8_t insn[2])
{
	return insn[0] == 0x0f && insn[1] == 0x05;
}

bool tramp_eintr_by_stop(const struct user_regs_struct *saved, const uint8_t insn[2])
{
	long nr = (long)saved->orig_rax;

	if (nr < 0 || (long long)saved->rax != -EINTR || !is_syscall_insn(insn))
		return false;
	switch (nr) {
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
	case SYS_epoll_pwait2:
	case SYS_rt_sigtimedwait:
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_sendto:
	case SYS_sendmsg:
	case SYS_sendmmsg:
	case SYS_accept:
	case SYS_accept4:
	case SYS_io_getevents:
	case SYS_io_pgetevents:
	case SYS_io_uring_enter:
	/* on a socket with SO_RCVTIMEO or SO_SNDTIMEO */
	case SYS_read:
	case SYS_readv:
	case SYS_write:
	case SYS_writev:
		return true;
	default:
		return false;
	}
}

static void run_again(struct user_regs_struct *r, uint64_t nr)
{
	r->rax = nr;
	r->rip -= 2;
}

bool tramp_ptrace_regs(const struct user_regs_struct *saved, const uint8_t insn[2],
		       struct user_regs_struct *out)
{
	*out = *saved;
	if (!tramp_eintr_by_stop(saved, insn))
		return false;
	run_again(out, saved->orig_rax);
	return true;
}

/* The kernel's restart codes (include/linux/errno.h), not in uapi. */
#define K_ERESTARTSYS 512
#define K_ERESTARTNOINTR 513
#define K_ERESTARTNOHAND 514
#define K_ERESTART_RESTARTBLOCK 516

void tramp_self_regs(const struct user_regs_struct *saved, const uint8_t insn[2],
		     struct user_regs_struct *out)
{
	tramp_ptrace_regs(saved, insn, out);
	out->eflags &= ~FLAG_TF;
	if ((long)saved->orig_rax < 0)
		return;
	/* As arch_do_signal_or_restart() does when no handler runs. */
	switch (-(long long)saved->rax) {
	case K_ERESTARTSYS:
	case K_ERESTARTNOINTR:
	case K_ERESTARTNOHAND:
		run_again(out, saved->orig_rax);
		break;
	case K_ERESTART_RESTARTBLOCK:
		run_again(out, SYS_restart_syscall);
		break;
	default:
		break;
	}
}

void tramp_self_regs_intr(const struct user_regs_struct *saved, struct user_regs_struct *out)
{
	*out = *saved;
	out->eflags &= ~FLAG_TF;
	if ((long)saved->orig_rax < 0)
		return;
	switch (-(long long)saved->rax) {
	case K_ERESTARTSYS:
	case K_ERESTARTNOHAND:
	case K_ERESTART_RESTARTBLOCK:
		out->rax = (unsigned long long)-EINTR;
		break;
	case K_ERESTARTNOINTR:
		run_again(out, saved->orig_rax);
		break;
	default:
		break;
	}
}
