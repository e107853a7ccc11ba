// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A process whose "CPython" (the stand-in libpython3.11.so) holds what a
 * hostile or broken target could: --with-stack must stay bounded, count,
 * and never show a wrong line as right.  Each step runs the stand-in
 * libtorch's aten::linear inside a training_forward region.
 *
 *   py_hostile --torch LIB --python LIB MODE [--steps N]
 *   good       outer (/fake/model.py:20) -> inner (/fake/model.py:11)
 *   cycle      two frames that are each other's previous
 *   garbage    an unmapped f_code, a str as f_code, an instruction far
 *              past its code, a code object whose name is not a str
 *   huge       a line table of 2^40 bytes
 *   freed      the thread state is unmapped after the first step
 *   badlayout  the thread state does not point back at its interpreter
 *   version    Py_Version says 3.14
 * Prints "pid=", waits for SIGUSR1, runs the steps, prints "done", idles
 * until SIGTERM.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fvbpf/fvbpf.h"
#include "workload.h"

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
#define CO_FIRSTLINE 72
#define CO_FILENAME 112
#define CO_NAME 120
#define CO_QUALNAME 128
#define CO_LINETABLE 136
#define CO_CODE 184

static uint8_t *runtime, *code_type, *str_type, *bytes_type;

static void put(void *base, size_t off, const void *v)
{
	memcpy((uint8_t *)base + off, &v, sizeof(v));
}

static void *make_str(const char *text)
{
	uint8_t *s = calloc(1, 48 + strlen(text) + 1);
	uint64_t len = strlen(text);
	uint32_t state = 0x20 | 0x40 | (1 << 2);

	put(s, 8, str_type);
	memcpy(s + 16, &len, 8);
	memcpy(s + 32, &state, 4);
	memcpy(s + 48, text, len);
	return s;
}

/* A line table: @n entries of 8 code units, the first line +@delta. */
static void *make_table(int delta, uint64_t claimed)
{
	uint8_t *b = calloc(1, 64);
	uint64_t len = claimed ? claimed : 3;

	put(b, 8, bytes_type);
	memcpy(b + 16, &len, 8);
	b[32] = (uint8_t)(0x80 | ((10 + delta) << 3) | 7); /* one-line form: 8 units */
	b[33] = 0;
	b[34] = 1;
	return b;
}

static uint8_t *make_code(const char *file, const char *name, int first, int delta,
			  uint64_t claimed)
{
	uint8_t *c = calloc(1, 256);
	int32_t f = first;

	put(c, 8, code_type);
	memcpy(c + CO_FIRSTLINE, &f, 4);
	put(c, CO_FILENAME, make_str(file));
	put(c, CO_NAME, make_str(name));
	put(c, CO_QUALNAME, make_str(name));
	put(c, CO_LINETABLE, make_table(delta, claimed));
	return c;
}

static uint8_t *make_frame(void *code, void *instr, void *previous)
{
	uint8_t *f = calloc(1, 80);

	put(f, FR_CODE, code);
	put(f, FR_INSTR, instr);
	put(f, FR_PREVIOUS, previous);
	return f;
}

static int build(const char *mode)
{
	uint8_t *interp = calloc(1, 64), *cframe = calloc(1, 64), *ts, *inner, *outer;
	uint8_t *fi, *fo, *x;
	uint64_t tid = (uint64_t)gettid();

	ts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ts == MAP_FAILED)
		return -1;
	put(runtime, RT_INTERP_HEAD, interp);
	put(interp, IN_THREADS, ts);
	put(ts, TS_INTERP, strcmp(mode, "badlayout") ? (void *)interp : (void *)cframe);
	memcpy(ts + TS_NATIVE_TID, &tid, 8);
	put(ts, TS_CFRAME, cframe);
	inner = make_code("/fake/model.py", "inner", 10, 1, strcmp(mode, "huge") ? 0 : 1ull << 40);
	outer = make_code("/fake/model.py", "outer", 20, 0, 0);
	fo = make_frame(outer, outer + CO_CODE + 4, NULL);
	fi = make_frame(inner, inner + CO_CODE + 2, fo);
	if (!strcmp(mode, "cycle"))
		put(fo, FR_PREVIOUS, fi);
	if (!strcmp(mode, "garbage")) {
		/* innermost first: unmapped code, a str as code, an instruction
		 * far past its code, then a code object named by bytes */
		x = make_code("/fake/model.py", "named_by_bytes", 30, 0, 0);
		put(x, CO_QUALNAME, make_table(0, 0));
		put(x, CO_NAME, make_table(0, 0));
		fo = make_frame(x, x + CO_CODE, NULL);
		fo = make_frame(outer, outer + CO_CODE + (1u << 30), fo);
		fo = make_frame(make_str("not code"), NULL, fo);
		fi = make_frame((void *)0xdead000000ull, NULL, fo);
	}
	put(cframe, CF_CURRENT, fi);
	if (!strcmp(mode, "version"))
		*(unsigned long *)dlsym(RTLD_DEFAULT, "Py_Version") = 0x030e00f0;
	runtime[1000] = 0; /* keep the writes */
	return !strcmp(mode, "freed") ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "torch", required_argument, NULL, 't' },
		{ "python", required_argument, NULL, 'p' },
		{ "steps", required_argument, NULL, 's' },
		{ 0 },
	};
	const char *torch = NULL, *python = NULL;
	int (*linear)(void);
	void (*set_launch)(int (*)(void));
	void *ht, *hp, *ts;
	int c, steps = 3, i, freed;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 't')
			torch = optarg;
		else if (c == 'p')
			python = optarg;
		else if (c == 's')
			steps = atoi(optarg);
		else
			return 2;
	}
	if (!torch || !python || optind >= argc)
		return 2;
	ht = dlopen(torch, RTLD_NOW);
	hp = dlopen(python, RTLD_NOW | RTLD_GLOBAL);
	if (!ht || !hp) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	runtime = dlsym(hp, "_PyRuntime");
	code_type = dlsym(hp, "PyCode_Type");
	str_type = dlsym(hp, "PyUnicode_Type");
	bytes_type = dlsym(hp, "PyBytes_Type");
	linear = (int (*)(void))dlsym(ht, "_ZN2at4_ops6linear4callERKNS_6TensorES4_RKSt8optionalIS2_E");
	set_launch = (void (*)(int (*)(void)))dlsym(ht, "fake_torch_set_launch");
	if (!runtime || !code_type || !str_type || !bytes_type || !linear || !set_launch)
		return 1;
	set_launch(getpid);
	freed = build(argv[optind]);
	if (freed < 0)
		return 1;
	wl_start();
	if (wl_wait_go())
		return 1;
	for (i = 0; i < steps && !wl_stop; i++) {
		fvbpf_region_begin("training_forward");
		linear();
		fvbpf_region_end("training_forward");
		if (freed && i == 0) {
			memcpy(&ts, runtime + RT_INTERP_HEAD, sizeof(ts));
			memcpy(&ts, (uint8_t *)ts + IN_THREADS, sizeof(ts));
			munmap(ts, 4096); /* the thread state BPF cached is gone */
		}
		wl_sleep_ms(20);
	}
	printf("done\n");
	while (!wl_stop)
		wl_sleep_us(50000);
	return 0;
}
