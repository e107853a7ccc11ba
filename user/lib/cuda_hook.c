// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * CUDA launches without a trap (fvbpf_fast.h): where fvbpf asks, the
 * library points the PLT slots through which the process's objects call
 * cudaLaunchKernel at a wrapper of its own.  Inside a segment, once fvbpf
 * has mapped the rings, the wrapper writes the call's entry and return into
 * the calling thread's ring and enters cudaLaunchKernel past its first
 * instruction, which it runs itself (push %rbp or endbr64), so fvbpf's
 * uprobe there does not fire.  Whenever it cannot record (outside a
 * segment, before fvbpf reads the rings, a full ring, a forked child) it
 * calls cudaLaunchKernel at its start, uprobe and all: each call is seen
 * once, by one path or the other, and what BPF decides for it is what it
 * always decided.  A caller the hook does not reach (an object loaded
 * later, a function pointer) goes through the uprobe as before.
 *
 * The slots get their old values back when fvbpf is gone (its uprobe's
 * semaphore falls to 0) and in a forked child.  Only for x86-64, whose
 * calling convention the wrapper's argument record follows.  Moving the
 * slots themselves is plt_hook.c's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "control.h"
#include "cuda_hook.h"
#include "dl_find.h"
#include "fast_ring.h"
#include "fast_segments.h"
#include "plt_hook.h"
#include "torch_fast.h"
#include "util/clock.h"
#include "fvbpf_events.h"
#include "fvbpf_fast.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t served_gen;
static volatile int following; /* the hook is in: follow segments (fast_segments.c) */

#if defined(__x86_64__)

#define HOOK_SLOTS_MAX 256
#define LAUNCH_NAME "cudaLaunchKernel"

/* cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream): a dim3
 * is 12 bytes of INTEGER class, passed in two registers. */
struct dim3 {
	unsigned int x, y, z;
};
typedef int (*launch_fn)(const void *, struct dim3, struct dim3, void **, size_t, void *);

static launch_fn real;            /* cudaLaunchKernel, its uprobe included */
static launch_fn past;            /* a stub below: its first instruction, then the rest */
void *fvbpf_hook_cont __attribute__((visibility("hidden"))); /* real + that instruction */
static struct plt_slot slots[HOOK_SLOTS_MAX];
static int hooked_launch(const void *, struct dim3, struct dim3, void **, size_t, void *);
static struct plt_hook hook = {
	.symbol = LAUNCH_NAME, .replacement = (void *)hooked_launch, .definer = "libcudart.so",
	.slots = slots, .max = HOOK_SLOTS_MAX,
};
static bool atfork_done;

/*
 * The first instruction of cudaLaunchKernel run here, then a jump to the
 * one after it.  The stubs are called (not jumped to) by the wrapper with
 * the call's own arguments, so cudaLaunchKernel finds the stack as its
 * caller left it, the return into the wrapper on top.
 */
__asm__(".text\n"
	".p2align 4\n"
	".globl fvbpf_hook_past_push\n"
	".hidden fvbpf_hook_past_push\n"
	".type fvbpf_hook_past_push, @function\n"
	"fvbpf_hook_past_push:\n"
	"\tendbr64\n"
	"\tpush %rbp\n"
	"\tjmp *fvbpf_hook_cont(%rip)\n"
	".size fvbpf_hook_past_push, .-fvbpf_hook_past_push\n"
	".p2align 4\n"
	".globl fvbpf_hook_past_endbr\n"
	".hidden fvbpf_hook_past_endbr\n"
	".type fvbpf_hook_past_endbr, @function\n"
	"fvbpf_hook_past_endbr:\n"
	"\tendbr64\n"
	"\tjmp *fvbpf_hook_cont(%rip)\n"
	".size fvbpf_hook_past_endbr, .-fvbpf_hook_past_endbr\n");
int fvbpf_hook_past_push(const void *, struct dim3, struct dim3, void **, size_t, void *)
	__attribute__((visibility("hidden")));
int fvbpf_hook_past_endbr(const void *, struct dim3, struct dim3, void **, size_t, void *)
	__attribute__((visibility("hidden")));

static inline bool recording(void)
{
	const struct fvbpf_control *c = control;
	uint32_t e = live_epoch();

	return e && __atomic_load_n(&c->cuda.req, __ATOMIC_ACQUIRE) == e && fast_seg_open(c);
}

static void hook_remove(void);

static int hooked_launch(const void *func, struct dim3 grid, struct dim3 block, void **args,
			 size_t shmem, void *stream)
{
	struct fvbpf_fast_ring *ring;
	struct fvbpf_fast_api *e;
	struct fvbpf_fast_api_end *x;
	uint32_t tid;
	int ret;

	if (!recording()) {
		if (__builtin_expect(!semaphore, 0))
			hook_remove(); /* fvbpf is gone: the slots get their old values */
		return real(func, grid, block, args, shmem, stream);
	}
	/* room for the return too, so that a recorded entry gets it */
	e = fast_ring_try(FVBPF_FAST_API_SIZE + FVBPF_FAST_API_END_SIZE, &ring);
	if (!e)
		return real(func, grid, block, args, shmem, stream); /* the uprobe has it */
	tid = fast_ring_tid();
	e->kind = FVBPF_FAST_API;
	e->flags = 0;
	e->size = FVBPF_FAST_API_SIZE;
	e->tid = tid;
	e->call = FVBPF_HOOK_LAUNCH_KERNEL;
	e->pad = 0;
	/* the registers and stack slots BPF's entry reads (rdi..r9, then 4) */
	e->args[0] = (uint64_t)(uintptr_t)func;
	e->args[1] = grid.x | (uint64_t)grid.y << 32;
	e->args[2] = grid.z;
	e->args[3] = block.x | (uint64_t)block.y << 32;
	e->args[4] = block.z;
	e->args[5] = (uint64_t)(uintptr_t)args;
	e->args[6] = shmem;
	e->args[7] = (uint64_t)(uintptr_t)stream;
	e->args[8] = e->args[9] = 0;
	e->ts_ns = clock_ns(CLOCK_MONOTONIC);
	fast_ring_commit(ring, FVBPF_FAST_API_SIZE);
	ret = past(func, grid, block, args, shmem, stream);
	x = fast_ring_reserve(FVBPF_FAST_API_END_SIZE, &ring);
	if (!x)
		return ret; /* counted; the loader closes the call at its segment's end */
	x->kind = FVBPF_FAST_API_END;
	x->flags = 0;
	x->size = FVBPF_FAST_API_END_SIZE;
	x->tid = tid;
	x->ret = ret;
	x->call = FVBPF_HOOK_LAUNCH_KERNEL;
	x->ts_ns = clock_ns(CLOCK_MONOTONIC);
	fast_ring_commit(ring, FVBPF_FAST_API_END_SIZE);
	return ret;
}

/* cudaLaunchKernel of the process's libcudart, and the stub that runs its
 * first instruction: 0 or -FVBPF_HOOK_*. */
static int resolve_launch(void)
{
	static const uint8_t endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	struct dl_found *c = calloc(1, sizeof(*c));
	uint8_t head[16];
	unsigned int skip;
	void *h, *fn = NULL;

	if (!c)
		return -FVBPF_HOOK_NO_MEMORY;
	if (dl_find("libcudart.so", c)) {
		h = dlopen(c->path, RTLD_LAZY | RTLD_NOLOAD);
		fn = h ? dlsym(h, LAUNCH_NAME) : NULL;
		/* the handle stays open: the library is never unloaded under us */
	}
	if (!fn || dl_file_read(c, (uintptr_t)fn, head, sizeof(head))) {
		free(c);
		return -FVBPF_HOOK_NO_CUDART;
	}
	free(c);
	if (head[0] == 0x55) {
		skip = 1;
		past = fvbpf_hook_past_push;
	} else if (!memcmp(head, endbr, sizeof(endbr))) {
		skip = 4;
		past = fvbpf_hook_past_endbr;
	} else {
		return -FVBPF_HOOK_PROLOGUE;
	}
	/* what follows must be the file's code: nothing else patched it */
	if (memcmp((const uint8_t *)fn + skip, head + skip, sizeof(head) - skip))
		return -FVBPF_HOOK_PROLOGUE;
	real = (launch_fn)fn;
	hook.real = fn;
	fvbpf_hook_cont = (uint8_t *)fn + skip;
	return 0;
}

static int hook_install_locked(void)
{
	int r;

	if (hook.n)
		return 0;
	if (!real && (r = resolve_launch()))
		return r;
	return plt_hook_apply(&hook) ? 0 : -FVBPF_HOOK_NO_CALLER;
}

static void restore_slots(void)
{
	plt_hook_restore(&hook);
	__atomic_store_n(&following, 0, __ATOMIC_RELEASE);
}

static void hook_remove(void)
{
	pthread_mutex_lock(&lock);
	if (hook.n && !semaphore)
		restore_slots();
	pthread_mutex_unlock(&lock);
}

/* A forked child calls through its own copy of the slots: they get their
 * old values there (its control page is wiped: nothing would record). */
static void atfork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	served_gen = 0;
	restore_slots();
}

static void serve_locked(struct fvbpf_control *c, uint32_t gen)
{
	const char *env = getenv("FVBPF_FAST");
	uint64_t bytes = 0;
	int r, fd = -1, err = 0;
	uint32_t state = FVBPF_HOOK_READY;

	if (!atfork_done)
		atfork_done = pthread_atfork(NULL, NULL, atfork_child) == 0;
	if (env && !strcmp(env, "off")) {
		state = FVBPF_HOOK_OFF;
	} else if ((r = fast_ring_setup(&fd, &bytes))) {
		state = FVBPF_HOOK_NO_MEMORY;
		err = -r;
		fd = -1;
	} else if ((r = hook_install_locked())) {
		state = (uint32_t)-r;
	}
	if (state == FVBPF_HOOK_READY) {
		/* A new attach: its markers open segments from here on (no
		 * thread has synced its open regions yet: cuda_hook_poll()
		 * comes first in a thread's first marker of an attach).  The
		 * operator callbacks, where they are in, were served first,
		 * before the epoch turned odd, and reset it then. */
		if (!torch_fast_active())
			fast_seg_reset();
		__atomic_store_n(&following, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&served_gen, gen, __ATOMIC_RELEASE);
	channel_answer(&c->cuda, gen, &(struct channel_reply){
		.state = state, .err = err, .slots = hook.n,
		.fd = state == FVBPF_HOOK_READY ? fd : -1,
		.bytes = state == FVBPF_HOOK_READY ? bytes : 0 });
}

#else /* !__x86_64__ */

static void hook_remove(void)
{
}

static void serve_locked(struct fvbpf_control *c, uint32_t gen)
{
	__atomic_store_n(&served_gen, gen, __ATOMIC_RELEASE);
	channel_answer(&c->cuda, gen, &(struct channel_reply){
		.state = FVBPF_HOOK_UNSUPPORTED, .fd = -1 });
}

#endif

void cuda_hook_poll(void)
{
	struct fvbpf_control *c = control;
	uint32_t gen;

	if (!c || c->magic != FVBPF_CONTROL_MAGIC)
		return;
	if (!semaphore) {
		if (__atomic_load_n(&following, __ATOMIC_ACQUIRE))
			hook_remove();
		return;
	}
	gen = channel_request(&c->cuda, NULL);
	if (!gen || gen == __atomic_load_n(&served_gen, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&lock);
	if (gen != served_gen)
		serve_locked(c, gen);
	pthread_mutex_unlock(&lock);
}

bool cuda_hook_following(void)
{
	return __atomic_load_n(&following, __ATOMIC_ACQUIRE);
}
