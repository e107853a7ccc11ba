// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The operator fast path's shared memory (fvbpf_fast.h): one memfd, made
 * at the first request and kept for the life of the process (a later
 * attach reuses it), one single-producer ring per recording thread.
 * A thread claims a free ring at its first record and frees it when it
 * exits; fvbpf reads the rest of its records afterwards.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fast_ring.h"

static uint8_t *base;
static int memfd = -1;
static pthread_key_t ring_key;
static int key_made;

static __thread struct fvbpf_fast_ring *my_ring;
static __thread uint32_t my_tid;
static __thread uint32_t claim_failed;  /* records since the last failed claim */

static struct fvbpf_fast_ring *ring_at(uint32_t i)
{
	return (struct fvbpf_fast_ring *)(base + fvbpf_fast_ring_off(i));
}

/* Thread exit: the ring goes back to the pool; its unread records stay. */
static void ring_release(void *arg)
{
	struct fvbpf_fast_ring *r = arg;

	if (r)
		__atomic_store_n(&r->tid, 0, __ATOMIC_RELEASE);
}

int fast_ring_setup(int *fd, uint64_t *bytes)
{
	struct fvbpf_fast_hdr *h;
	void *p;
	int f, err;

	if (base) {
		*fd = memfd;
		*bytes = FVBPF_FAST_BYTES;
		return 0;
	}
	f = (int)syscall(SYS_memfd_create, "fvbpf-ops", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (f < 0)
		return -errno;
	/* Sealed at its size: fvbpf maps it only so, and no truncation can
	 * then fault its reads (SIGBUS) */
	if (ftruncate(f, (off_t)FVBPF_FAST_BYTES) ||
	    fcntl(f, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		err = -errno;
		close(f);
		return err;
	}
	p = mmap(NULL, FVBPF_FAST_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		close(f);
		return err;
	}
	err = key_made ? 0 : pthread_key_create(&ring_key, ring_release);
	key_made = !err;
	if (err) {
		munmap(p, FVBPF_FAST_BYTES);
		close(f);
		return -err;
	}
	h = p;
	h->version = FVBPF_FAST_VERSION;
	h->nthreads = FVBPF_FAST_THREADS;
	h->ring_bytes = FVBPF_FAST_RING_BYTES;
	__atomic_store_n(&h->magic, FVBPF_FAST_MAGIC, __ATOMIC_RELEASE);
	memfd = f;
	__atomic_store_n(&base, (uint8_t *)p, __ATOMIC_RELEASE);
	*fd = f;
	*bytes = FVBPF_FAST_BYTES;
	return 0;
}

/* Slow path: the thread's first record, or a retry after the pool was
 * full (every 4096 records, so a full pool costs little). */
static __attribute__((noinline)) struct fvbpf_fast_ring *claim(bool count)
{
	struct fvbpf_fast_hdr *h = (struct fvbpf_fast_hdr *)base;
	uint32_t i, zero;

	if (!base)
		return NULL;
	if (claim_failed && ++claim_failed < 4096) {
		if (count)
			__atomic_fetch_add(&h->no_ring, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	for (i = 0; i < FVBPF_FAST_THREADS; i++) {
		zero = 0;
		if (__atomic_compare_exchange_n(&ring_at(i)->tid, &zero, my_tid, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			my_ring = ring_at(i);
			claim_failed = 0;
			pthread_setspecific(ring_key, my_ring);
			return my_ring;
		}
	}
	claim_failed = 1;
	if (count)
		__atomic_fetch_add(&h->no_ring, 1, __ATOMIC_RELAXED);
	return NULL;
}

uint32_t fast_ring_tid(void)
{
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	return my_tid;
}

/* @count: a record that does not fit is a loss (else the caller has
 * another way to deliver it). */
static void *reserve(uint32_t size, struct fvbpf_fast_ring **out, bool count)
{
	struct fvbpf_fast_ring *r = my_ring ? my_ring : claim(count);
	uint64_t head, tail, pos, room, need;
	uint8_t *data;

	if (!r)
		return NULL;
	head = r->head;
	tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	pos = head % FVBPF_FAST_RING_BYTES;
	room = FVBPF_FAST_RING_BYTES - pos;
	need = size <= room ? size : room + size;
	if (head - tail + need > FVBPF_FAST_RING_BYTES) {
		if (count)
			__atomic_fetch_add(&r->drops, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	data = (uint8_t *)(r + 1);
	if (size > room) {
		/* the rest of the ring is a PAD: the consumer skips to 0 */
		data[pos] = FVBPF_FAST_PAD;
		__atomic_store_n(&r->head, head + room, __ATOMIC_RELEASE);
		pos = 0;
	}
	*out = r;
	return data + pos;
}

void *fast_ring_reserve(uint32_t size, struct fvbpf_fast_ring **out)
{
	return reserve(size, out, true);
}

void *fast_ring_try(uint32_t size, struct fvbpf_fast_ring **out)
{
	return reserve(size, out, false);
}

void fast_ring_commit(struct fvbpf_fast_ring *r, uint32_t size)
{
	__atomic_store_n(&r->head, r->head + size, __ATOMIC_RELEASE);
}

uint64_t *fast_ring_counter(size_t off)
{
	return base ? (uint64_t *)(base + off) : NULL;
}

/* A forked child shares the memfd with its parent: it lets go of it (its
 * thread's ring too), so that a request to the child makes its own. */
void fast_ring_atfork_child(void)
{
	if (base)
		munmap(base, FVBPF_FAST_BYTES);
	if (memfd >= 0)
		close(memfd);
	base = NULL;
	memfd = -1;
	my_ring = NULL;
	my_tid = 0;
	claim_failed = 0;
}
