// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * fvbpf dump's pure parts on memory built here: the "remote" interpreter is
 * this process's own heap, read through process_vm_readv as a target's
 * would be (3.11's layout).  Walks of good, cyclic, unmapped and changing
 * frame chains; hostile thread lists; locals, tuples, dicts and cells; the
 * collective and its group from c10d's frames; /proc parsing; the verdict;
 * both writers on hostile names.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dump/dump.h"
#include "dump/frames_say.h"
#include "dump/native.h"
#include "dump/py_frames.h"
#include "dump/py_guess.h"
#include "dump/py_obj.h"
#include "dump/py_walk.h"
#include "dump/verdict.h"
#include "strict_json.h"
#include "unit.h"

/* 3.11's offsets (user/proc/python/py_runtime.c) */
#define RT_INTERP_HEAD 40
#define IN_THREADS 16
#define TS_NEXT 8
#define TS_INTERP 16
#define TS_CFRAME 56
#define TS_NATIVE_TID 160
#define CF_CURRENT 8
#define FR_CODE 32
#define FR_PREVIOUS 48
#define FR_INSTR 56
#define CO_ARGCOUNT 56
#define CO_FIRSTLINE 72
#define CO_LOCALSPLUSNAMES 96
#define CO_FILENAME 112
#define CO_NAME 120
#define CO_QUALNAME 128
#define CO_LINETABLE 136
#define CO_CODE 184

static uint8_t runtime[1024], code_type[64], str_type[64], bytes_type[64];
static uint8_t tuple_type[64], dict_type[64], cell_type[64], none_type[64], pg_type[64];
static uint8_t none_obj[32];
static struct py_runtime rt;

/* The fake interpreter's memory, freed at the end (LeakSanitizer). */
static void *arena[8192];
static unsigned int narena;

static void *fcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p && narena < sizeof(arena) / sizeof(arena[0]))
		arena[narena++] = p;
	return p;
}

static void arena_free(void)
{
	while (narena)
		free(arena[--narena]);
}

static void put(void *base, size_t off, const void *v)
{
	memcpy((uint8_t *)base + off, &v, sizeof(v));
}

static void put_u64(void *base, size_t off, uint64_t v)
{
	memcpy((uint8_t *)base + off, &v, sizeof(v));
}

static void set_type(uint8_t *type, const char *name)
{
	put(type, 24, name); /* tp_name */
}

static void setup(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	set_type(tuple_type, "tuple");
	set_type(dict_type, "dict");
	set_type(cell_type, "cell");
	set_type(none_type, "NoneType");
	set_type(pg_type, "ProcessGroup");
	set_type(str_type, "str");
	put(none_obj, 8, none_type);
	rt.pid = getpid();
	rt.runtime = (uint64_t)(uintptr_t)runtime;
	rt.code_type = (uint64_t)(uintptr_t)code_type;
	rt.unicode_type = (uint64_t)(uintptr_t)str_type;
	rt.bytes_type = (uint64_t)(uintptr_t)bytes_type;
	rt.version = 0x030b07f0;
	rt.lay = py_layout_for(3, 11);
}

static void *make_str(const char *text)
{
	uint8_t *s = fcalloc(1, 48 + strlen(text) + 1);
	uint64_t len = strlen(text);
	uint32_t state = 0x20 | 0x40 | (1 << 2); /* compact ASCII, kind 1 */

	put(s, 8, str_type);
	memcpy(s + 16, &len, 8);
	memcpy(s + 32, &state, 4);
	memcpy(s + 48, text, len);
	return s;
}

/* A line table of one entry: 8 code units on the first line + @delta. */
static void *make_table(int delta)
{
	uint8_t *b = fcalloc(1, 64);
	uint64_t len = 3;

	put(b, 8, bytes_type);
	memcpy(b + 16, &len, 8);
	b[32] = (uint8_t)(0x80 | ((10 + delta) << 3) | 7);
	b[34] = 1;
	return b;
}

static void *make_tuple(unsigned int n, void *const *items)
{
	uint8_t *t = fcalloc(1, 24 + 8 * n + 8);
	unsigned int i;

	put(t, 8, tuple_type);
	put_u64(t, 16, n);
	for (i = 0; i < n; i++)
		put(t, 24 + 8 * i, items[i]);
	return t;
}

static uint8_t *make_code(const char *file, const char *name, int first, int delta)
{
	uint8_t *c = fcalloc(1, 256);
	int32_t f = first;

	put(c, 8, code_type);
	memcpy(c + CO_FIRSTLINE, &f, 4);
	put(c, CO_FILENAME, make_str(file));
	put(c, CO_NAME, make_str(name));
	put(c, CO_QUALNAME, make_str(name));
	put(c, CO_LINETABLE, make_table(delta));
	put(c, CO_LOCALSPLUSNAMES, make_tuple(0, NULL));
	return c;
}

/* 80 bytes of _PyInterpreterFrame and room for 8 locals. */
static uint8_t *make_frame(void *code, unsigned int unit, void *previous)
{
	uint8_t *f = fcalloc(1, 72 + 8 * 8);

	put(f, FR_CODE, code);
	put_u64(f, FR_INSTR, (uint64_t)(uintptr_t)code + CO_CODE + 2 * unit);
	put(f, FR_PREVIOUS, previous);
	return f;
}

static uint8_t *interp, *cframe, *ts;

/* One thread state (this thread) whose innermost frame is @top. */
static void build(void *top)
{
	uint64_t tid = (uint64_t)gettid();

	setup();
	interp = fcalloc(1, 64);
	cframe = fcalloc(1, 64);
	ts = fcalloc(1, 256);
	put(runtime, RT_INTERP_HEAD, interp);
	put(interp, IN_THREADS, ts);
	put(ts, TS_INTERP, interp);
	put_u64(ts, TS_NATIVE_TID, tid);
	put(ts, TS_CFRAME, cframe);
	put(cframe, CF_CURRENT, top);
}

static void test_walk_good(void)
{
	uint8_t *inner = make_code("/m/model.py", "inner", 10, 1), *outer = make_code("/m/model.py", "outer", 20, 0);
	struct dump_thread t = { 0 };
	struct pyw_stack *st;
	struct pyw_list list;
	struct pyf_cache *c;
	int n;

	build(make_frame(inner, 1, make_frame(outer, 0, NULL)));
	n = pyw_threads(&rt, &st, &list);
	CHECK_EQ(n, 1);
	if (n != 1)
		return;
	CHECK_EQ(st[0].tid, gettid());
	CHECK_EQ(st[0].nframes, 2);
	CHECK_EQ(st[0].flags, 0);
	CHECK_EQ(st[0].tries, 1);
	c = pyf_cache_new(&rt);
	CHECK_EQ(pyf_resolve(c, &st[0], &t), 0);
	CHECK_EQ(t.nframes, 2);
	CHECK_STR(t.frames[0].function, "inner");
	CHECK_STR(t.frames[0].file, "/m/model.py");
	CHECK_EQ(t.frames[0].line, 11);
	CHECK_EQ(t.frames[0].first_line, 10);
	CHECK_STR(t.frames[1].function, "outer");
	CHECK_EQ(t.frames[1].line, 20);
	dump_frames_free(t.frames, t.nframes);
	pyf_cache_free(c);
	free(st);
}

static void test_walk_cycle(void)
{
	uint8_t *code = make_code("/m/model.py", "loop", 10, 0);
	uint8_t *a = make_frame(code, 0, NULL), *b = make_frame(code, 0, a);
	struct pyw_stack *st;
	struct pyw_list list;

	put(a, FR_PREVIOUS, b); /* each the other's caller */
	build(b);
	CHECK_EQ(pyw_threads(&rt, &st, &list), 1);
	CHECK_EQ(st[0].nframes, PYW_DEPTH_MAX);
	CHECK(st[0].flags & PYW_CUT);
	free(st);
}

static void test_walk_unmapped(void)
{
	uint8_t *code = make_code("/m/model.py", "f", 10, 0);
	void *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct dump_thread t = { 0 };
	struct pyw_stack *st;
	struct pyw_list list;
	struct pyf_cache *c;

	CHECK(gone != MAP_FAILED);
	munmap(gone, 4096);
	/* the innermost frame's code object is unmapped too */
	build(make_frame(gone, 0, make_frame(code, 0, (uint8_t *)gone + 64)));
	CHECK_EQ(pyw_threads(&rt, &st, &list), 1);
	CHECK_EQ(st[0].nframes, 2);
	CHECK(st[0].flags & PYW_FAULT);
	c = pyf_cache_new(&rt);
	CHECK_EQ(pyf_resolve(c, &st[0], &t), 0);
	CHECK(t.frames[0].unreadable);
	CHECK(!strncmp(t.frames[0].function, "[unreadable code 0x", 19));
	CHECK_STR(t.frames[1].function, "f");
	dump_frames_free(t.frames, t.nframes);
	pyf_cache_free(c);
	free(st);
}

static atomic_int flipping;
static uint8_t *flip_top, *flip_mid, *flip_base, *flip_code[5];

/*
 * Returns and calls, as CPython makes them: both frames return (the
 * thread's current frame is main's), a new call is pushed at the middle
 * frame's address and then one at the innermost's, rewritten in place: a
 * over a2 or b over b2, the innermost one's instruction never the same
 * twice.
 */
/* A store the other thread sees in program order (and the compiler keeps). */
static void vput(void *base, size_t off, uint64_t v)
{
	__atomic_store_n((uint64_t *)(void *)((uint8_t *)base + off), v, __ATOMIC_SEQ_CST);
}

static void *flipper(void *arg)
{
	uint64_t n = 0;

	(void)arg;
	while (atomic_load(&flipping)) {
		n++;
		vput(cframe, CF_CURRENT, (uintptr_t)flip_base);
		vput(flip_mid, FR_CODE, (uintptr_t)flip_code[(n & 1) * 2 + 1]);
		vput(cframe, CF_CURRENT, (uintptr_t)flip_mid);
		vput(flip_top, FR_CODE, (uintptr_t)flip_code[(n & 1) * 2]);
		vput(flip_top, FR_INSTR, (uintptr_t)flip_code[(n & 1) * 2] + CO_CODE + (n << 8));
		vput(cframe, CF_CURRENT, (uintptr_t)flip_top);
	}
	return NULL;
}

/* @st is one of the chains the flipper makes: [main], [x2, main], [x, x2, main]. */
static bool whole_chain(const struct pyw_stack *st)
{
	uint64_t c[3] = { 0 };
	unsigned int i, k;

	for (i = 0; i < st->nframes && i < 3; i++)
		c[i] = st->frames[i].code;
	if (!st->nframes || st->nframes > 3 || c[st->nframes - 1] != (uintptr_t)flip_code[4])
		return false;
	for (k = 0; k < 2; k++) {
		if (st->nframes == 2 && c[0] == (uintptr_t)flip_code[2 * k + 1])
			return true;
		if (st->nframes == 3 && c[0] == (uintptr_t)flip_code[2 * k] &&
		    c[1] == (uintptr_t)flip_code[2 * k + 1])
			return true;
	}
	return st->nframes == 1;
}

static void test_walk_torn(void)
{
	struct pyw_stack *st = calloc(1, sizeof(*st));
	unsigned int i, torn = 0, mixed = 0, whole = 0, retried = 0;
	pthread_t th;

	flip_code[0] = make_code("/m/a.py", "a", 10, 0);
	flip_code[1] = make_code("/m/a.py", "a2", 20, 0);
	flip_code[2] = make_code("/m/b.py", "b", 30, 0);
	flip_code[3] = make_code("/m/b.py", "b2", 40, 0);
	flip_code[4] = make_code("/m/main.py", "main", 1, 0);
	flip_base = make_frame(flip_code[4], 0, NULL);
	flip_mid = make_frame(flip_code[1], 0, flip_base);
	flip_top = make_frame(flip_code[0], 0, flip_mid);
	build(flip_top);
	st->tstate = (uint64_t)(uintptr_t)ts;
	atomic_store(&flipping, 1);
	CHECK_EQ(pthread_create(&th, NULL, flipper, NULL), 0);
	for (i = 0; i < 20000; i++) {
		pyw_walk(&rt, st);
		CHECK(st->tries >= 1 && st->tries <= PYW_TRIES);
		retried += st->tries > 1;
		if (st->flags & PYW_TORN)
			torn++;
		else if (whole_chain(st)) /* a walk kept is one moment's chain */
			whole++;
		else
			mixed++;
	}
	atomic_store(&flipping, 0);
	pthread_join(th, NULL);
	printf("# 20000 walks of a changing stack: %u whole, %u kept as torn, %u retried, "
	       "%u mixed\n", whole, torn, retried, mixed);
	CHECK_EQ(mixed, 0);
	CHECK(retried > 0); /* the stack did change under the walks */
	free(st);
}

static void test_thread_list_hostile(void)
{
	uint8_t *code = make_code("/m/model.py", "f", 10, 0), *other;
	struct pyw_stack *st;
	struct pyw_list list;

	build(make_frame(code, 0, NULL));
	put(ts, TS_NEXT, ts); /* a cycle */
	CHECK_EQ(pyw_threads(&rt, &st, &list), 1);
	CHECK_EQ(list.cut, 1);
	free(st);
	/* a second state naming another interpreter: kept out, counted */
	other = fcalloc(1, 256);
	put(other, TS_INTERP, cframe);
	put(ts, TS_NEXT, other);
	CHECK_EQ(pyw_threads(&rt, &st, &list), 1);
	CHECK(list.bad >= 1);
	free(st);
	/* an unreadable thread list */
	put(interp, IN_THREADS, (void *)0x10);
	CHECK_EQ(pyw_threads(&rt, &st, &list), -EFAULT);
}

/* A dict of str keys (3.11's PyDictKeysObject, kind 1: {key, value}). */
static void *make_dict(unsigned int n, const char *const *keys, void *const *values)
{
	uint8_t *d = fcalloc(1, 64), *k = fcalloc(1, 32 + 8 + 16 * n + 16);
	unsigned int i;

	put(d, 8, dict_type);
	put_u64(d, 16, n);
	put(d, 32, k);
	k[8] = 3;  /* dk_log2_size */
	k[9] = 3;  /* dk_log2_index_bytes: 8 bytes of indices */
	k[10] = 1; /* unicode keys */
	put_u64(k, 24, n);
	for (i = 0; keys && i < n; i++) {
		put(k, 32 + 8 + 16 * i, make_str(keys[i]));
		put(k, 32 + 8 + 16 * i + 8, values[i]);
	}
	return d;
}

static void *make_cell(void *v)
{
	uint8_t *c = fcalloc(1, 32);

	put(c, 8, cell_type);
	put(c, 16, v);
	return c;
}

static void test_objects(void)
{
	const char *keys[] = { "async_op", "group" };
	uint8_t *pg = fcalloc(1, 32), *code = make_code("/m/x.py", "f", 1, 0), *frame;
	void *names[] = { make_str("tensor"), make_str("op"), make_str("group") };
	void *vals[] = { none_obj, pg };
	struct pyw_frame f;
	uint64_t v;
	char text[64];

	setup();
	put(pg, 8, pg_type);
	put(code, CO_LOCALSPLUSNAMES, make_tuple(3, names));
	frame = make_frame(code, 0, NULL);
	put(frame, 72 + 16, pg);
	f.addr = (uintptr_t)frame;
	f.code = (uintptr_t)code;
	CHECK_EQ(pyo_local(&rt, &f, "group", &v), 0);
	CHECK_EQ(v, (uintptr_t)pg);
	CHECK_EQ(pyo_local(&rt, &f, "op", &v), -ENOENT); /* unbound: NULL */
	CHECK_EQ(pyo_local(&rt, &f, "nothere", &v), -ENOENT);
	CHECK_EQ(pyo_type_name(&rt, (uintptr_t)pg, text, sizeof(text)), 0);
	CHECK_STR(text, "ProcessGroup");
	CHECK(pyo_is(&rt, (uintptr_t)none_obj, "NoneType"));
	CHECK_EQ(pyo_dict_get(&rt, (uintptr_t)make_dict(2, keys, vals), "group", &v), 0);
	CHECK_EQ(v, (uintptr_t)pg);
	CHECK_EQ(pyo_dict_get(&rt, (uintptr_t)make_dict(2, keys, vals), "other", &v), -ENOENT);
	CHECK_EQ(pyo_dict_get(&rt, (uintptr_t)pg, "group", &v), -EINVAL); /* not a dict */
	CHECK_EQ(pyo_tuple_item(&rt, (uintptr_t)make_tuple(3, names), 2, &v), 0);
	CHECK_EQ(pyo_text(&rt, v, text, sizeof(text)), 0);
	CHECK_STR(text, "group");
	CHECK_EQ(pyo_tuple_item(&rt, (uintptr_t)make_tuple(3, names), 3, &v), -ENOENT);
	CHECK_EQ(pyo_cell(&rt, (uintptr_t)make_cell(pg), &v), 0);
	CHECK_EQ(v, (uintptr_t)pg);
	CHECK_EQ(pyo_cell(&rt, (uintptr_t)pg, &v), -EINVAL);
	/* a dict claiming 2^40 entries is refused; 1000 are looked through
	 * PYO_DICT_MAX at most (past the two real ones: garbage, not keys) */
	{
		uint8_t *d = make_dict(2, keys, vals), *k;

		memcpy(&k, d + 32, 8);
		put_u64(k, 24, 1ull << 40);
		CHECK_EQ(pyo_dict_get(&rt, (uintptr_t)d, "nothere", &v), -EINVAL);
		d = make_dict(PYO_DICT_MAX + 8, NULL, NULL);
		CHECK(pyo_dict_get(&rt, (uintptr_t)d, "nothere", &v) == -ENOENT);
	}
}

/* all_reduce <- c10d's wrapper(*args, **kwargs) <- train: the group. */
static const char *group_for(void *args, void *kwargs)
{
	static char group[DUMP_NAME_LEN];
	void *cnames[] = { make_str("tensor"), make_str("op"), make_str("group"), make_str("async_op") };
	void *wnames[] = { make_str("args"), make_str("kwargs"), make_str("func") };
	uint8_t *coll = make_code("/v/torch/distributed/distributed_c10d.py", "all_reduce", 3800, 0);
	uint8_t *wrap = make_code("/v/torch/distributed/c10d_logger.py",
				  "_exception_logger.<locals>.wrapper", 75, 0);
	uint8_t *user = make_code("/job/train.py", "step", 40, 2), *fw;
	struct dump_thread t = { 0 };
	struct pyw_stack *st;
	struct pyw_list list;
	struct pyf_cache *c;
	int32_t argc = 4;

	put(coll, CO_LOCALSPLUSNAMES, make_tuple(4, cnames));
	memcpy(coll + CO_ARGCOUNT, &argc, 4);
	put(wrap, CO_LOCALSPLUSNAMES, make_tuple(3, wnames));
	fw = make_frame(wrap, 0, make_frame(user, 0, NULL));
	put(fw, 72, args);
	put(fw, 80, kwargs);
	build(make_frame(coll, 0, fw));
	if (pyw_threads(&rt, &st, &list) != 1)
		return "?";
	c = pyf_cache_new(&rt);
	pyf_resolve(c, &st[0], &t);
	frames_say(&rt, &st[0], &t);
	CHECK_EQ(t.coll_frame, 0);
	CHECK_STR(t.collective, "all_reduce");
	snprintf(group, sizeof(group), "%s", t.group);
	dump_frames_free(t.frames, t.nframes);
	pyf_cache_free(c);
	free(st);
	return group;
}

static void test_collective_group(void)
{
	uint8_t *pg = fcalloc(1, 32), *tensor = fcalloc(1, 32);
	const char *k1[] = { "group" };
	void *none[] = { none_obj }, *given[] = { pg };
	void *one[] = { tensor }, *three[] = { tensor, none_obj, pg };

	setup();
	put(pg, 8, pg_type);
	CHECK_STR(group_for(make_tuple(1, one), make_dict(0, NULL, NULL)), "default");
	CHECK_STR(group_for(make_tuple(1, one), make_dict(1, k1, none)), "default");
	CHECK_STR(group_for(make_tuple(1, one), make_dict(1, k1, given)), "non-default");
	CHECK_STR(group_for(make_tuple(3, three), make_dict(0, NULL, NULL)), "non-default");
	/* arguments that are not what c10d keeps: no group said */
	CHECK_STR(group_for(pg, pg), "");
	CHECK(frames_is_collective("/x/torch/distributed/distributed_c10d.py", "barrier"));
	CHECK(!frames_is_collective("/x/torch/distributed/distributed_c10d.py", "get_rank"));
	CHECK(!frames_is_collective("/x/mine/distributed_c10d.py", "barrier"));
}

static void test_proc_parsing(void)
{
	struct dump_native n = { 0 };
	uint64_t ns;

	CHECK_EQ(native_parse_syscall("202 0x7f00 0x80 0x0 0x0 0x0 0x0 0x7ffd10 0x7f1234\n", &n), 0);
	CHECK_EQ(n.call, NATIVE_SYSCALL);
	CHECK_EQ(n.nr, 202);
	CHECK_EQ(n.args[0], 0x7f00);
	CHECK_EQ(n.sp, 0x7ffd10);
	CHECK_EQ(n.pc, 0x7f1234);
	CHECK_EQ(native_parse_syscall("running\n", &n), 0);
	CHECK_EQ(n.call, NATIVE_RUNNING);
	CHECK_EQ(native_parse_syscall("-1 0x10 0x20\n", &n), 0);
	CHECK_EQ(n.call, NATIVE_NOT_IN_SYSCALL);
	CHECK_EQ(native_parse_syscall("202 0x1 0x2\n", &n), -EINVAL);
	CHECK_EQ(native_parse_syscall("", &n), -EINVAL);
	CHECK_EQ(native_parse_syscall("-7 0x1 0x2", &n), -EINVAL);
	CHECK_EQ(native_parse_exec_start("x (1, #threads: 1)\n---\nse.exec_start   :   8192493.455204\n", &ns), 0);
	CHECK_EQ(ns, 8192493455204ull);
	CHECK_EQ(native_parse_exec_start("x (1, #threads: 1)\n---\nse.exec_start : 12.5\n", &ns), 0);
	CHECK_EQ(ns, 12500000ull);
	/* the first line is the thread's comm: nothing there counts */
	CHECK_EQ(native_parse_exec_start("\nse.exec_start:1 (1, #threads: 1)\n---\n", &ns), -EINVAL);
	CHECK_EQ(native_parse_exec_start("\n---\nse.exec_star (1, #threads: 1)\n------\n"
					 "se.exec_start : 5.000000\n", &ns), 0);
	CHECK_EQ(ns, 5000000ull);
	CHECK_EQ(native_parse_exec_start("no\n---\nse.exec_start : 99999999999999999999999\n", &ns),
		 -EINVAL);
	CHECK(native_call_name(&(struct dump_native){ .call = NATIVE_SYSCALL, .nr = 230 },
			       (char[32]){ 0 }, 32) != NULL);
}

static void test_guess(void)
{
	CHECK_EQ(py_guess_from_name("/usr/lib/libpython3.9.so.1.0"), 0x03090000);
	CHECK_EQ(py_guess_from_name("/usr/bin/python3.8"), 0x03080000);
	CHECK_EQ(py_guess_from_name("/x/libpython3.14d.so"), 0x030e0000);
	CHECK_EQ(py_guess_from_name("/usr/bin/python3"), 0);
	CHECK_EQ(py_guess_from_name("/usr/bin/python3.x"), 0);
	CHECK_EQ(py_guess_from_name("/usr/bin/python3.9-config"), 0);
}

static struct dump_frame frame_of(const char *fn, const char *file, int line)
{
	struct dump_frame f = { 0 };

	f.function = strdup(fn);
	f.file = strdup(file);
	f.line = line;
	f.first_line = line > 1 ? line - 1 : 1;
	return f;
}

/* A process of rank @rank whose main thread is in @fn (a collective when
 * @coll), blocked in syscall @nr. */
static void fake_proc(struct dump_proc *p, int rank, int world, const char *fn, bool coll, long nr)
{
	struct dump_thread *t = calloc(2, sizeof(*t));

	memset(p, 0, sizeof(*p));
	p->pid = 1000 + rank;
	p->rank = rank;
	p->rank_from_env = true;
	p->world_size = world;
	p->py = DUMP_PY_OK;
	snprintf(p->name, sizeof(p->name), "rank %d", rank);
	snprintf(p->comm, sizeof(p->comm), "python3");
	p->threads = t;
	p->nthreads = 2;
	t[0].tid = p->pid;
	t[0].python = true;
	t[0].nat.state = 'S';
	t[0].nat.call = NATIVE_SYSCALL;
	t[0].nat.nr = nr;
	t[0].nat.off_cpu_ns = 12000000000ll;
	t[0].nat.cpu = 0;
	t[0].frames = calloc(2, sizeof(*t[0].frames));
	t[0].frames[0] = coll ? frame_of(fn, "/v/torch/distributed/distributed_c10d.py", 3913)
			      : frame_of(fn, "/job/train.py", 42);
	t[0].frames[1] = frame_of("main", "/job/train.py", 60);
	t[0].nframes = 2;
	t[0].coll_frame = coll ? 0 : -1;
	if (coll) {
		snprintf(t[0].collective, sizeof(t[0].collective), "%s", fn);
		snprintf(t[0].group, sizeof(t[0].group), "default");
	}
	t[1].tid = p->pid + 100;
	t[1].coll_frame = -1;
	t[1].nat.state = 'R';
	t[1].nat.call = NATIVE_RUNNING;
	t[1].nat.off_cpu_ns = -1;
	snprintf(t[1].name, sizeof(t[1].name), "pt_gloo_runloop");
}

static struct dump *fake_dump(unsigned int n, int world, const char *const *fns, const bool *coll)
{
	struct dump *d = calloc(1, sizeof(*d));
	unsigned int i;

	d->procs = calloc(n, sizeof(*d->procs));
	d->nprocs = n;
	for (i = 0; i < n; i++)
		fake_proc(&d->procs[i], (int)i, world, fns[i], coll[i], coll[i] ? 202 : 230);
	CHECK_EQ(verdict_make(d), 0);
	return d;
}

static void test_verdict(void)
{
	const char *fns[] = { "all_reduce", "stall_here", "all_reduce", "barrier" };
	const bool hung[] = { true, false, true, true }, all[] = { true, true, true, true };
	const char *same[] = { "all_reduce", "all_reduce", "all_reduce", "all_reduce" };
	const bool none[] = { false, false, false, false };
	struct dump *d;

	d = fake_dump(3, 3, fns, hung);
	CHECK_STR(d->v.line, "ranks 0, 2 wait in all_reduce (group default); rank 1 is absent: in "
			     "stall_here at train.py:42, blocked in clock_nanosleep for 12.0 s");
	CHECK_EQ(d->v.nwait, 2);
	CHECK_EQ(d->v.nabsent, 1);
	CHECK_EQ(d->v.absent[0].rank, 1);
	dump_free(d);
	/* rank 3 in another collective, rank 4 of the world not dumped */
	d = fake_dump(4, 5, fns, hung);
	CHECK_EQ(d->v.nwait, 2);
	CHECK_EQ(d->v.nabsent, 3);
	CHECK_EQ(d->v.absent[2].proc, -1);
	CHECK_EQ(d->v.absent[2].rank, 4);
	CHECK(strstr(d->v.line, "3 ranks are absent: rank 1 in stall_here at train.py:42") != NULL);
	CHECK(strstr(d->v.line, "rank 3 in barrier (group default) at distributed_c10d.py:3913") != NULL);
	CHECK(strstr(d->v.line, "rank 4 not dumped") != NULL);
	dump_free(d);
	d = fake_dump(4, 4, same, all);
	CHECK_STR(d->v.line, "ranks 0-3 all wait in all_reduce (group default): none is absent");
	dump_free(d);
	d = fake_dump(2, 2, fns, none);
	CHECK_STR(d->v.line, "no rank waits in a collective");
	CHECK(!d->v.waiting);
	dump_free(d);
}

/* Every line of @text is plain: no control or invisible character. */
static bool plain_lines(char *text)
{
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (ref_has_control(line, 0) || !ref_utf8_valid(line, strlen(line)))
			return false;
	return true;
}

static void test_writers_hostile(void)
{
	const char *fns[] = { "all_reduce", "evil\x1b[2J\nfvbpf: forged\xff\xfe\xe2\x80\xae", "all_reduce" };
	const bool hung[] = { true, false, true };
	struct dump *d = fake_dump(3, 3, fns, hung);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	free(d->procs[1].threads[0].frames[1].file);
	d->procs[1].threads[0].frames[1].file = strdup("/job/\x07\x9b" "bad\xc0\xaf.py");
	snprintf(d->procs[1].threads[1].name, sizeof(d->procs[1].threads[1].name), "t\x1b]0;x\x07");
	snprintf(d->procs[1].cmdline, sizeof(d->procs[1].cmdline), "python3 \x1b[31mred\r\n");
	snprintf(d->host, sizeof(d->host), "h\x1b");
	verdict_free(&d->v);
	CHECK_EQ(verdict_make(d), 0);
	f = open_memstream(&buf, &len);
	CHECK_EQ(dump_write_text(d, f), 0);
	fclose(f);
	CHECK(len > 0 && !memchr(buf, '\x1b', len) && !memchr(buf, '\r', len));
	CHECK(strstr(buf, "fvbpf: forged") == NULL || strstr(buf, "\nfvbpf: forged") == NULL);
	CHECK(plain_lines(buf));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	CHECK_EQ(dump_write_json(d, f), 0);
	fclose(f);
	CHECK(strict_json_ok(buf, len));
	CHECK(strstr(buf, "\"waiting_ranks\":[") || strstr(buf, "\"waiting_ranks\": ["));
	free(buf);
	dump_free(d);
}

int main(void)
{
	RUN(test_walk_good);
	RUN(test_walk_cycle);
	RUN(test_walk_unmapped);
	RUN(test_walk_torn);
	RUN(test_thread_list_hostile);
	RUN(test_objects);
	RUN(test_collective_group);
	RUN(test_proc_parsing);
	RUN(test_guess);
	RUN(test_verdict);
	RUN(test_writers_hostile);
	arena_free();
	UNIT_DONE();
}
