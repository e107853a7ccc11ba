// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * --with-stack through the operator fast path, walked here: at an outermost
 * operator's begin the library reads its own thread's CPython frames and
 * writes them into its ring (FVBPF_FAST_STACK), where the BPF walk would
 * cost a trap into the kernel per operator (fvbpf_probe_py_stack, which
 * stays the way when this one cannot be had).
 *
 * What is read: the thread's own PyThreadState (PyGILState_GetThisThreadState,
 * a thread-local lookup that needs no GIL), then its frame chain, with the
 * offsets fvbpf measured for BPF's walk (the control page's fast_py).  The
 * calling thread is inside a torch call, so its frames are live and still:
 * only this thread moves them, and it is here.  Nothing of another thread
 * is touched.  Code objects are not read, only their addresses (fvbpf
 * resolves them from outside, as for BPF's walk).
 *
 * The offsets are checked before the first direct read: one walk through
 * process_vm_readv (a bad address is an error there, not a fault), every
 * code object of it must be a PyCode_Type, and the thread state must name
 * this thread.  Until that walk passes, and for good when it fails, the
 * probe walks.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fast_pystack.h"
#include "fast_ring.h"
#include "fvbpf_pystack.h"

_Static_assert(sizeof(((struct fvbpf_control *)0)->fast_py) == sizeof(struct fvbpf_py_cfg),
	       "the control page holds a py cfg");

typedef void *(*this_tstate_fn)(void);

static this_tstate_fn this_tstate;   /* PyGILState_GetThisThreadState */
static const void *code_type;        /* &PyCode_Type */
static int checked;                  /* 0 not yet, 1 direct reads, -1 the probe */

void fast_py_lookup(void)
{
	if (this_tstate)
		return;
	code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
	if (code_type)
		this_tstate = (this_tstate_fn)dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
}

typedef bool (*read_fn)(uint64_t addr, uint64_t *v);

static bool read_direct(uint64_t addr, uint64_t *v)
{
	*v = *(const volatile uint64_t *)(uintptr_t)addr;
	return true;
}

/* A read that cannot fault: for the check, before the offsets are trusted. */
static bool read_safe(uint64_t addr, uint64_t *v)
{
	struct iovec local = { v, sizeof(*v) }, remote = { (void *)(uintptr_t)addr, sizeof(*v) };

	*v = 0;
	return addr && !(addr & 7) &&
	       process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof(*v);
}

/* The frames into @fr (at most cfg->depth), their count, or -1 when a read
 * failed (only read_safe fails); *cut when there were more. */
static int walk(const struct fvbpf_py_cfg *cfg, uint64_t tstate, read_fn rd,
		struct fvbpf_py_frame *fr, bool *cut)
{
	uint64_t frame, code, instr, owner, prev;
	uint32_t n = 0, depth = cfg->depth < FVBPF_PY_DEPTH_MAX ? cfg->depth : FVBPF_PY_DEPTH_MAX;

	*cut = false;
	if (!rd(tstate + cfg->ts_cframe, &frame))
		return -1;
	if (cfg->cf_current != FVBPF_PY_NO_CFRAME && frame && !rd(frame + cfg->cf_current, &frame))
		return -1;
	for (; frame; frame = prev) {
		if (n == depth) {
			*cut = true;
			break;
		}
		if (!rd(frame + cfg->fr_code, &code) || !rd(frame + cfg->fr_instr, &instr) ||
		    !rd(frame + cfg->fr_previous, &prev) ||
		    !rd(frame + (cfg->fr_owner & ~7u), &owner))
			return -1;
		owner = (owner >> ((cfg->fr_owner & 7) * 8)) & 0xff;
		/* a C entry frame (3.12+) has no line: code 0, as BPF's walk */
		fr[n].code = cfg->owner_cstack && owner == cfg->owner_cstack ? 0 : code;
		fr[n].instr = instr;
		n++;
	}
	return (int)n;
}

/* The check: a safe walk whose code objects are all code objects. */
static int check(const struct fvbpf_py_cfg *cfg, uint64_t tstate, struct fvbpf_py_frame *fr)
{
	uint64_t type;
	bool cut;
	int n, i, codes = 0;

	n = walk(cfg, tstate, read_safe, fr, &cut);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (!fr[i].code)
			continue;
		/* PyObject: ob_refcnt, then ob_type */
		if (!read_safe(fr[i].code + 8, &type) || type != (uint64_t)(uintptr_t)code_type)
			return -1;
		codes++;
	}
	return codes ? 1 : 0; /* no frame yet: look again next time */
}

bool fast_py_emit(const struct fvbpf_control *c, uint64_t ts)
{
	struct fvbpf_py_frame fr[FVBPF_PY_DEPTH_MAX];
	const struct fvbpf_py_cfg *cfg;
	struct fvbpf_fast_ring *ring;
	struct fvbpf_fast_stack *rec;
	uint64_t tstate, tid;
	uint32_t size;
	bool cut;
	int n, st = __atomic_load_n(&checked, __ATOMIC_ACQUIRE);

	if (st < 0 || !this_tstate || !__atomic_load_n(&c->fast_py_set, __ATOMIC_ACQUIRE))
		return false;
	cfg = (const struct fvbpf_py_cfg *)c->fast_py;
	tstate = (uint64_t)(uintptr_t)this_tstate();
	if (!tstate)
		return true; /* a thread without Python: no stack, as BPF finds */
	if (!st) {
		/* the thread state names this thread, read safely */
		if (!read_safe(tstate + cfg->ts_native_tid, &tid) || tid != fast_ring_tid())
			st = -1;
		else
			st = check(cfg, tstate, fr);
		if (st)
			__atomic_store_n(&checked, st, __ATOMIC_RELEASE);
		if (st <= 0)
			return false; /* this once, the probe */
	}
	n = walk(cfg, tstate, read_direct, fr, &cut);
	if (n <= 0)
		return true;
	size = FVBPF_FAST_STACK_SIZE + (uint32_t)n * (uint32_t)sizeof(fr[0]);
	rec = fast_ring_reserve(size, &ring);
	if (!rec)
		return true; /* counted; the operator has no stack */
	rec->kind = FVBPF_FAST_STACK;
	rec->flags = cut ? FVBPF_FAST_CUT : 0;
	rec->size = (uint16_t)size;
	rec->tid = fast_ring_tid();
	rec->ts_ns = ts;
	rec->nframes = (uint32_t)n;
	rec->pad = 0;
	memcpy(rec + 1, fr, (size_t)n * sizeof(fr[0]));
	fast_ring_commit(ring, size);
	return true;
}
