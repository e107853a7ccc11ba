// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The operator fast path (fvbpf_fast.h): PyTorch's own RecordFunction
 * callbacks, registered from here while the process is inside a segment,
 * write each operator's and node's begin and end into shared rings.
 *
 * Which segments: the library follows "inside a segment" by BPF's rules
 * (fast_segments.c); the callbacks record only then.  Registration follows
 * it where it changes: after a marker, and in a USER_SCOPE callback of
 * ours (torch scopes that delimit segments), before the scope's first
 * operator.  Not inside a segment, no callback of ours runs per operator:
 * PyTorch's dispatcher takes its fast path as when no profiler is on.
 *
 * The C side of C++ calls (x86-64 System V, Itanium C++ ABI):
 * RecordFunctionCallback is trivially copyable and 40 bytes, so it is
 * passed in memory like this C struct; a start callback returns a
 * std::unique_ptr<ObserverContext> (not trivial) through a hidden pointer
 * in rdi, which it returns in rax.  Our context is a static object with a
 * do-nothing virtual destructor: non-NULL means "this begin was recorded",
 * so the end is recorded exactly when its begin was.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "control.h"
#include "cuda_hook.h"
#include "dl_find.h"
#include "fast_pystack.h"
#include "fast_ring.h"
#include "fast_segments.h"
#include "torch_fast.h"
#include "util/clock.h"
#include "fvbpf_events.h"
#include "fvbpf_fast.h"

typedef uint64_t (*add_global_fn)(struct fvbpf_rf_callback cb);
typedef void (*remove_fn)(uint64_t handle);
typedef const char *(*rf_name_fn)(const void *rf);

static add_global_fn add_global;
static remove_fn remove_cb;
static rf_name_fn rf_name;

/* The ObserverContext we hand back: a vtable of two destructors (complete,
 * deleting) that do nothing, so unique_ptr's delete is harmless. */
static void ctx_dtor(void *self)
{
	(void)self;
}
static void *const ctx_vtable[4] = { NULL, NULL, (void *)ctx_dtor, (void *)ctx_dtor };
static const struct { void *const *vptr; } recorded = { &ctx_vtable[2] };

/* Recorded operators open on this thread: one inside another has its
 * Python stack (--with-stack walks only the outermost). */
static __thread uint32_t op_depth;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t h_op, h_node, h_gate;  /* 0: not registered */
static volatile int registered;        /* h_op and h_node */
static uint32_t served_gen;
/* The (even) epoch the request was served under, with bit 32 set: 0 none. */
static uint64_t served_epoch;

/* A field of layout 1's at::RecordFunction at @off (fvbpf_fast.h): read
 * in a begin callback, where torch hands us a live object. */
static uint64_t rf_field(const void *rf, unsigned int off)
{
	uint64_t v;

	memcpy(&v, (const char *)rf + off, sizeof(v));
	return v;
}

/*
 * Segments are followed, and recorded, from the answer to fvbpf's request
 * on (the epoch it was served under, still even), not from the odd epoch:
 * fvbpf arms BPF after the answer and before the odd epoch, and a segment
 * BPF opens in between must find the callbacks already in and recording.
 * What is recorded before the attach fvbpf skips (records older than it).
 * Quiet or detaching (the next even epoch), or a forked child (a zeroed
 * page): nothing.
 */
static inline bool following_attach(const struct fvbpf_control *c)
{
	uint32_t e;

	if (!c || !semaphore || c->magic != FVBPF_CONTROL_MAGIC)
		return false;
	e = c->epoch;
	return (e & 1) ||
	       ((uint64_t)e | 1ull << 32) == __atomic_load_n(&served_epoch, __ATOMIC_ACQUIRE);
}

static inline bool recording(void)
{
	const struct fvbpf_control *c = control;

	return following_attach(c) && fast_seg_open(c);
}

static bool record_begin(const void *rf, uint8_t kind)
{
	const struct fvbpf_control *c = control;
	struct fvbpf_fast_ring *ring;
	struct fvbpf_fast_rec *rec;
	const char *name;
	uint32_t len, size;
	uint64_t now;

	if (!recording()) {
		/* registered, yet outside: the lag between a segment's end and
		 * the removal, counted so that the cost outside is known */
		uint64_t *n = fast_ring_counter(offsetof(struct fvbpf_fast_hdr, outside));

		if (n)
			__atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
		return false;
	}
	name = rf_name(rf);
	len = name ? (uint32_t)strnlen(name, FVBPF_FAST_NAME + 1) : 0;
	size = (FVBPF_FAST_BEGIN_SIZE + (len > FVBPF_FAST_NAME ? FVBPF_FAST_NAME : len) + 7) & ~7u;
	now = clock_ns(CLOCK_MONOTONIC);
	/* the stack record goes out first, with the op's timestamp: walked
	 * here when the library can, else by BPF through the probe */
	if (c->fast_stacks && !op_depth && !fast_py_emit(c, now))
		fvbpf_probe_py_stack(now);
	rec = fast_ring_reserve(size, &ring);
	if (!rec)
		return false; /* counted; its end is not recorded either */
	rec->kind = kind;
	rec->flags = len > FVBPF_FAST_NAME ? FVBPF_FAST_CUT : 0;
	if (c->fast_stacks && op_depth)
		rec->flags |= FVBPF_FAST_SAME;
	op_depth++;
	rec->size = (uint16_t)size;
	rec->tid = fast_ring_tid();
	rec->ts_ns = now;
	if (len > FVBPF_FAST_NAME)
		len = FVBPF_FAST_NAME;
	rec->name_len = len;
	rec->pad = 0;
	/* what correlates a backward node with its forward op (Kineto's
	 * "Sequence number" and "Fwd thread id") */
	rec->seq_nr = (int64_t)rf_field(rf, FVBPF_RF_OFF_SEQ_NR);
	rec->rf_tid = rf_field(rf, FVBPF_RF_OFF_THREAD_ID);
	rec->fwd_tid = rf_field(rf, FVBPF_RF_OFF_FWD_THREAD_ID);
	if (len)
		memcpy(rec + 1, name, len);
	memset((char *)(rec + 1) + len, 0, size - FVBPF_FAST_BEGIN_SIZE - len);
	fast_ring_commit(ring, size);
	return true;
}

static void **op_start(void **ret, const void *rf)
{
	*ret = record_begin(rf, FVBPF_FAST_OP) ? (void *)&recorded : NULL;
	return ret;
}

static void **node_start(void **ret, const void *rf)
{
	*ret = record_begin(rf, FVBPF_FAST_NODE) ? (void *)&recorded : NULL;
	return ret;
}

/* Recorded after a segment closed too: its begin was. */
static void rec_end(const void *rf, void *ctx)
{
	struct fvbpf_fast_ring *ring;
	struct fvbpf_fast_rec *rec;
	uint64_t now;

	(void)rf;
	if (ctx != &recorded)
		return;
	if (op_depth)
		op_depth--;
	now = clock_ns(CLOCK_MONOTONIC);
	rec = fast_ring_reserve(FVBPF_FAST_END_SIZE, &ring);
	if (!rec)
		return; /* counted; the loader closes the op at its parent's end */
	rec->kind = FVBPF_FAST_END;
	rec->flags = 0;
	rec->size = FVBPF_FAST_END_SIZE;
	rec->tid = fast_ring_tid();
	rec->ts_ns = now;
	fast_ring_commit(ring, FVBPF_FAST_END_SIZE);
}

static uint64_t add_one(void *start, void *end, int scope)
{
	struct fvbpf_rf_callback cb = { .start = start, .end = end, .sampling_prob = 1.0 };

	cb.scopes[scope] = true;
	return add_global(cb);
}

/* Called with the lock held. */
static void set_registered_locked(bool on)
{
	if (on && !registered && add_global) {
		h_op = add_one((void *)op_start, (void *)rec_end, FVBPF_RF_FUNCTION);
		h_node = add_one((void *)node_start, (void *)rec_end, FVBPF_RF_BACKWARD_FUNCTION);
		__atomic_store_n(&registered, 1, __ATOMIC_RELEASE);
	} else if (!on && registered) {
		remove_cb(h_op);
		remove_cb(h_node);
		h_op = h_node = 0;
		__atomic_store_n(&registered, 0, __ATOMIC_RELEASE);
	}
}

/* Registration follows "inside a segment" (fast_segments.c); @late: the watch
 * thread, which only catches what the other points missed. */
static void sync_registration(bool late)
{
	bool want = recording();
	uint64_t *n;

	if (want == (bool)__atomic_load_n(&registered, __ATOMIC_ACQUIRE) || !h_gate)
		return;
	pthread_mutex_lock(&lock);
	if (h_gate) {
		if (want && !registered && late) {
			n = fast_ring_counter(offsetof(struct fvbpf_fast_hdr, late));
			if (n)
				__atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
		}
		set_registered_locked(want);
	}
	pthread_mutex_unlock(&lock);
}

/* Our USER_SCOPE context: "this scope counted towards a segment". */
static const struct { void *const *vptr; } gated = { &ctx_vtable[2] };

static uint64_t scope_hash(const void *rf)
{
	const char *name = rf_name(rf);

	return name ? fvbpf_scope_hash(name, (uint32_t)strnlen(name, FVBPF_SCOPE_NAME)) : 0;
}

/* A torch scope begins: one that opens a segment gets the callbacks
 * registered now, before its first operator. */
static void **gate_start(void **ret, const void *rf)
{
	const struct fvbpf_control *c = control;

	*ret = NULL;
	if (!following_attach(c) || !c->fast_ngates)
		return ret;
	if (fast_seg_scope_begin(c, scope_hash(rf))) {
		*ret = (void *)&gated;
		sync_registration(false);
	}
	return ret;
}

/* A torch scope ends: a region scope closes, a step scope starts steps. */
static void gate_end(const void *rf, void *ctx)
{
	const struct fvbpf_control *c = control;

	/* BPF's scope end, which it would otherwise take from a uprobe on
	 * RecordFunction::end(), a trap on every operator while ours are
	 * registered.  From the attach on, odd epoch or not: BPF records
	 * scope begins from the moment its scope probe is in, before the
	 * epoch turns odd.  Never in a forked child (its page is wiped). */
	if (!c || c->magic != FVBPF_CONTROL_MAGIC || !semaphore)
		return;
	fvbpf_probe_scope_end(rf);
	if (!following_attach(c))
		return;
	if (ctx == &gated || c->fast_nsteps) {
		fast_seg_scope_end(c, scope_hash(rf), ctx == &gated);
		sync_registration(false);
	}
}

/* libtorch_cpu's three functions, from the copy the process has loaded
 * (RTLD_NOLOAD: never a load of our own). */
static int resolve(void)
{
	struct dl_found *f;
	void *h;

	if (add_global)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -FVBPF_FAST_NO_MEMORY;
	if (!dl_find("libtorch_cpu.so", f)) {
		free(f);
		return -FVBPF_FAST_NO_TORCH;
	}
	h = dlopen(f->path, RTLD_LAZY | RTLD_NOLOAD);
	free(f);
	if (!h)
		return -FVBPF_FAST_NO_TORCH;
	remove_cb = (remove_fn)dlsym(h, "_ZN2at14removeCallbackEm");
	rf_name = (rf_name_fn)dlsym(h, "_ZNK2at14RecordFunction4nameEv");
	add_global = (add_global_fn)dlsym(h, "_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE");
	/* the handle stays open: torch is never unloaded under a callback */
	if (!remove_cb || !rf_name || !add_global) {
		add_global = NULL;
		return -FVBPF_FAST_NO_SYMBOL;
	}
	return 0;
}

static void answer(struct fvbpf_control *c, uint32_t gen, uint32_t state, int err, int fd,
		   uint64_t bytes)
{
	channel_answer(&c->fast, gen, &(struct channel_reply){
		.state = state, .err = err, .fd = fd, .bytes = bytes });
}

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

static void serve_locked(struct fvbpf_control *c, uint32_t gen, uint32_t layout)
{
	static int atfork_done;

	const char *env = getenv("FVBPF_FAST");
	uint64_t bytes = 0;
	int r, fd = -1;

	served_gen = gen;
	if (!atfork_done)
		atfork_done = pthread_atfork(atfork_prepare, atfork_parent, atfork_child) == 0;
	if (env && !strcmp(env, "off")) {
		answer(c, gen, FVBPF_FAST_OFF, 0, -1, 0);
		return;
	}
	if (layout != FVBPF_FAST_LAYOUT_TORCH2) {
		answer(c, gen, FVBPF_FAST_BAD_LAYOUT, 0, -1, 0);
		return;
	}
	r = resolve();
	if (r) {
		answer(c, gen, (uint32_t)-r, 0, -1, 0);
		return;
	}
	r = fast_ring_setup(&fd, &bytes);
	if (r) {
		answer(c, gen, FVBPF_FAST_NO_MEMORY, -r, -1, 0);
		return;
	}
	fast_seg_reset(); /* a new attach: its markers and scopes open segments */
	fast_py_lookup();
	if (!h_gate)
		h_gate = add_one((void *)gate_start, (void *)gate_end, FVBPF_RF_USER_SCOPE);
	__atomic_store_n(&served_epoch, (uint64_t)c->epoch | 1ull << 32, __ATOMIC_RELEASE);
	answer(c, gen, FVBPF_FAST_READY, 0, fd, bytes);
}

/* Detached (or fvbpf gone): nothing of ours stays registered. */
static void stop_locked(void)
{
	set_registered_locked(false);
	if (h_gate) {
		remove_cb(h_gate);
		h_gate = 0;
	}
}

void torch_fast_poll(bool late)
{
	struct fvbpf_control *c = control;
	uint32_t gen, layout;

	if (!c || c->magic != FVBPF_CONTROL_MAGIC)
		return;
	if (!semaphore) {
		if (h_gate) {
			pthread_mutex_lock(&lock);
			stop_locked();
			pthread_mutex_unlock(&lock);
		}
		return;
	}
	/* Served while the epoch is still even: fvbpf waits for the answer
	 * before it lets any segment open. */
	gen = channel_request(&c->fast, &layout);
	if (gen && gen != served_gen) {
		pthread_mutex_lock(&lock);
		if (gen != served_gen)
			serve_locked(c, gen, layout);
		pthread_mutex_unlock(&lock);
	}
	sync_registration(late); /* off once quiet or detaching (the next even epoch) */
}

bool torch_fast_active(void)
{
	return h_gate != 0;
}

/* Segments are followed for the operator callbacks and for the CUDA hook
 * (cuda_hook.c), whichever is in. */
static bool following(void)
{
	return h_gate || cuda_hook_following();
}

void torch_fast_marker(uint64_t hash, bool begin)
{
	const struct fvbpf_control *c = control;

	if (!following() || !c)
		return;
	fast_seg_region(c, hash, begin);
	sync_registration(false);
}

void torch_fast_stack(const uint64_t *hashes, uint32_t n)
{
	const struct fvbpf_control *c = control;

	if (!following() || !c)
		return;
	fast_seg_sync(c, hashes, n);
	sync_registration(false);
}

/* A forked child: the callbacks torch copied into it find a zeroed
 * control page (MADV_WIPEONFORK) and record nothing (their handles stay
 * ours, so a later attach to the child reuses them); its lock starts
 * afresh, and a request to it gets rings of its own, never its parent's. */
/*
 * Our callbacks are added and removed only under @lock, and torch's
 * registry takes its own mutex inside those calls: a fork while the watch
 * thread was in one left the child that mutex held, and the child hung for
 * good at its first RecordFunction (a forked worker of the stress test,
 * 23 min in futex).  Holding @lock across the fork, no thread of ours is
 * inside torch's registry when it happens.
 */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

static void atfork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	served_gen = 0;
	served_epoch = 0;
	fast_ring_atfork_child();
}
