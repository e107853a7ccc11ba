// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The operator fast path's rings as fvbpf reads them (user/pipeline/
 * callback_ops.c): what the target hands over is hostile.  The memfd must be
 * sealed at its size; every record is checked after it is copied out; a
 * ring that makes no sense is skipped to its head and counted, never read
 * past; random bytes never crash it nor loop.  Also the torch version
 * rule (user/proc/torch/torch_version.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach/target.h"
#include "fvbpf_fast.h"
#include "fvbpf_pystack.h"
#include "pipeline/torch/callback_ops.h"
#include "proc/torch/torch_version.h"
#include "unit.h"
#include "pipeline/segment.h"
#include "pipeline/torch/torch_pairing.h"
#include "probes/torch_probes.h"
#include "proc/proc_info.h"

/* A memfd laid out as the library makes it; @seal: sealed at its size. */
static int make_rings(bool seal, uint64_t bytes, uint8_t **map)
{
	struct fvbpf_fast_hdr *h;
	int fd = (int)syscall(SYS_memfd_create, "test-fast", MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)bytes))
		return -1;
	if (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return -1;
	*map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*map == MAP_FAILED)
		return -1;
	h = (struct fvbpf_fast_hdr *)*map;
	h->magic = FVBPF_FAST_MAGIC;
	h->version = FVBPF_FAST_VERSION;
	h->nthreads = FVBPF_FAST_THREADS;
	h->ring_bytes = FVBPF_FAST_RING_BYTES;
	return fd;
}

static struct fvbpf_fast_ring *ring(uint8_t *map, uint32_t i)
{
	return (struct fvbpf_fast_ring *)(map + fvbpf_fast_ring_off(i));
}

/* Where ring @i's next record goes: its head, within the ring. */
static void *at_head(uint8_t *map, uint32_t i)
{
	struct fvbpf_fast_ring *r = ring(map, i);

	return (uint8_t *)(r + 1) + r->head % FVBPF_FAST_RING_BYTES;
}

/* A begin record named @name at the ring's head (no sequence number). */
static struct fvbpf_fast_rec *put_begin(uint8_t *map, uint32_t i, uint8_t kind, uint32_t tid, uint64_t ts,
		      const char *name)
{
	uint32_t len = (uint32_t)strlen(name), size = (FVBPF_FAST_BEGIN_SIZE + len + 7) & ~7u;
	struct fvbpf_fast_rec *rec = at_head(map, i);

	memset(rec, 0, size);
	rec->kind = kind;
	rec->size = (uint16_t)size;
	rec->tid = tid;
	rec->ts_ns = ts;
	rec->name_len = len;
	rec->seq_nr = -1;
	memcpy(rec + 1, name, len);
	ring(map, i)->head += size;
	return rec;
}

static void put_end(uint8_t *map, uint32_t i, uint32_t tid, uint64_t ts)
{
	struct fvbpf_fast_rec *rec = at_head(map, i);

	memset(rec, 0, FVBPF_FAST_END_SIZE);
	rec->kind = FVBPF_FAST_END;
	rec->size = FVBPF_FAST_END_SIZE;
	rec->tid = tid;
	rec->ts_ns = ts;
	ring(map, i)->head += FVBPF_FAST_END_SIZE;
}

/* A STACK record of @n frames (code 0x1000 + 16 i, instr 0x2000 + i). */
static void put_stack(uint8_t *map, uint32_t i, uint32_t tid, uint64_t ts, uint32_t n)
{
	struct fvbpf_fast_stack *rec = at_head(map, i);
	uint64_t *fr = (uint64_t *)(rec + 1);
	uint32_t k;

	memset(rec, 0, sizeof(*rec));
	rec->kind = FVBPF_FAST_STACK;
	rec->size = (uint16_t)(FVBPF_FAST_STACK_SIZE + 16 * n);
	rec->tid = tid;
	rec->ts_ns = ts;
	rec->nframes = n;
	for (k = 0; k < n; k++) {
		fr[2 * k] = 0x1000 + 16 * k;
		fr[2 * k + 1] = 0x2000 + k;
	}
	ring(map, i)->head += rec->size;
}

/* Sealed rings, memset @f open on them; the memfd (close_rings ends all). */
static int open_rings(struct callback_ops *f, uint8_t **map)
{
	int fd;

	memset(f, 0, sizeof(*f));
	fd = make_rings(true, FVBPF_FAST_BYTES, map);
	CHECK_EQ(callback_ops_open(f, getpid(), fd, FVBPF_FAST_BYTES), 0);
	return fd;
}

static void close_rings(struct callback_ops *f, uint8_t *map, int fd)
{
	callback_ops_close(f);
	munmap(map, FVBPF_FAST_BYTES);
	close(fd);
}

static void test_open_refuses(void)
{
	struct callback_ops f;
	uint8_t *map;
	int fd;

	memset(&f, 0, sizeof(f));
	fd = make_rings(false, FVBPF_FAST_BYTES, &map);
	CHECK(fd >= 0);
	CHECK_EQ(callback_ops_open(&f, getpid(), fd, FVBPF_FAST_BYTES), -EPROTO); /* not sealed */
	munmap(map, FVBPF_FAST_BYTES);
	close(fd);
	fd = make_rings(true, FVBPF_FAST_BYTES + 4096, &map);
	CHECK_EQ(callback_ops_open(&f, getpid(), fd, FVBPF_FAST_BYTES), -EPROTO); /* wrong size */
	CHECK_EQ(callback_ops_open(&f, getpid(), fd, FVBPF_FAST_BYTES + 4096), -EPROTO);
	munmap(map, FVBPF_FAST_BYTES + 4096);
	close(fd);
	fd = make_rings(true, FVBPF_FAST_BYTES, &map);
	((struct fvbpf_fast_hdr *)map)->version = 99;
	/* unknown version */
	CHECK_EQ(callback_ops_open(&f, getpid(), fd, FVBPF_FAST_BYTES), -EPROTO);
	CHECK_EQ(callback_ops_open(&f, getpid(), -1, FVBPF_FAST_BYTES), -EPROTO);
	/* stdin: no memfd */
	CHECK_EQ(callback_ops_open(&f, getpid(), 0, FVBPF_FAST_BYTES), -EPROTO);
	CHECK(f.map == NULL);
	munmap(map, FVBPF_FAST_BYTES);
	close(fd);
}

static void test_records_and_stale_data(void)
{
	struct fvbpf_fast_rec rec;
	char name[FVBPF_FAST_NAME + 1];
	struct callback_ops f;
	uint8_t *map;
	int fd;

	memset(&f, 0, sizeof(f));
	fd = make_rings(true, FVBPF_FAST_BYTES, &map);
	put_end(map, 3, 7, 1); /* left by an earlier attach: not ours */
	ring(map, 3)->drops = 5;
	CHECK_EQ(callback_ops_open(&f, getpid(), fd, FVBPF_FAST_BYTES), 0);
	CHECK_EQ(callback_ops_peek(&f, 3, &rec, name), 0);
	put_begin(map, 3, FVBPF_FAST_OP, 42, 100, "aten::addmm")->seq_nr = 17;
	put_end(map, 3, 42, 200);
	CHECK_EQ(callback_ops_peek(&f, 3, &rec, name), 1);
	CHECK_EQ(rec.kind, FVBPF_FAST_OP);
	CHECK_EQ(rec.tid, 42);
	CHECK_EQ(rec.ts_ns, 100);
	CHECK_EQ(rec.seq_nr, 17);
	CHECK_STR(name, "aten::addmm");
	ring(map, 3)->tail += rec.size;
	CHECK_EQ(callback_ops_peek(&f, 3, &rec, name), 1);
	CHECK_EQ(rec.kind, FVBPF_FAST_END);
	ring(map, 3)->tail += rec.size;
	CHECK_EQ(callback_ops_peek(&f, 3, &rec, name), 0);
	ring(map, 3)->drops = 7;
	CHECK_EQ(callback_ops_lost(&f), 2); /* since the attach */
	CHECK_EQ(f.bad, 0);
	callback_ops_close(&f);
	CHECK_EQ(f.ring_drops, 2);
	munmap(map, FVBPF_FAST_BYTES);
	close(fd);
}

/* A record ending the ring is preceded by a PAD: read across the wrap. */
static void test_wrap(void)
{
	struct fvbpf_fast_rec rec, *node;
	char name[FVBPF_FAST_NAME + 1];
	struct callback_ops f;
	struct fvbpf_fast_ring *r;
	uint8_t *map;
	int fd;

	memset(&f, 0, sizeof(f));
	fd = make_rings(true, FVBPF_FAST_BYTES, &map);
	r = ring(map, 0);
	r->head = r->tail = 2ull * FVBPF_FAST_RING_BYTES - 8; /* 8 bytes before the end */
	CHECK_EQ(callback_ops_open(&f, getpid(), fd, FVBPF_FAST_BYTES), 0);
	((uint8_t *)(r + 1))[FVBPF_FAST_RING_BYTES - 8] = FVBPF_FAST_PAD;
	r->head += 8;
	node = put_begin(map, 0, FVBPF_FAST_NODE, 9, 5, "AddmmBackward0");
	node->seq_nr = 3;
	node->fwd_tid = 1;
	CHECK_EQ(callback_ops_peek(&f, 0, &rec, name), 1);
	CHECK_EQ(rec.kind, FVBPF_FAST_NODE);
	CHECK_EQ(rec.seq_nr, 3);
	CHECK_EQ(rec.fwd_tid, 1);
	CHECK_STR(name, "AddmmBackward0");
	CHECK_EQ(r->tail % FVBPF_FAST_RING_BYTES, 0);
	close_rings(&f, map, fd);
}

/* Each broken ring: peek says -1 once, counts it, and the tail is the head. */
static void expect_broken(struct callback_ops *f, uint8_t *map, const char *what)
{
	struct fvbpf_fast_rec rec;
	char name[FVBPF_FAST_NAME + 1];
	uint64_t bad = f->bad;
	int r = callback_ops_peek(f, 1, &rec, name);

	if (r != -1 || f->bad != bad + 1 || ring(map, 1)->tail != ring(map, 1)->head)
		printf("# broken ring not refused: %s (r %d)\n", what, r);
	CHECK_EQ(r, -1);
	CHECK_EQ(f->bad, bad + 1);
	CHECK(ring(map, 1)->tail == ring(map, 1)->head);
}

static struct fvbpf_fast_rec *at_tail(uint8_t *map)
{
	struct fvbpf_fast_ring *r = ring(map, 1);

	return (struct fvbpf_fast_rec *)((uint8_t *)(r + 1) + r->tail % FVBPF_FAST_RING_BYTES);
}

/* The library's own walks: a STACK record comes out as BPF's stack record
 * would, then its operator; broken ones are refused. */
static void test_stack_records(void)
{
	struct fvbpf_fast_rec rec;
	char name[FVBPF_FAST_NAME + 1];
	struct callback_ops f;
	uint8_t *map;
	int fd;

	fd = open_rings(&f, &map);
	put_stack(map, 1, 42, 100, 3);
	put_begin(map, 1, FVBPF_FAST_OP, 42, 100, "aten::linear");
	CHECK_EQ(callback_ops_peek(&f, 1, &rec, name), 2);
	CHECK_EQ(rec.size, FVBPF_FAST_STACK_SIZE + 48);
	CHECK_EQ(f.stack[1].hdr.type, FVBPF_EV_PYSTACK);
	CHECK_EQ(f.stack[1].hdr.size, 32 + 48);
	CHECK_EQ(f.stack[1].hdr.tid, 42);
	CHECK_EQ(f.stack[1].hdr.ts_ns, 100);
	CHECK_EQ(f.stack[1].nframes, 3);
	CHECK_EQ(f.stack[1].flags, 0);
	CHECK_EQ(f.stack[1].frames[2].code, 0x1020);
	CHECK_EQ(f.stack[1].frames[2].instr, 0x2002);
	ring(map, 1)->tail += rec.size;
	CHECK_EQ(callback_ops_peek(&f, 1, &rec, name), 1);
	CHECK_STR(name, "aten::linear");
	ring(map, 1)->tail += rec.size;
	put_stack(map, 1, 42, 200, FVBPF_PY_DEPTH_MAX);
	((struct fvbpf_fast_stack *)at_tail(map))->flags = FVBPF_FAST_CUT;
	CHECK_EQ(callback_ops_peek(&f, 1, &rec, name), 2);
	CHECK_EQ(f.stack[1].nframes, FVBPF_PY_DEPTH_MAX);
	CHECK_EQ(f.stack[1].flags, FVBPF_PYSTACK_CUT);
	ring(map, 1)->tail += rec.size;
	put_stack(map, 1, 1, 1, 0);
	expect_broken(&f, map, "stack of no frame");
	put_stack(map, 1, 1, 1, 2);
	((struct fvbpf_fast_stack *)at_tail(map))->nframes = 3;
	expect_broken(&f, map, "stack with more frames than its size");
	put_stack(map, 1, 1, 1, 2);
	((struct fvbpf_fast_stack *)at_tail(map))->nframes = 1;
	expect_broken(&f, map, "stack with fewer frames than its size");
	put_end(map, 1, 1, 1);
	at_tail(map)->kind = FVBPF_FAST_STACK; /* 16 bytes */
	expect_broken(&f, map, "stack shorter than its fixed part");
	put_stack(map, 1, 1, 1, FVBPF_PY_DEPTH_MAX + 1);
	expect_broken(&f, map, "stack deeper than a walk goes");
	close_rings(&f, map, fd);
}

/* A hooked CUDA call's entry or return (@size: its size field). */
static void put_api(uint8_t *map, uint32_t i, uint8_t kind, uint32_t tid, uint64_t ts,
		    uint16_t size)
{
	struct fvbpf_fast_api *rec = at_head(map, i);
	uint32_t k, room = kind == FVBPF_FAST_API ? FVBPF_FAST_API_SIZE : FVBPF_FAST_API_END_SIZE;

	memset(rec, 0, room);
	rec->kind = kind;
	rec->size = size;
	rec->tid = tid;
	rec->ts_ns = ts;
	if (kind == FVBPF_FAST_API)
		for (k = 0; k < 10; k++)
			rec->args[k] = 0x100 + k;
	else
		((struct fvbpf_fast_api_end *)rec)->ret = 35;
	ring(map, i)->head += room;
}

static void test_api_records(void)
{
	struct fvbpf_fast_rec rec;
	char name[FVBPF_FAST_NAME + 1];
	struct callback_ops f;
	uint8_t *map;
	int fd;

	fd = open_rings(&f, &map);
	put_api(map, 2, FVBPF_FAST_API, 7, 100, FVBPF_FAST_API_SIZE);
	put_api(map, 2, FVBPF_FAST_API_END, 7, 150, FVBPF_FAST_API_END_SIZE);
	CHECK_EQ(callback_ops_peek(&f, 2, &rec, name), 3);
	CHECK_EQ(rec.kind, FVBPF_FAST_API);
	CHECK_EQ(f.api[2].e.tid, 7);
	CHECK_EQ(f.api[2].e.ts_ns, 100);
	CHECK_EQ(f.api[2].e.call, FVBPF_HOOK_LAUNCH_KERNEL);
	CHECK_EQ(f.api[2].e.args[7], 0x107);
	ring(map, 2)->tail += rec.size;
	CHECK_EQ(callback_ops_peek(&f, 2, &rec, name), 3);
	CHECK_EQ(rec.kind, FVBPF_FAST_API_END);
	CHECK_EQ(f.api[2].x.ret, 35);
	CHECK_EQ(f.api[2].x.ts_ns, 150);
	ring(map, 2)->tail += rec.size;
	CHECK_EQ(callback_ops_peek(&f, 2, &rec, name), 0);
	/* sizes other than the two kinds' own are broken rings, as is an
	 * entry cut by the ring's head */
	put_api(map, 1, FVBPF_FAST_API, 1, 1, FVBPF_FAST_API_END_SIZE);
	expect_broken(&f, map, "entry of a return's size");
	put_api(map, 1, FVBPF_FAST_API_END, 1, 1, FVBPF_FAST_API_SIZE);
	expect_broken(&f, map, "return of an entry's size");
	put_api(map, 1, FVBPF_FAST_API, 1, 1, FVBPF_FAST_API_SIZE);
	ring(map, 1)->head -= 8;
	expect_broken(&f, map, "entry past the head");
	close_rings(&f, map, fd);
}

static void test_hostile_rings(void)
{
	struct callback_ops f;
	uint8_t *map;
	int fd;

	fd = open_rings(&f, &map);
	ring(map, 1)->head = ring(map, 1)->tail - 8;
	expect_broken(&f, map, "head behind tail");
	ring(map, 1)->head += 2ull * FVBPF_FAST_RING_BYTES;
	expect_broken(&f, map, "more than a ring unread");
	put_end(map, 1, 1, 1);
	at_tail(map)->size = 0;
	expect_broken(&f, map, "size 0");
	put_end(map, 1, 1, 1);
	at_tail(map)->size = 12;
	expect_broken(&f, map, "size not a multiple of 8");
	put_end(map, 1, 1, 1);
	at_tail(map)->size = 64;
	expect_broken(&f, map, "size past the head");
	put_end(map, 1, 1, 1);
	at_tail(map)->kind = 9;
	expect_broken(&f, map, "unknown kind");
	put_begin(map, 1, FVBPF_FAST_OP, 1, 1, "aten::x");
	at_tail(map)->name_len = FVBPF_FAST_NAME + 1;
	expect_broken(&f, map, "name longer than kept");
	put_begin(map, 1, FVBPF_FAST_OP, 1, 1, "aten::x");
	at_tail(map)->name_len = 40;
	expect_broken(&f, map, "name past its record");
	put_end(map, 1, 1, 1);
	at_tail(map)->kind = FVBPF_FAST_OP; /* a begin of 16 bytes */
	expect_broken(&f, map, "begin shorter than its fixed part");
	put_begin(map, 1, FVBPF_FAST_OP, 1, 1, "aten::x");
	at_tail(map)->size = 24; /* a version 2 begin: no sequence number */
	expect_broken(&f, map, "begin of the fixed part's old size");
	/* a record that would run past the end of the ring */
	ring(map, 1)->head = ring(map, 1)->tail = 3ull * FVBPF_FAST_RING_BYTES - 16;
	put_begin(map, 1, FVBPF_FAST_OP, 1, 1, "aten::x");
	expect_broken(&f, map, "record across the end");
	close_rings(&f, map, fd);
}

/* Random rings: every peek ends (2, 1, 0 or -1), never reads out of the map
 * (ASan), and a ring is never read past its head. */
static void test_random_rings(void)
{
	struct fvbpf_fast_rec rec;
	char name[FVBPF_FAST_NAME + 1];
	struct fvbpf_fast_ring *r;
	struct callback_ops f;
	unsigned int seed = 12345, it, n, i;
	uint8_t *map, *data;
	int fd, ret, steps;

	fd = open_rings(&f, &map);
	r = ring(map, 2);
	data = (uint8_t *)(r + 1);
	for (it = 0; it < 3000; it++) {
		n = 64 + rand_r(&seed) % 512;
		r->tail = (uint64_t)rand_r(&seed) * 8;
		for (i = 0; i < n; i++)
			data[(r->tail + i) % FVBPF_FAST_RING_BYTES] = (uint8_t)rand_r(&seed);
		if (rand_r(&seed) % 4 == 0)
			((struct fvbpf_fast_rec *)(data + r->tail % FVBPF_FAST_RING_BYTES))->size =
				(uint16_t)(8 * (rand_r(&seed) % 40)); /* plausible, at ring 2's tail */
		r->head = r->tail + (rand_r(&seed) % 3 ? n & ~7u : (uint64_t)rand_r(&seed));
		for (steps = 0; steps < 1000; steps++) {
			ret = callback_ops_peek(&f, 2, &rec, name);
			if (ret != 1 && ret != 2)
				break;
			if (ret == 2)
				CHECK(f.stack[2].nframes >= 1 && f.stack[2].nframes <= FVBPF_PY_DEPTH_MAX &&
				      rec.size == FVBPF_FAST_STACK_SIZE + 16 * f.stack[2].nframes);
			CHECK(rec.size >= FVBPF_FAST_END_SIZE && rec.size <= r->head - r->tail);
			CHECK(strlen(name) <= FVBPF_FAST_NAME || rec.kind == FVBPF_FAST_END);
			r->tail += rec.size;
		}
		CHECK(steps < 1000);
	}
	close_rings(&f, map, fd);
}

/*
 * The library follows segments from its answer on, fvbpf from its attach:
 * what came before the attach is in no segment.  An operator begun before
 * it is skipped, and so is its end, once nothing begun since is open on its
 * thread; one begun after it (inside the first) is delivered whole.
 */
static void test_records_before_the_attach(void)
{
	static struct session s;
	struct session_target *t;
	uint8_t *map;
	int fd;

	memset(&s, 0, sizeof(s));
	s.epfd = -1;
	s.reg = registry__new();
	s.torch = torch_table__new();
	CHECK(s.reg != NULL && s.torch != NULL);
	registry_init(s.reg);
	s.window_region = registry_add(s.reg, "window", "time window");
	CHECK(s.window_region >= 0);
	s.reg->defs[s.window_region].enabled = true;
	name_table_init(&s.knames);
	torch_table_init(s.torch, &s.knames);
	s.targets = calloc(1, sizeof(*s.targets));
	CHECK(s.targets != NULL);
	s.ntargets = 1;
	t = &s.targets[0];
	CHECK_EQ(target_states_alloc(t), 0);
	t->session = &s;
	t->pidfd = -1;
	t->proc->pid = getpid();
	target_init(t, 0);
	fd = open_rings(t->fast, &map);
	put_begin(map, 0, FVBPF_FAST_OP, 7, 900, "aten::early"); /* the library ran ahead */
	ring(map, 0)->drops = 3;                                  /* and lost some then */
	callback_ops_rebase(t->fast, 1000);                          /* the attach */
	put_begin(map, 0, FVBPF_FAST_OP, 7, 950, "aten::early2"); /* stamped before it */
	CHECK_EQ(seg_on_begin(t->tracker, 7, (uint32_t)s.window_region, 1000), 0);
	put_begin(map, 0, FVBPF_FAST_OP, 7, 1100, "aten::inner");
	put_end(map, 0, 7, 1200);  /* inner's */
	put_end(map, 0, 7, 1300);  /* early2's */
	callback_ops_drain(&s, t, UINT64_MAX);
	CHECK_EQ(t->fast->records, 2);
	CHECK_EQ(t->fast->early, 1);
	CHECK_EQ(t->tpair->unmatched, 0);
	CHECK_EQ(callback_ops_lost(t->fast), 0);
	CHECK(t->tracker->cur != NULL);
	CHECK_EQ(t->tracker->cur->nops, 1);
	CHECK_EQ(t->tracker->cur->ops[0].start_ns, 1100);
	CHECK_EQ(t->tracker->cur->ops[0].end_ns, 1200);
	callback_ops_close(t->fast);
	CHECK_EQ(t->fast->outside, 1); /* the skipped begin, outside every segment */
	munmap(map, FVBPF_FAST_BYTES);
	close(fd);
	session_free(&s);
}

static void test_torch_version(void)
{
	char v[40];

	CHECK_EQ(torch_version_parse("__version__ = '2.14.1+cu130'\ndebug = False\n", v, sizeof(v)), 0);
	CHECK_STR(v, "2.14.1+cu130");
	CHECK_EQ(torch_version_layout(v), FVBPF_FAST_LAYOUT_TORCH2);
	CHECK_EQ(torch_version_parse("x\n__version__ = '2.13.0'\n", v, sizeof(v)), 0);
	CHECK_EQ(torch_version_layout(v), FVBPF_FAST_LAYOUT_TORCH2);
	CHECK_EQ(torch_version_parse("__version__ = '2.15.0'", v, sizeof(v)), 0);
	CHECK_EQ(torch_version_layout(v), 0); /* not checked: uprobes */
	CHECK_EQ(torch_version_layout("1.13.1"), 0);
	CHECK_EQ(torch_version_layout("2.1.0"), 0);
	CHECK_EQ(torch_version_parse("__version__ = '2.14.1\x1b[31m'", v, sizeof(v)), -ENOENT);
	CHECK_EQ(torch_version_parse("__version__ = '2.14.1", v, sizeof(v)), -ENOENT);
	CHECK_EQ(torch_version_parse("__version__ = ''", v, sizeof(v)), -ENOENT);
	CHECK_EQ(torch_version_parse("version = '2.14.1'", v, sizeof(v)), -ENOENT);
	CHECK_EQ(torch_version_parse("__version__ = '2.14.1.2.3.4.5.6.7.8.9'", v, 8), -ENOENT);
}

int main(void)
{
	RUN(test_open_refuses);
	RUN(test_records_and_stale_data);
	RUN(test_stack_records);
	RUN(test_api_records);
	RUN(test_wrap);
	RUN(test_hostile_rings);
	RUN(test_random_rings);
	RUN(test_records_before_the_attach);
	RUN(test_torch_version);
	UNIT_DONE();
}
