/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The code `fvbpf attach --inject` runs in the target: a page of x86-64
 * machine code that calls dlopen() on a stack of its own and then puts the
 * thread back exactly where it was, by itself.
 *
 * Nothing in it depends on fvbpf staying alive.  While fvbpf lives it
 * stops the thread at the end (the code waits for it a while) and restores
 * the registers and signal mask through ptrace, so the kernel's own syscall
 * restart and signal delivery apply; if fvbpf died, the code restores them
 * itself after the wait.
 *
 * The mapping fvbpf creates in the target, low to high:
 *
 *   guard page (made PROT_NONE by the code)   INJECT_GUARD_SIZE
 *   stack, grows down from the code page      INJECT_STACK_SIZE
 *   code page: code, then the parameters      4096, read and execute
 *   state pages: flags, saved FP/vector state read and write
 */
#ifndef FVBPF_INJECT_TRAMP_H
#define FVBPF_INJECT_TRAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#define INJECT_PAGE 4096u
#define INJECT_GUARD_SIZE INJECT_PAGE
#define INJECT_STACK_SIZE (256u << 10)
/* Largest XSAVE area taken (CPUID 0xD reports ~2.7 KiB without AMX,
 * ~11 KiB with it). */
#define INJECT_XSAVE_MAX (60u << 10)

/* Offsets in the code page.  Code first, parameters (read only for the
 * code) from TP_PARAMS. */
#define TP_PARAMS 0x800
#define TP_REGS 0x800           /* struct tramp_regs: where to go back to */
#define TP_REGS_INTR 0x890      /* the same when a signal is to be delivered there */
#define TP_FN 0x920             /* dlopen or __libc_dlopen_mode */
#define TP_MODE 0x928
#define TP_GUARD 0x930
#define TP_GUARD_LEN 0x938
#define TP_XMODE 0x940          /* 1: xsave64/xrstor64, 0: fxsave64/fxrstor64 */
#define TP_XMASK 0x948
#define TP_BLOCK 0x950          /* the signals blocked during the call (kernel sigset, 8) */
#define TP_REGION 0x958
#define TP_REGION_LEN 0x960
#define TP_SPINS 0x968          /* how many 1 ms waits for fvbpf at the end */
#define TP_NAME 0x970           /* the mapping's name, 16 bytes */
#define TP_PATH 0xa00           /* the library, NUL-terminated */
#define TP_PATH_MAX (INJECT_PAGE - TP_PATH)

/* Offsets of the state page, from the code page's start. */
#define TW_STATE 0x1000         /* enum tramp_state */
#define TW_HANDLE 0x1008        /* what dlopen returned */
#define TW_OLDSET 0x1010        /* the thread's signal mask, kept while all are blocked */
#define TW_TV 0x1018            /* select()'s timeval for the wait */
#define TW_PENDING 0x1028       /* rt_sigpending() before the code returns alone */
#define TW_BACK 0x1040          /* the registers it returns with (a struct tramp_regs) */
#define TW_XSAVE 0x1100         /* 64-byte aligned */

/* Where the registers to return to lie in TP_REGS, in this order. */
struct tramp_regs {
	uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8;
	uint64_t rax, rcx, rdx, rsi, rdi, rip, rflags, rsp;
};

enum tramp_state {
	TRAMP_LAUNCHED = 0,     /* not yet in dlopen (or not started) */
	TRAMP_IN_DLOPEN = 1,    /* signals blocked, in dlopen */
	TRAMP_WAITING = 2,      /* dlopen returned, FP state restored: waiting for fvbpf */
	TRAMP_LEAVING = 3,      /* fvbpf did not come: restoring the thread itself */
};

/* The code, a page's worth of bytes. */
extern const unsigned char inject_tramp_code[];
/* Offset in the code page of the first instruction of the wait loop and
 * of the end of the code: a thread stopped with rip in [wait, end) is in
 * the loop or past it, where fvbpf may restore it. */
extern const unsigned char inject_tramp_wait[], inject_tramp_end[];

struct tramp_layout {
	uint64_t base;          /* the mapping */
	uint64_t len;
	uint64_t guard;         /* == base */
	uint64_t stack_top;     /* 16-aligned; == code */
	uint64_t code;          /* the code page */
	uint64_t state;         /* code + INJECT_PAGE */
	uint32_t xsave_size;
};

/*
 * Pure: the mapping for an XSAVE area of @xsave_size bytes (0: FXSAVE's
 * 512).  0, or -EINVAL when it is too big.
 */
int tramp_layout_for(uint32_t xsave_size, struct tramp_layout *lo);
/* Pure: place the layout at @base (what mmap returned). */
void tramp_layout_place(struct tramp_layout *lo, uint64_t base);

struct tramp_params {
	uint64_t fn;            /* dlopen */
	int mode;
	bool xsave;             /* XSAVE usable (CPUID.1:ECX.OSXSAVE) */
	uint64_t xmask;         /* requested-feature bitmap for xsave/xrstor */
	unsigned int spins;
	const char *path;       /* in the target's filesystem */
};

/*
 * The signals the code blocks: all but those glibc itself needs answered
 * (SIGCANCEL, SIGSETXID: another thread's setuid() waits for them) and
 * the synchronous faults (blocked, the kernel would reset their handler
 * to the default before delivering one).
 */
uint64_t tramp_block_mask(void);

/*
 * Pure: the code page to write at @lo->code (INJECT_PAGE bytes into
 * @page): the code, then @p and the registers the code itself returns to
 * when fvbpf is gone, from the thread's @saved (see tramp_self_regs()).
 * @insn: the two bytes before @saved's rip.  -ENAMETOOLONG when the path
 * does not fit.
 */
int tramp_page_build(unsigned char *page, const struct tramp_layout *lo,
		     const struct tramp_params *p, const struct user_regs_struct *saved,
		     const uint8_t insn[2]);

/*
 * Pure: the registers to start the code with, from the thread's @saved:
 * rip at the code, rsp at the stack's top, not in a syscall (no restart
 * logic applies to it), direction and trap flags clear.
 */
void tramp_start_regs(const struct user_regs_struct *saved, const struct tramp_layout *lo,
		      struct user_regs_struct *start);

/*
 * Pure: whether @saved, stopped on the way out of a syscall, carries a
 * result that only our stop caused and that the program would not have
 * seen: -EINTR from a wait that Linux fails so after any stop of the
 * thread (signal(7): epoll_wait, sigtimedwait, semop, io_getevents,
 * io_uring_enter, socket reads and writes with a timeout).  Only when no
 * signal is pending: one that is would fail the wait again, as it should.
 * @insn: the two bytes before rip.
 */
bool tramp_eintr_by_stop(const struct user_regs_struct *saved, const uint8_t insn[2]);

/*
 * Pure: the registers fvbpf restores through ptrace: @saved, with a wait
 * failed by our stop made to run again (rip back on the syscall, rax its
 * number).  The kernel's own restart codes (-ERESTARTSYS and the rest)
 * are left to the kernel, which sees orig_rax.  True when changed.
 */
bool tramp_ptrace_regs(const struct user_regs_struct *saved, const uint8_t insn[2],
		       struct user_regs_struct *out);

/*
 * Pure: the registers the code returns to by itself (no ptrace, so no
 * kernel restart logic): as tramp_ptrace_regs(), and a syscall that was
 * to restart does so here (-ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND
 * run the syscall again, -ERESTART_RESTARTBLOCK runs restart_syscall).
 */
void tramp_self_regs(const struct user_regs_struct *saved, const uint8_t insn[2],
		     struct user_regs_struct *out);
/*
 * Pure: the same when a signal is pending for the thread as the code
 * returns alone: the handler runs before it gets there, so the syscall
 * fails with EINTR as after a handler without SA_RESTART (the code cannot
 * see the handler's flags); -ERESTARTNOINTR still runs again.
 */
void tramp_self_regs_intr(const struct user_regs_struct *saved, struct user_regs_struct *out);

#endif /* FVBPF_INJECT_TRAMP_H */
