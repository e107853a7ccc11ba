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
 * calling convention the wrapper's argument record follows.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "cuda_hook.h"
#include "dl_find.h"
#include "fast_ring.h"
#include "fast_segments.h"
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
#define DYN_MAX 4096              /* dynamic entries read per object */
#define RELA_MAX (1u << 20)       /* PLT relocations read per object */

/* cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream): a dim3
 * is 12 bytes of INTEGER class, passed in two registers. */
struct dim3 {
	unsigned int x, y, z;
};
typedef int (*launch_fn)(const void *, struct dim3, struct dim3, void **, size_t, void *);

struct slot {
	void **addr;
	void *old;
	bool relro;
};

static launch_fn real;            /* cudaLaunchKernel, its uprobe included */
static launch_fn past;            /* a stub below: its first instruction, then the rest */
void *fvbpf_hook_cont __attribute__((visibility("hidden"))); /* real + that instruction */
static struct slot slots[HOOK_SLOTS_MAX];
static uint32_t nslots;
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

	return e && __atomic_load_n(&c->cuda_live, __ATOMIC_ACQUIRE) == e && fast_seg_open(c);
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

/* A pointer of a dynamic entry: ld.so relocates most, not every one. */
static uintptr_t dyn_ptr(ElfW(Addr) base, ElfW(Addr) v)
{
	return v < base ? base + v : v;
}

struct object {
	ElfW(Addr) base;
	uintptr_t lo, hi;                 /* what its PT_LOADs span */
	const ElfW(Phdr) *relro;
};

static bool within(const struct object *o, uintptr_t p, size_t n)
{
	return p >= o->lo && p <= o->hi && n <= o->hi - p;
}

/* Write one slot, the RELRO page made writable for the store. */
static int set_slot(void **addr, void *v, bool relro)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t page = (uintptr_t)addr & ~((uintptr_t)pg - 1);

	if (relro && mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE))
		return -errno;
	__atomic_store_n(addr, v, __ATOMIC_RELEASE);
	if (relro)
		mprotect((void *)page, (size_t)pg, PROT_READ);
	return 0;
}

/* This object's PLT slots for cudaLaunchKernel: how many there are, and
 * with @apply, each pointed at the wrapper. */
static unsigned int patch_object(const struct object *o, const ElfW(Dyn) *dyn, bool apply)
{
	unsigned int found = 0;
	uintptr_t symtab = 0, strtab = 0, jmprel = 0;
	size_t strsz = 0, pltrelsz = 0, i, n;
	long pltrel = -1;
	const ElfW(Rela) *r;
	const ElfW(Sym) *sym;
	void **addr, *v;
	bool relro;

	for (i = 0; i < DYN_MAX && dyn[i].d_tag != DT_NULL; i++) {
		switch (dyn[i].d_tag) {
		case DT_SYMTAB: symtab = dyn_ptr(o->base, dyn[i].d_un.d_ptr); break;
		case DT_STRTAB: strtab = dyn_ptr(o->base, dyn[i].d_un.d_ptr); break;
		case DT_STRSZ: strsz = dyn[i].d_un.d_val; break;
		case DT_JMPREL: jmprel = dyn_ptr(o->base, dyn[i].d_un.d_ptr); break;
		case DT_PLTRELSZ: pltrelsz = dyn[i].d_un.d_val; break;
		case DT_PLTREL: pltrel = (long)dyn[i].d_un.d_val; break;
		}
	}
	if (!symtab || !strtab || !jmprel || pltrel != DT_RELA || !within(o, jmprel, pltrelsz))
		return 0;
	n = pltrelsz / sizeof(*r);
	if (n > RELA_MAX)
		n = RELA_MAX;
	r = (const ElfW(Rela) *)jmprel;
	for (i = 0; i < n && nslots < HOOK_SLOTS_MAX; i++) {
		if (ELF64_R_TYPE(r[i].r_info) != R_X86_64_JUMP_SLOT)
			continue;
		sym = (const ElfW(Sym) *)symtab + ELF64_R_SYM(r[i].r_info);
		/* an object that defines it calls its own: not ours to move */
		if (!within(o, (uintptr_t)sym, sizeof(*sym)) || sym->st_shndx != SHN_UNDEF ||
		    sym->st_name >= strsz || strsz - sym->st_name < sizeof(LAUNCH_NAME) ||
		    memcmp((const char *)strtab + sym->st_name, LAUNCH_NAME, sizeof(LAUNCH_NAME)))
			continue;
		addr = (void **)(o->base + r[i].r_offset);
		if (!within(o, (uintptr_t)addr, sizeof(*addr)))
			continue;
		v = __atomic_load_n(addr, __ATOMIC_ACQUIRE);
		/* bound to this libcudart, or not yet (its PLT stub): ours;
		 * bound elsewhere (another copy, another hook): left alone */
		if (v != (void *)real && !within(o, (uintptr_t)v, 1))
			continue;
		found++;
		if (!apply)
			continue;
		relro = o->relro && (uintptr_t)addr >= o->base + o->relro->p_vaddr &&
			(uintptr_t)addr < o->base + o->relro->p_vaddr + o->relro->p_memsz;
		if (set_slot(addr, (void *)hooked_launch, relro))
			continue;
		slots[nslots++] = (struct slot){ addr, v, relro };
	}
	return found;
}

static bool skip_object(const char *name, ElfW(Addr) base)
{
	Dl_info self;

	if (dladdr((void *)hooked_launch, &self) && (ElfW(Addr))self.dli_fbase == base)
		return true; /* ourselves */
	return dl_name_is(name, "libcudart.so") || dl_name_is(name, "linux-vdso");
}

/*
 * Two walks over the loaded objects: the first finds those with slots to
 * point at the wrapper, which are then made RTLD_NODELETE (a slot of an
 * object unloaded later would be written at its restore); the second, which
 * never loads anything inside dl_iterate_phdr, patches those only.
 */
#define PIN_MAX 64
struct walk {
	bool apply;
	unsigned int nnames, npinned;
	char *names[PIN_MAX];
	ElfW(Addr) pinned[PIN_MAX];
};

static bool pinned(const struct walk *w, const char *name, ElfW(Addr) base)
{
	unsigned int i;

	if (!name || !name[0])
		return true; /* the executable, never unloaded */
	for (i = 0; i < w->npinned; i++)
		if (w->pinned[i] == base)
			return true;
	return false;
}

static int patch_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct object o = { .base = info->dlpi_addr, .lo = UINTPTR_MAX };
	struct walk *w = arg;
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t end;
	int i;

	(void)size;
	if (skip_object(info->dlpi_name, info->dlpi_addr) ||
	    (w->apply && !pinned(w, info->dlpi_name, info->dlpi_addr)))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_LOAD) {
			end = o.base + p->p_vaddr + p->p_memsz;
			if (o.base + p->p_vaddr < o.lo)
				o.lo = o.base + p->p_vaddr;
			if (end > o.hi)
				o.hi = end;
		} else if (p->p_type == PT_DYNAMIC) {
			dyn = (const ElfW(Dyn) *)(o.base + p->p_vaddr);
		} else if (p->p_type == PT_GNU_RELRO) {
			o.relro = p;
		}
	}
	if (!dyn || o.lo >= o.hi)
		return 0;
	if (w->apply) {
		patch_object(&o, dyn, true);
		return nslots >= HOOK_SLOTS_MAX;
	}
	if (info->dlpi_name && info->dlpi_name[0] && w->nnames < PIN_MAX &&
	    patch_object(&o, dyn, false))
		w->names[w->nnames++] = strdup(info->dlpi_name);
	return 0;
}

static void patch_all(void)
{
	struct walk *w = calloc(1, sizeof(*w));
	struct link_map *lm;
	unsigned int i;
	void *h;

	if (!w)
		return;
	dl_iterate_phdr(patch_cb, w);
	for (i = 0; i < w->nnames; i++) {
		h = w->names[i] ? dlopen(w->names[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) : NULL;
		if (h && !dlinfo(h, RTLD_DI_LINKMAP, &lm))
			w->pinned[w->npinned++] = lm->l_addr;
		free(w->names[i]);
	}
	w->apply = true;
	dl_iterate_phdr(patch_cb, w);
	free(w);
}

/* The first 16 bytes of @fn as its file has them (memory may hold a
 * uprobe's int3 at the first). */
static int file_bytes(const struct dl_found *c, uintptr_t fn, uint8_t *out)
{
	uintptr_t v = fn - c->base;
	ssize_t n = -1;
	int i, fd;

	for (i = 0; i < c->phnum; i++) {
		const ElfW(Phdr) *p = &c->phdr[i];

		if (p->p_type != PT_LOAD || v < p->p_vaddr || v - p->p_vaddr + 16 > p->p_filesz)
			continue;
		fd = open(c->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		n = pread(fd, out, 16, (off_t)(p->p_offset + (v - p->p_vaddr)));
		close(fd);
		break;
	}
	return n == 16 ? 0 : -EIO;
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
	if (!fn || file_bytes(c, (uintptr_t)fn, head)) {
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
	fvbpf_hook_cont = (uint8_t *)fn + skip;
	return 0;
}

static int hook_install_locked(void)
{
	int r;

	if (nslots)
		return 0;
	if (!real && (r = resolve_launch()))
		return r;
	patch_all();
	return nslots ? 0 : -FVBPF_HOOK_NO_CALLER;
}

/* Each slot that still points at the wrapper gets its old value. */
static void restore_slots(void)
{
	uint32_t i;

	for (i = 0; i < nslots; i++)
		if (__atomic_load_n(slots[i].addr, __ATOMIC_ACQUIRE) == (void *)hooked_launch)
			set_slot(slots[i].addr, slots[i].old, slots[i].relro);
	nslots = 0;
	__atomic_store_n(&following, 0, __ATOMIC_RELEASE);
}

static void hook_remove(void)
{
	pthread_mutex_lock(&lock);
	if (nslots && !semaphore)
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
	c->cuda_state = state;
	c->cuda_err = (uint32_t)err;
	c->cuda_slots = nslots;
	c->cuda_fd = state == FVBPF_HOOK_READY ? fd : -1;
	c->cuda_bytes = state == FVBPF_HOOK_READY ? bytes : 0;
	__atomic_store_n(&served_gen, gen, __ATOMIC_RELEASE);
	__atomic_store_n(&c->cuda_done, gen, __ATOMIC_RELEASE);
}

#else /* !__x86_64__ */

static void hook_remove(void)
{
}

static void serve_locked(struct fvbpf_control *c, uint32_t gen)
{
	__atomic_store_n(&served_gen, gen, __ATOMIC_RELEASE);
	c->cuda_state = FVBPF_HOOK_UNSUPPORTED;
	c->cuda_slots = 0;
	c->cuda_fd = -1;
	__atomic_store_n(&c->cuda_done, gen, __ATOMIC_RELEASE);
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
	gen = __atomic_load_n(&c->cuda_gen, __ATOMIC_ACQUIRE);
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
